// mmpi::mp::Send: the handle Channel::sendNoWait() returns. It finishes once
// the message is handed to the socket, which flow control delays while the
// peer leaves a high-water mark of earlier bytes unread (IoRequest has the calls).
#pragma once

#include <mmpi/mp/iorequest.h>

namespace mmpi::mp {
using Send = IoRequest<void>;
} // namespace mmpi::mp
