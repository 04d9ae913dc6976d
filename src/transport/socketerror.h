// Socket errno helpers shared by the native stream's read and write halves:
// which errors mean "try later", which mean the peer went away, and the
// LinkError that names the failed call.
#pragma once

#include <mmpi/core/error.h>

#include <cerrno>
#include <cstring>

namespace mmpi::detail {

inline bool wouldBlock(int error) { return error == EAGAIN || error == EWOULDBLOCK; }
inline bool peerGone(int error) { return error == ECONNRESET || error == EPIPE; }

inline Error ioError(const char *what, int error)
{
    return Error(ErrorCode::LinkError, QStringLiteral("%1 failed: %2")
                                           .arg(QLatin1StringView(what), QString::fromLocal8Bit(strerror(error))));
}

} // namespace mmpi::detail
