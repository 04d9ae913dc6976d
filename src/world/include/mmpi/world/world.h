// mmpi::World: this node's membership in a world. form() joins or builds the
// world (launched by mmpirun or by discovery), then frames flow to and from
// every rank over a full mesh of authenticated links. The progress thread owns
// every link (docs/index.md, "Threads"); World lives in the caller's thread, its
// signals arrive there, and sendFrame() may be called from any thread.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/transport/linkmedium.h>
#include <mmpi/wire/frame.h>
#include <mmpi/world/worldconfig.h>

#include <QList>
#include <QObject>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

namespace mmpi {

struct NodeInfo
{
    int rank = NoRank;
    QString nodeId;
    QString address; // where the node listens
    bool operator==(const NodeInfo &) const = default;
};

struct LinkQuality;
class WorldPrivate;
namespace detail {
class Engine;
} // namespace detail

// Receives this node's Data frames and peer departures on the progress thread,
// before any signal, so that a thread blocked waiting for a message still
// hears of it (the communicator layer's matcher implements this). Every call
// comes from the progress thread; it must be thread-safe with respect to the
// caller's own use of it.
class MessageSink
{
public:
    virtual ~MessageSink();
    virtual void handleFrame(const Frame &frame) = 0;
    // handleFrame() for a frame no one else holds, which the sink may keep
    // without sharing its buffers (a reduction then writes its result over
    // the received bytes). Default: handleFrame().
    virtual void takeFrame(Frame &&frame);
    // When a large message that starts with
    // `header` and holds `bytes` bytes of fixed-size items begins to arrive,
    // and again before each later chunk until it has one: a buffer of that
    // many bytes it may be written to as it comes (a blocking receive that
    // matches it now, MPI-style; what came before is copied there first), or
    // nullptr to get it in a Frame of its own. The message then reaches
    // handleFrame() with the flag PlacedPayload and no payload, or, if the
    // peer is lost first, never: handlePeerGone() comes, and nothing is
    // written there any more. A message whose link broke while it was
    // written to the place comes again whole once the link is resumed, with
    // the same header.sequence: it must get the same place. Default: nullptr.
    virtual char *placeFor(const FrameHeader &header, qint64 bytes);
    // The message from `rank` that placeFor() gave a place will not complete
    // (it broke the protocol: a malformed or mismatched chunk); nothing more
    // is written there. Default: nothing to do.
    virtual void handleMessageAbandoned(int rank, const Error &reason);
    // Progress thread, after each chunk but the last of the message from
    // `rank` that placeFor() gave a place: its first `bytes` bytes are there,
    // so the receiver may start on them. Default: nothing to do.
    virtual void handlePlacedProgress(int rank, qint64 bytes);
    // The peer left (goodbye) or was lost; no more frames come from it.
    virtual void handlePeerGone(int rank, const Error &reason) = 0;
    // A replacement node took a gone peer's rank (World::nodeRejoined):
    // frames come from that rank again. Default: nothing to do.
    virtual void handlePeerRejoined(int rank);
};

// Runs on the progress thread once a frame handed to sendFrame() is on its
// way to the operating system (NoError), or will never be (the link is gone).
using SendCompletion = std::function<void(const Error &)>;

class World : public QObject
{
    Q_OBJECT
    Q_PROPERTY(State state READ state NOTIFY stateChanged)
    Q_PROPERTY(int rank READ rank NOTIFY formed)
    Q_PROPERTY(int size READ size NOTIFY formed)
    Q_PROPERTY(QString errorString READ errorString NOTIFY errorOccurred)
public:
    enum class State {
        Idle,    // not yet asked to form
        Forming, // finding nodes, authenticating, building the mesh
        Formed,  // every rank is linked to every other; frames flow
        Closing, // saying goodbye to the peers
        Closed,  // left the world cleanly
        Failed,  // formation failed; error() says why
    };
    Q_ENUM(State)

    // How this node sees a peer, from its links and the failure detector
    // (docs/fault-tolerance.md). Each change has its signal.
    enum class NodeStatus {
        Alive,   // heard from within half the heartbeat timeout
        Suspect, // silent for half the heartbeat timeout (nodeSuspect)
        Unreachable, // its link broke or it fell silent; reconnecting (nodeUnreachable)
        Left,    // said goodbye (nodeLeft)
        Lost,    // gone for good (nodeLost)
    };
    Q_ENUM(NodeStatus)

