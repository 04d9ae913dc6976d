// The state of a posted receive: what it waits for, on top of its outcome.
// The group keeps it on its pending list until a message matches.
#pragma once

#include "iorequeststate.h"

#include <mmpi/mp/receive.h>
#include <mmpi/mp/receivespec.h>

namespace mmpi::mp::detail {

class ReceiveState : public IoRequestState<Received>
{
public:
    explicit ReceiveState(ReceiveSpec spec) : spec(spec) {}

    ReceiveSpec spec;
};

} // namespace mmpi::mp::detail
