// mmpi::mp::Receive: the handle ChannelGroup::receive() returns, finishing
// with the Received message or an error (IoRequest has the calls).
#pragma once

#include <mmpi/mp/iorequest.h>
#include <mmpi/mp/received.h>

namespace mmpi::mp {
using Receive = IoRequest<Received>;
} // namespace mmpi::mp