    // Why a peer could not be reached, as the MMPI paper classes failures
    // (docs/fault-tolerance.md#failure-classes).
    enum class FailureClass {
        Normal,   // its link failed (an I/O error): reconnect at once
        Range,    // it fell silent (out of range, asleep): retry with backoff
        NodeTerm, // its app ended: refused reconnection, or the grace period ran out
    };
    Q_ENUM(FailureClass)

    // The steps of a discovered world's search, in the order of
    // WorldConfig::discoverySteps (docs/guide/transports.md, "Join codes"):
    // DnsSd, Beacon, JoinCode, Address. A Q_ENUM of WorldConfig, which lists them.
    using DiscoveryStep = WorldConfig::DiscoveryStep;

    // When a send's completion runs: once its link has taken the frame, or
    // once the frame has left this node (Link::unsentBytes(): the kernel
    // takes a large write at once and sends it when the radio can). A node
    // that forwards copies to several peers on one radio waits for the
    // second (docs/design/broadcast.md, "Forwarding").
    enum class Completion { Handed, Departed };
    Q_ENUM(Completion)

    explicit World(QObject *parent = nullptr);
    ~World() override;

    // Start forming. Progress arrives as formationProgress(); the outcome as
    // formed() or errorOccurred() with state Failed. Calling form() twice is a
    // BadConfiguration error.
    void form(const WorldConfig &config);
    // Leave the world: say goodbye to every peer, wait (up to the configured
    // close timeout) for theirs, then close. stateChanged(Closed) when done.
    void close();

    State state() const;
    int rank() const; // NoRank until formed
    int size() const; // 0 until formed
    Error error() const;
    QString errorString() const;
    // This node's identity for this run and where it listens.
    QString nodeId() const;
    // Every node of the formed world, by rank.
    QList<NodeInfo> nodes() const;

    // Send a frame to `destination` (which may be this node). Source and
    // destination are filled in. Thread-safe: the frame is posted to the
    // progress thread, which writes it. Errors: NotFormed, InvalidRank.
    // Frames to one peer keep their order per (communicator, tag); a message
    // larger than WorldConfig::chunkSize travels in chunks, and smaller
    // frames may overtake it between chunks. `done` (optional) reports when
    // the frame has left, as `when` says. The payload may borrow the caller's memory
    // (mmpi::isBorrowed(): a QByteArray::fromRawData() view): it is copied
    // before this returns, unless the frame names its owner (Frame::owner),
    // which keeps it.
    Result<void> sendFrame(int destination, Frame frame, SendCompletion done = {},
                           Completion when = Completion::Handed);

    // Flow control for receivers (thread-safe): stop or resume reading frames
    // from `rank`'s link. While paused, the peer's frames wait in its socket
    // and its sends slow down once the buffers between are full.
    void setReceiving(int rank, bool enabled);
    // The configuration given to form().
    WorldConfig config() const;
    // Whether this node took a lost member's rank in a world that was
    // already formed: launched with WorldConfig::rejoin, or a spare a
    // member invited (inviteSpare()). False until formed.
    bool isReplacement() const;

    // REBUILD with a spare: look for a node that advertises this world and
    // is in none (a Discovered node that no root has taken yet) and offer it
    // `rank`, a member this node has given up. It then rejoins in that rank
    // like a launched replacement (nodeRejoined(rank) on every member).
    // Discovery runs until every offered rank is taken, or for
    // WorldConfig::discoveryTimeout: then spareNotFound(rank, reason). Also
    // spareNotFound at once if the rank is still a member or the transport
    // cannot discover. Thread-safe.
    void inviteSpare(int rank);

    // How the link to `rank` is doing: status, round-trip time and when the
    // node was last heard from. Thread-safe. Errors: NotFormed, InvalidRank
    // (also for this node's own rank, which has no link).
    Result<LinkQuality> linkQuality(int rank) const;
    // The six digits ("482 913") of this node's link to `rank`, which the
    // node in `rank` shows for its link to this one: a person who sees the
    // same digits on both devices knows no one sits between them
    // (docs/design/protocol.md, "Verification code"). A link made again
    // (resume, rejoin) has new keys and new digits: verificationCodeChanged.
    // Thread-safe. Errors: InvalidRank (no link to it yet, or this node).
    Result<QString> verificationCode(int rank) const;
    // The root of a world that confirms joins (WorldConfig::confirmJoins):
    // answer joinRequested(requestId, …). A confirmed node joins like any
    // other; a rejected one is told so and fails with JoinRejected, and the
    // world forms without it. Thread-safe. Errors: UnknownJoinRequest when
    // no such request is open (never made, or it has ended:
    // joinRequestEnded). An answer that crosses the request's end (its
    // timeout, the node going) changes nothing.
    Result<void> confirmJoin(int requestId);
    Result<void> rejectJoin(int requestId);

