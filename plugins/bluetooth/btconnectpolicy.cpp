#include "btconnectpolicy.h"

#include <algorithm>
#include <cerrno>

namespace mmpi {

std::optional<int> BtConnectPolicy::retryDelay(Failure failure, int attempt, bool peerKnown) const
{
    if (failure == Failure::Fatal || attempt < 1)
        return std::nullopt;
    int allowed = retries;
    if (failure == Failure::Refused && peerKnown)
        allowed = std::min(retries, 1);
    if (attempt > allowed)
        return std::nullopt;
    const int shift = std::min(attempt - 1, 8);
    return std::min(maxBackoffMs, firstBackoffMs << shift);
}

BtConnectPolicy::Failure BtConnectPolicy::classifyErrno(int error)
{
    switch (error) {
    case ECONNREFUSED:
        return Failure::Refused;
    case EHOSTDOWN:
    case EHOSTUNREACH:
    case ENETDOWN:
    case ENETUNREACH:
    case ETIMEDOUT:
    case ENODEV:
        return Failure::Unreachable;
    case EBUSY:
    case EAGAIN:
    case ECONNRESET:
    case ECONNABORTED:
    case EACCES:   // authentication failed or was rejected: pairing may succeed next time
    case EPERM:
    case EBADE:    // key exchange failed
    case EIO:
        return Failure::Transient;
    default:
        return Failure::Fatal;
    }
}

ErrorCode BtConnectPolicy::errorCodeFor(Failure failure)
{
    return failure == Failure::Refused ? ErrorCode::ConnectionRefused : ErrorCode::ConnectFailed;
}

} // namespace mmpi
