// Control messages of world formation (Control frames; the tag holds the
// ControlType, the payload a QDataStream record). Decoding is strict: a record
// that does not parse exactly, or has a bad nonce or MAC size, is an error.
// Byte layouts are in docs/design/protocol.md.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/wire/frame.h>

#include <QList>
#include <QString>

namespace mmpi::detail {

enum class ControlType : qint32 {
    // The unsealed handshake of MMPI before sealed links: recognised only to
    // refuse such a peer with SealingUnsupported, saying why.
    UnsealedChallenge = 1,
    UnsealedResponse = 2,
    UnsealedAccept = 3,
    Refuse = 4,    // either way: why the link is refused; then close
    RankTable = 5, // root -> node: ranks, node ids and listen addresses
    MeshReady = 6, // node -> root: links to every rank are up
    Start = 7,     // root -> node: the world is formed
    Abort = 8,     // root -> node: formation failed, with the reason
    Resume = 9,    // either way, first on a reconnected link: what I received
    KeyMismatch = 10, // acceptor -> connector: your key proof does not match my key; then close
    Rejoined = 11,    // member -> members: a new node took a lost rank (its entry)
    // The sealed handshake (docs/design/protocol.md, "Handshake"):
    Challenge = 12, // acceptor -> connector: who I am, my nonce, my X25519 public key
    Response = 13,  // connector -> acceptor: my nonce, my proof, who I am, my X25519 public key
    Accept = 14,    // acceptor -> connector: my proof; from here on every frame is sealed
    GivenUp = 15,   // member -> members: I gave this member up; so do you
    JoinRefused = 16, // root -> joiner, instead of a rank table: not admitted, and why; then close
};
constexpr ControlType LastControlType = ControlType::JoinRefused;

// Resume: a formed world's link to a peer, made again after it broke.
// Rejoin: a replacement for a lost member, linking to each survivor (REBUILD);
// RejoinVia: its first such link, to the member that answers with the rank
// table (the root, or any survivor when rank 0 itself is replaced).
// Invite: a member offers a spare (a node advertising the world) a lost
// member's rank; the spare then rejoins like a replacement.
enum class LinkPurpose : quint8 { Join = 1, Mesh = 2, Resume = 3, Rejoin = 4, RejoinVia = 5, Invite = 6 };

inline bool isRejoin(LinkPurpose purpose)
{
    return purpose == LinkPurpose::Rejoin || purpose == LinkPurpose::RejoinVia;
}

// The member at the other end sends the replacement the rank table.
inline bool startsRejoin(LinkPurpose purpose)
{
    return purpose == LinkPurpose::RejoinVia || purpose == LinkPurpose::Invite;
}

constexpr int NonceSize = 32;
constexpr int MacSize = 32; // HMAC-SHA256
constexpr int PublicKeySize = 32; // X25519
constexpr int MaxControlPayload = 64 * 1024;

struct Challenge
{
    static constexpr ControlType type = ControlType::Challenge;
    QString worldName;
    QString nodeId;
    QByteArray nonce;
    QByteArray publicKey;
};

struct Response
{
    static constexpr ControlType type = ControlType::Response;
    LinkPurpose purpose = LinkPurpose::Join;
    QByteArray nonce;
    QByteArray mac;
    QString nodeId;
    qint32 rank = NoRank;
    QString listenAddress;
    QByteArray publicKey;
};

struct Accept
{
    static constexpr ControlType type = ControlType::Accept;
    QByteArray mac;
    qint32 rank = NoRank;
    QString listenAddress;
};

struct Refuse
{
    static constexpr ControlType type = ControlType::Refuse;
    QString reason;
};

// A Refuse that says why in a way the connector can act on: the two ends
// hold different world keys. It carries nothing, in particular no proof of
// the acceptor's key: a MAC over known nonces, given to a peer that has not
// proven the key, would let it test guesses of a passphrase-derived key
// offline.
struct KeyMismatch
{
    static constexpr ControlType type = ControlType::KeyMismatch;
};

struct RankEntry
{
    qint32 rank = NoRank;
    QString nodeId;
    QString address;
};

struct RankTable
{
    static constexpr ControlType type = ControlType::RankTable;
    QList<RankEntry> entries; // sorted by rank, entries[i].rank == i
};

struct MeshReady
{
    static constexpr ControlType type = ControlType::MeshReady;
};

struct Start
{
    static constexpr ControlType type = ControlType::Start;
};

struct Abort
{
    static constexpr ControlType type = ControlType::Abort;
    QString reason;
};

// The sequence number of the last frame the sender received in order from the
// receiver, so that the receiver replays exactly what came after it.
struct Resume
{
    static constexpr ControlType type = ControlType::Resume;
    quint64 received = 0;
};

// A new node took `entry.rank`: another new node that has no link to it yet
// dials it (replacements rejoining at overlapping times find each other).
struct Rejoined
{
    static constexpr ControlType type = ControlType::Rejoined;
    RankEntry entry;
};

// A member gave `nodeId` in `rank` up (its grace period ended, its app
// ended): every member gives it up too, so that all hold one membership, and
// the node itself learns that it is out of the world.
struct GivenUp
{
    static constexpr ControlType type = ControlType::GivenUp;
    qint32 rank = NoRank;
    QString nodeId;
    QString reason;
};

// Why the root of a world that confirms joins turned a joiner away: the
// joiner's World fails with the matching ErrorCode, chosen by this cause and
// never by the reason's text.
enum class JoinRefusal : quint8 {
    Rejected = 1,     // a person said no (JoinRejected)
    NotConfirmed = 2, // nobody said yes in time, or the world formed without it (JoinNotConfirmed)
};

struct JoinRefused
{
    static constexpr ControlType type = ControlType::JoinRefused;
    JoinRefusal cause = JoinRefusal::Rejected;
    QString reason;
};

// The control type of a Control frame, or ProtocolViolation.
Result<ControlType> controlType(const Frame &frame);

template<typename Message>
Frame encodeControl(const Message &message);

// Decode a Control frame known to be of Message::type.
template<typename Message>
Result<Message> decodeControl(const Frame &frame);

} // namespace mmpi::detail