    // What the transport says its medium is (Transport::expectedLink()), the
    // link model to start from before any round trip is measured. Wi-Fi
    // until formed. Thread-safe.
    LinkMedium expectedLink() const;

    // How far the numbered frame streams with `rank` have come: the frames
    // (messages and their fragments) this node has sent it and received
    // from it, in order, since formation. A coordinated checkpoint compares
    // them to know that nothing is in flight. Thread-safe; nullopt if there
    // is no such peer.
    struct StreamPosition
    {
        quint64 sent = 0;
        quint64 received = 0;
    };
    std::optional<StreamPosition> streamPosition(int rank) const;

    // Route Data frames to `sink` (on the progress thread) instead of the
    // frameReceived() signal. Set it before form(); nullptr restores the signal.
    void setMessageSink(std::shared_ptr<MessageSink> sink);
    std::shared_ptr<MessageSink> messageSink() const;

    // Wait (running a local event loop) until the world is formed or failed.
    // Not on the GUI thread of an interactive app; tools and tests only.
    Result<void> waitForFormed();
    // close(), then wait (running a local event loop) until the world is
    // Closed: at most the configured close timeout and a little more. Same
    // audience as waitForFormed().
    void closeAndWait();

Q_SIGNALS:
    void stateChanged(mmpi::World::State state);
    void formationProgress(int joined, int expected);
    // The root of a discovered world, while it searches: what its transport
    // reports (Transport::discoveryProgress; -1 where it does not know).
    void discoveryProgress(int devicesSeen, int nodesFound, int secondsLeft);
    // A discovered world's node (root or not) began a step of its search.
    void discoveryStepStarted(mmpi::World::DiscoveryStep step);
    // A step heard nothing within its timeout (WorldConfig::dnsSdTimeout,
    // beaconTimeout): `reason` (DiscoveryTimedOut) says what was missing;
    // or it could not start (DiscoveryFailed, e.g. no interface to multicast
    // on, port 5353 taken, a transport that cannot send adverts to an
    // address, no typed root address that resolves to an IPv4 one).
    // Formation goes on with the next step, if any, within formationTimeout.
    void discoveryStepGaveUp(mmpi::World::DiscoveryStep step, const mmpi::Error &reason);
    void formed();
    void errorOccurred(const mmpi::Error &error);
    // A peer was refused: WorldKeyMismatch when it holds another world key
    // than this node (either one may be the wrong one: a formation that
    // then runs out of time fails with WorldKeyMismatch too), otherwise a bad
    // claim or malformed input (AuthenticationFailed, ProtocolViolation),
    // SealingUnsupported for an older MMPI that cannot seal links, and
    // RecordRefused when a linked peer's sealed record was altered,
    // replayed, reordered or dropped on the way (the link then breaks, and
    // the world reconnects and resumes as for any broken link).
    void peerRefused(const QString &peer, const mmpi::Error &reason);
    // A Data frame for this node (when no MessageSink is set).
    void frameReceived(const mmpi::Frame &frame);
    // A peer said goodbye (its app is ending cleanly).
    void nodeLeft(int rank);
    // A peer's link broke without a goodbye (Normal), or the peer was silent
    // for the whole heartbeat timeout (Range). The world reconnects to it for
    // WorldConfig::reconnectGracePeriod; nothing sent to it is lost meanwhile.
    void nodeUnreachable(int rank, mmpi::World::FailureClass failureClass);
    // An unreachable peer is linked again; the streams both ways resumed
    // where they broke, every message delivered exactly once.
    void nodeReturned(int rank);
    // A peer is gone for good (class NodeTerm: its app ended, or it stayed
    // unreachable for the grace period; Normal or Range when reconnection is
    // off, reconnectGracePeriod 0). `reason` says which, e.g. "no link to
    // rank 2 again within the 30000 ms grace period".
    void nodeLost(int rank, mmpi::World::FailureClass failureClass, const mmpi::Error &reason);
    // A peer has been silent for half the heartbeat timeout: it may be gone
    // (nodeLost follows at the timeout) or only slow. Status Suspect.
    void nodeSuspect(int rank);
    // A suspect peer was heard from again before the timeout. Status Alive.
    void nodeAlive(int rank);
    // linkQuality(rank) changed: a new round trip, or a new status.
    void linkQualityChanged(int rank);
    // A new node took the rank of a member this node had lost (it was
    // started with WorldConfig::rejoin; REBUILD). nodes() lists it now. It
    // starts with nothing of the old node's messages or state: frames sent
    // to the old node and not received are gone, and the app restores the
    // rank's state from a checkpoint (docs/fault-tolerance.md#rebuild).
    void nodeRejoined(int rank);
    // verificationCode(rank) is new: a link to `rank` was made or made again.
    void verificationCodeChanged(int rank);
    // inviteSpare(rank) found no spare that took the rank (reason says why).
    void spareNotFound(int rank, const mmpi::Error &reason);
    // WorldConfig::confirmJoins, on the root: node `nodeId` at `address` has
    // proven the world key and waits for confirmJoin(requestId) or
    // rejectJoin(requestId). `verificationCode` is the one the joining
    // device shows (its verificationCode(0)): a person confirms only if the
    // two match. Other nodes join meanwhile.
    void joinRequested(int requestId, const QString &nodeId, const QString &address,
                       const QString &verificationCode);
    // The request is settled: confirmed, rejected, not answered within
    // WorldConfig::confirmTimeout, the node went, or the formation ended.
    void joinRequestEnded(int requestId);

private:
    void handleEngineState(State state);
    void connectEngineTraffic(detail::Engine *engine);
    void connectJoinRequests(detail::Engine *engine);
    Result<void> answerJoin(int requestId, bool confirmed);

