// mmpi::Error: the typed error every MMPI layer reports, a code plus a message
// written for the person reading the log. Codes are grouped by layer so a log
// line tells at once where something went wrong.
#pragma once

#include <QMetaType>
#include <QObject>
#include <QString>

namespace mmpi {
Q_NAMESPACE

enum class ErrorCode {
    NoError = 0,
    // wire
    BadMagic,
    BadVersion,
    BadFrameKind,
    BadItemType,
    BadHeader,
    CountMismatch,
    FrameTooLarge,
    BufferLimitExceeded,
    TruncatedPayload,
    TypeMismatch,
    // transport
    UnknownTransport,
    PluginLoadFailed,
    BadAddress,
    ListenFailed,
    ConnectFailed,
    // Nothing listens at the address: the peer's app is not running there.
    ConnectionRefused,
    LinkClosed,
    LinkError,
    DiscoveryFailed,
    // world
    BadConfiguration,
    AuthenticationFailed,
    // The two ends of a link hold different world keys: one's key proof does
    // not match the other's key (a node or the root was given the wrong key).
    WorldKeyMismatch,
    // A peer left the world: it said goodbye (World::nodeLeft), it was not lost.
    PeerLeft,
    ProtocolViolation,
    FormationTimeout,
    NotFormed,
    InvalidRank,
    Cancelled,
    // comm
    NodeLost,
    InvalidTag,
    Revoked, // the communicator was revoked (replaced after a failure)
    // ft
    CheckpointFailed, // writing a checkpoint failed; the previous one stays
    NoCheckpoint,     // no valid checkpoint to restore
    CheckpointInUse,  // another store holds the checkpoint directory's lock
    // comm, last so that the numbers before it (they travel in abort
    // messages) stay those of earlier builds
    Reconfigured, // abandoned: the world reconfigured after a failure (FaultTolerance); the communicator stays usable
    // transport: a device paired with before refused to pair again (BlueZ's
    // JustWorksRepairing policy): reconnection cannot succeed until the
    // devices bond or the policy allows it (docs/guide/bluetooth.md)
    PairingRefused,
    // sealed links (wire, transport, world), after the codes above for the same reason
    // A sealed record was refused: it failed authentication (altered, or
    // sealed with another key) or came out of order (replayed, reordered,
    // dropped). The link ends; the world reconnects and resumes.
    RecordRefused,
    // The peer speaks the unsealed handshake of an older MMPI: this node makes sealed links only.
    SealingUnsupported,
    // The cryptographic library failed (no memory, a cipher missing from its build).
    CryptoFailed,
    // world: a join code that is malformed or mistyped (mmpi::JoinCode::parse)
    BadJoinCode,
    // world: a step of discovery heard nothing within its timeout
    // (World::discoveryStepGaveUp says which step and why)
    DiscoveryTimedOut,
    // world: the root of a world that confirms joins (WorldConfig::confirmJoins)
    // turned this node away: a person rejected it (World::rejectJoin), or
    // nobody confirmed it within WorldConfig::confirmTimeout
    JoinRejected,
    JoinNotConfirmed,
    // world: World::confirmJoin() or rejectJoin() named no request that is open
    UnknownJoinRequest,
    // transport: a DNS message (multicast DNS, DNS-SD) refused as malformed
    // or beyond its limits (compression loops, oversized names or TXT
    // records, counts the message cannot hold, truncated records)
    BadDnsMessage,
};
// The highest code: error codes travel in collectives' abort messages.
constexpr ErrorCode LastErrorCode = ErrorCode::BadDnsMessage;
Q_ENUM_NS(ErrorCode)

// A failure with a machine-readable code and a human-readable reason.
struct Error
{
    ErrorCode code = ErrorCode::NoError;
    QString message;

    Error() = default;
    Error(ErrorCode c, QString msg) : code(c), message(std::move(msg)) {}

    bool isError() const { return code != ErrorCode::NoError; }
    // "FrameTooLarge: frame of 300 MiB exceeds the 256 MiB limit"
    QString toString() const;
    bool operator==(const Error &) const = default;
};

QString errorCodeName(ErrorCode code);

} // namespace mmpi

Q_DECLARE_METATYPE(mmpi::Error)
