// CommunicatorAccess: the comm layer's own way into Communicator — making
// handles from shared data and starting sends and receives as request states
// that collectives can chain on.
#pragma once

#include "communicatordata.h"

#include <mmpi/comm/intercommunicator.h>

namespace mmpi::detail {

class RequestState;

struct CommunicatorAccess
{
    static Communicator make(std::shared_ptr<const CommunicatorData> data) { return Communicator(std::move(data)); }
    static Intercommunicator makeInter(std::shared_ptr<const CommunicatorData> data)
    {
        return Intercommunicator(std::move(data));
    }
    static const std::shared_ptr<const CommunicatorData> &data(const Communicator &c) { return c.m_data; }

    static std::shared_ptr<RequestState> failedState(Error error);
    static std::shared_ptr<RequestState> isend(const CommunicatorData *d, int destination, int tag, Payload payload);
    static std::shared_ptr<RequestState> irecv(const std::shared_ptr<const CommunicatorData> &d, int source, int tag);
};

} // namespace mmpi::detail
