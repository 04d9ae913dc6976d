#include "btconnectpolicy.h"

#include <algorithm>
#include <cerrno>

namespace mmpi {

std::optional<int> BtConnectPolicy::retryDelay(Failure failure, int attempt, bool peerKnown) const
{
    if (failure == Failure::Fatal || attempt < 1)
        return std::nullopt;
    int allowed = retries;
    // A peer paired with before refuses to pair again for good (its policy):
    // one retry for a flaky stack. A first pairing can fail on a race.
    if (failure == Failure::AuthRejected && peerKnown)
        allowed = std::min(retries, 1);
    if (failure == Failure::Refused && peerKnown)
        allowed = std::min(retries, 3);
    if (attempt > allowed)
        return std::nullopt;
    const int shift = std::min(attempt - 1, 8);
    return std::min(maxBackoffMs, firstBackoffMs << shift);
}

int BtConnectPolicy::jittered(int delay, double random) const
{
    return std::max(1, int(delay * (1.0 + jitter * (2.0 * random - 1.0))));
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
    case EBADE:    // key exchange failed
    case EIO:
        return Failure::Transient;
    case EACCES:
    case EPERM:
        return Failure::AuthRejected;
    default:
        return Failure::Fatal;
    }
}

ErrorCode BtConnectPolicy::errorCodeFor(Failure failure, bool peerKnown)
{
    if (failure == Failure::Refused)
        return ErrorCode::ConnectionRefused;
    if (failure == Failure::AuthRejected && peerKnown)
        return ErrorCode::PairingRefused;
    return ErrorCode::ConnectFailed;
}

} // namespace mmpi