    std::unique_ptr<WorldPrivate> d;
};

// A snapshot of one peer's link, from World::linkQuality().
struct LinkQuality
{
    int rank = NoRank;
    World::NodeStatus status = World::NodeStatus::Alive;
    // Since anything (a message, a heartbeat, an echo) last arrived from the
    // peer, at the time of the call.
    std::chrono::milliseconds sinceHeard{0};
    // Round trip of a heartbeat and its echo: the latest, and smoothed as TCP
    // does (RFC 6298: 7/8 of the old value plus 1/8 of the new sample).
    // Negative until the first echo. Measured only while the link is idle
    // enough to carry heartbeats; a busy link keeps its last values.
    std::chrono::microseconds roundTrip{-1};
    std::chrono::microseconds smoothedRoundTrip{-1};
    // The smallest of the last 8 round trips: the link itself, without what
    // a heartbeat or its echo waited behind on a busy radio (a 64 KiB
    // message ahead of it on 90 kB/s Bluetooth adds 0.7 s).
    std::chrono::microseconds minRoundTrip{-1};
    quint64 roundTripSamples = 0;
    // Bytes per second that left this node for the peer while its link had
    // bytes waiting all along (a large message draining), smoothed as the
    // round trip is; 0 until 16 KiB waiting in the link have gone. One
    // radio serves all of a node's links: while several drain at once, each
    // measures its share.
    double sendRate = 0;
    quint64 sendRateSamples = 0;
    // Bytes per second the peer's frames arrived at here while one was in
    // flight (Link::arrivalRateMeasured), the highest of the last 8 (a
    // frame that shared the peer's radio with others arrives at its share
    // only); and what the peer last reported of this node's frames arriving
    // there. A frame of a few packets leaves the kernel at once, so its far
    // end is the only one that sees the radio's rate; 0 until measured.
    double arrivalRate = 0;
    quint64 arrivalRateSamples = 0;
    double peerArrivalRate = 0;
    quint64 peerArrivalRateReports = 0;
    // The rate to plan with, in bytes per second, 0 while unknown: the
    // drain this node timed itself, which covers tens of KiB, or else the
    // peer's report, which a few packets (a fresh world's rate probe) make.
    double measuredRate() const
    {
        if (sendRateSamples > 0 && sendRate > 0)
            return sendRate;
        return peerArrivalRateReports > 0 ? peerArrivalRate : 0.0;
    }
    // Heartbeat requests this node sent to the peer, and received from it.
    quint64 heartbeatsSent = 0;
    quint64 heartbeatsReceived = 0;
};

} // namespace mmpi

Q_DECLARE_METATYPE(mmpi::NodeInfo)
Q_DECLARE_METATYPE(mmpi::LinkQuality)
