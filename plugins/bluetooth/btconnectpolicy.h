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
    // Each delay is spread by up to this fraction either way (BtDialer), so
    // that two devices that page each other at once, and are both refused,
    // do not collide again on every retry.
    double jitter = 0.25;

    // Delay before attempt `attempt + 1` (attempt counts from 1), or nothing:
    // give up. `peerKnown`: a connect to this peer succeeded before. A
    // refusal from it is retried up to 3 times, about 2 s: long enough to
    // outlast the refusals of two bonded devices paging each other when one
    // comes back in range (the bt-vm rig's range soak gave a live node up
    // after 2 refused attempts in 1 run of 20), short enough that a peer
    // whose app ended is known well within the world's grace period.
    std::optional<int> retryDelay(Failure failure, int attempt, bool peerKnown) const;
    // `delay` spread by `jitter`, from `random` in [0, 1).
    int jittered(int delay, double random) const;

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
