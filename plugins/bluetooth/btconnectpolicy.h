// BtConnectPolicy: what an RFCOMM connect failure means and whether to try
// again. Linux refuses a connect that races the encryption key-size read of a
// fresh pairing ("security block", ECONNREFUSED like a closed channel), and
// phones fail connects intermittently, so refusals are retried with backoff
// before they are believed. Pure logic: unit-tested without a radio.
#pragma once

#include <mmpi/core/error.h>

#include <QMetaType>
#include <optional>

namespace mmpi {

class BtConnectPolicy
{
    Q_GADGET
public:
    // What a failed attempt says about the peer.
    enum class Failure {
        Refused,     // nothing accepted on the channel (or a security block)
        Unreachable, // no answer to the page, host down, our adapter off
        Transient,   // busy, reset, aborted: try again
        AuthRejected, // pairing or authentication refused (EACCES, EPERM)
        Fatal,       // bad arguments, no Bluetooth here: do not retry
    };
    Q_ENUM(Failure)

    int retries = 4;        // attempts after the first
    int firstBackoffMs = 300;
    int maxBackoffMs = 2400;

    // Delay before attempt `attempt + 1` (attempt counts from 1), or nothing:
    // give up. `peerKnown`: a connect to this peer succeeded before, so a
    // refusal is no pairing race; it is retried once only (a phone's flaky
    // stack), then reported so that a peer whose app ended is known quickly.
    std::optional<int> retryDelay(Failure failure, int attempt, bool peerKnown) const;

    // errno of a failed connect() -> failure class.
    static Failure classifyErrno(int error);
    // The ErrorCode a link reports once retries are exhausted: refused ->
    // ConnectionRefused (the world reads it as "the peer's app ended",
    // NODETERM); authentication refused by a peer paired with before ->
    // PairingRefused (its stack will not pair again: retrying cannot help);
    // everything else ConnectFailed (RANGE: it may come back).
    static ErrorCode errorCodeFor(Failure failure, bool peerKnown);
};

} // namespace mmpi
