// Engine: the progress engine behind mmpi::World. It lives on the progress
// thread and owns the transport and every link. It runs the formation state
// machine (FormationState) for every way in, then routes
// frames between the app and the mesh, reconnects to peers whose links broke
// and resumes their streams (engineresume.cpp), and says goodbye on close.
#pragma once

#include "handshake.h"
#include "departurewatch.h"
#include "failuredetector.h"
#include "formationstate.h"
#include "outbox.h"
#include "peerstream.h"
#include "sendqueue.h"
#include "reassembler.h"

#include <mmpi/transport/transport.h>
#include <mmpi/world/world.h>

#include <QElapsedTimer>
#include <QHash>
#include <QHostAddress>
#include <QPointer>
#include <QSet>
#include <QTimer>

namespace mmpi::detail {

// How a link that ended with `reason` failed: Range for silence (a heartbeat
// timeout), Normal for anything else.
World::FailureClass failureClassOf(const Error &reason);

class Engine : public QObject
{
    Q_OBJECT
public:
    Engine(const WorldConfig &config, const QString &nodeId);
    ~Engine() override;

    void start();
    // What the transport says its medium is; fixed once the transport is open.
    LinkMedium expectedLink() const { return m_expectedLink; }
    // Made with the engine: where other threads post the frames to send.
    std::shared_ptr<SendQueue> sendQueue() const { return m_sends; }
    // Send what was posted to sendQueue(), in the order it was posted.
    void sendPosted();
    // One per rank (null for this node), made before formed() is emitted and
    // never changed after: another thread may read their positions once it
    // has heard of formed().
    QList<std::shared_ptr<const PeerStream>> streams() const { return m_streams; }
    // Made with the engine and never replaced; its quality() is thread-safe.
    std::shared_ptr<const FailureDetector> failureDetector() const { return m_detector; }
    void close();
    // Pause or resume reading from `rank`'s link (receiver flow control).
    void setReceiving(int rank, bool enabled);
    // Formed: look for a spare (a node advertising this world, not in one)
    // and offer it `rank`, a member this node has given up (REBUILD).
    // nodeRejoined(rank) or spareNotFound(rank) tells how it went.
    void inviteSpare(int rank);
    // The root of a world that confirms joins: admit the node of an open
    // join request, or turn it away (JoinRefused). A request that has ended
    // meanwhile is left alone (joinRequestEnded told of its end).
    void answerJoin(int requestId, bool confirmed);
    // Drop every link at once (destruction without close()).
    void shutdown();
    // Before start(): where large messages may be written as they arrive.
    void setMessagePlacement(MessagePlacement placement) { m_placement = std::move(placement); }
    // Before start(): told how far a placed message has come after each chunk but its last.
    using PlacedProgress = std::function<void(int rank, qint64 bytes)>;
    void setPlacedProgress(PlacedProgress progress) { m_placedProgress = std::move(progress); }

    // What this node knows of a peer; setPeerState() changes it.
    enum class PeerState {
        Absent,      // not linked yet, or (to a replacement) gone before it came
        Linking,     // dialled while forming; refusals are retried
        Linked,
        Unreachable, // its link broke: reconnecting within the grace period
        Resuming,    // a new link waits for the peer's Resume
        Left,        // said goodbye
        Lost,        // its link closed and was not made again, or it was given up
    };
    Q_ENUM(PeerState)

Q_SIGNALS:
    void stateChanged(mmpi::World::State state);
    void formationProgress(int joined, int expected);
    void discoveryProgress(int devicesSeen, int nodesFound, int secondsLeft);
    void discoveryStepStarted(mmpi::World::DiscoveryStep step);
    void discoveryStepGaveUp(mmpi::World::DiscoveryStep step, const mmpi::Error &reason);
    // `replacement`: this node took a lost member's rank in a formed world.
    void formed(int rank, const QList<mmpi::NodeInfo> &nodes, bool replacement);
    void failed(const mmpi::Error &error);
    void peerRefused(const QString &peer, const mmpi::Error &reason);
    // The frame is the receiver's to take (direct connections only): the
    // engine drops it afterwards, so its buffers need not be shared.
    void frameReceived(mmpi::Frame &frame);
    void nodeLeft(int rank);
    // A message from `rank` that was being written to a receiver's place
    // broke the protocol; nothing more is written there.
    void messageAbandoned(int rank, const mmpi::Error &reason);
    void nodeUnreachable(int rank, mmpi::World::FailureClass failureClass);
    void nodeReturned(int rank);
    void nodeLost(int rank, mmpi::World::FailureClass failureClass, const mmpi::Error &reason);
    void nodeSuspect(int rank);
    void nodeAlive(int rank);
    void linkQualityChanged(int rank);
    // A link to `rank` was made (formation, resume, rejoin): its handshake's
    // verification code, which the peer shows for this node too.
    void peerVerified(int rank, const QString &code);
    // A replacement node took the lost member's rank (REBUILD); `info` is its
    // identity. Its streams start afresh: nothing from the old node carries over.
    void nodeRejoined(int rank, const mmpi::NodeInfo &info);
    // inviteSpare(rank) ended without a spare taking the rank.
    void spareNotFound(int rank, const mmpi::Error &reason);
    // WorldConfig::confirmJoins: a node whose link is sealed waits for a
    // person to confirm it, and the request ends (engineconfirm.cpp).
    void joinRequested(int requestId, const QString &nodeId, const QString &address, const QString &code);
    void joinRequestEnded(int requestId);

private:
    using Step = FormationState::Step;
    struct Peer
    {
        // Linked, or being reconnected to: not given up (REBUILD waits for that).
        bool isMember() const { return state == PeerState::Linked || isReconnecting(); }
        bool isReconnecting() const { return state == PeerState::Unreachable || isResuming(); }
        bool isResuming() const { return state == PeerState::Resuming; }

        QPointer<Link> link;
        NodeInfo info;
        PeerState state = PeerState::Absent;
        std::shared_ptr<Outbox> outbox;
        std::shared_ptr<PeerStream> stream;
        bool receiving = true;
        MessagePlacement placement; // the receivers' places for this peer's messages (placeMessage)
        // Why this node closed the link itself (reported instead of the link's own error).
        Error closeReason;
        // Reconnection (engineresume.cpp): while reconnecting, frames for
        // the peer wait in the outbox; a new link waits for the peer's Resume.
        World::FailureClass failureClass = World::FailureClass::Normal;
        Error unreachableReason;
        QElapsedTimer unreachableFor;
        int attempt = 0;
        Error lastAttemptError; // why the last reconnection attempt failed
        QString verdict;        // why this node gave the peer up (told again on resumed links)
        int epoch = 0; // a new one per outage: stale timers see the change
        QPointer<Link> attemptLink; // a dial or probe under way
    };

    // set-up
    Result<void> openTransport();
    LocalIdentity identity() const;
    // The one place the step changes: logged with `reason`, and stateChanged()
    // when World's state follows.
    void setStep(Step step, const QString &reason);
    void setPeerState(Peer &peer, PeerState state, const QString &reason);
    // root side
    Result<void> admitToRoot(const PeerIdentity &peer) const;
    void handleJoinedRoot(Link *link, const PeerIdentity &peer);
    void handlePeerDiscovered(const PeerAdvert &advert);
    // Dials address `index` of `advert` (address, then its alternates).
    void contactDiscovered(const PeerAdvert &advert, int index);
    // Discovered worlds: the steps of WorldConfig::discoverySteps in turn,
    // each given up after its timeout for the next (enginediscovery.cpp).
    void startNextDiscoveryStep();
    // Starts `step` on this node; an error when it cannot (e.g. no interface).
    Result<void> beginDiscoveryStep(World::DiscoveryStep step);
    // Passed over without a word: the transport lacks it, or its input is missing.
    bool skipsDiscoveryStep(World::DiscoveryStep step) const;
    PeerAdvert ownAdvert() const;
    // A node's Address step: adverts to the typed IPv4 addresses at once,
    // to those of host names once looked up (handleRootAddressLookup).
    Result<void> beginAddressStep();
    void handleRootAddressLookup(int lookupId, const QString &name, const QList<QHostAddress> &found,
                                 const QString &why, quint16 port);
    // Adds `contacts` to those this node's adverts go straight to: JoinCode
    // and Address both wait for a person and run at once.
    Result<void> advertiseDirectlyTo(const QStringList &contacts);
    void handleDiscoveryStepTimeout();
    void giveUpDiscoveryStep(World::DiscoveryStep step, const Error &reason);
    void endDeadDiscoveryStep(World::DiscoveryStep step, const Error &reason);
    // A discovered root's announcement of its world, with `joined` nodes in.
    void announceWorld(int joined);
    // Ends every step's advertising, publishing, listening and browsing.
    void stopDiscoverySteps();
    Result<void> deriveJoinCodeKey();
    void handleCandidateJoined(Link *link, const PeerIdentity &peer);
    void seatJoined(Link *link, const PeerIdentity &peer);     // launched root: the rank is the node's
    void takeCandidate(Link *link, const PeerIdentity &peer);  // discovered root: ranked with the others
    int candidateSlotsTaken() const; // candidates and open join requests, with the root
    // joins a person confirms (engineconfirm.cpp)
    struct JoinRequest
    {
        int id = 0;
        QPointer<Link> link;
        PeerIdentity peer;
    };
    void requestConfirmation(Link *link, const PeerIdentity &peer);
    void refuseJoin(int requestId, JoinRefusal cause, const QString &reason);
    JoinRequest takeJoinRequest(int requestId); // id 0 when there is none
    // Ends the request: `notice` (if any) goes out on its link, which then closes.
    void dismissJoin(const JoinRequest &request, const std::optional<Frame> &notice, const QString &why);
    bool awaitsConfirmation(int rank) const;
    // The root stops taking joins (formed or failed): every open request ends with `notice`.
    void endJoinRequests(const Frame &notice, const QString &why);
    void handleJoinRefused(const Frame &frame);
    void checkDiscoveryWindow();
    void assignRanksAndSendTable();
    void sendRankTable();
    void handleMeshReady(int rank);
    // node side
    void connectToRoot();
    void handleRootHandshakeFailed(const Error &error);
    Result<void> admitToNode(const PeerIdentity &peer) const;
    void handleJoinedNode(Link *link, const PeerIdentity &peer);
    void handleRankTable(const Frame &frame);
    void dialMember(int rank);
    void checkMeshComplete();
    void attachAccepted(Link *link, const PeerIdentity &peer);
    void restartStreams(Peer &peer); // a new node in the rank: fresh numbering, empty queues
    std::shared_ptr<Outbox> newOutbox() const;
    // both
    void handleIncomingLink(Link *link);
    void attachPeer(int rank, Link *link, const NodeInfo &info);
    void handleOwnFrame(int rank, const Frame &frame);
    void handleLinkFrame(int rank, const Frame &frame);
    void handleControlFrame(int rank, const Frame &frame);
    void handleDataFrame(int rank, Frame frame); // by value: frameReceived may take it
    void handleFragment(int rank, const Frame &fragment);
    void handleLinkClosed(int rank, Link *link);
    void connectLink(int rank, Link *link);
    // `done` (may be empty) runs on this thread once the frame is on its way.
    // `whenDeparted`: once it has left this node (DepartureWatch).
    void sendFrame(int destination, Frame frame, SendCallback done, bool whenDeparted = false);
    // Close the link to `rank` because of something the peer did (or did not do).
    void closeLink(int rank, const Error &reason);
    // The receiver's buffer for a message from `rank` (MessagePlacement), if
    // this world may put it there now.
    char *placeMessage(int rank, const FrameHeader &header, qint64 bytes) const;
    // Before the sink hears that `rank` is gone: its message in progress may
    // be being written to a receiver's buffer, which must not happen after.
    void abandonMessageFrom(int rank);
    void pump(int rank);
    void handleAck(int rank, const Frame &frame);
    // Send the peer an Ack of everything received from it, if anything new.
    void sendAck(int rank);
    void sendAcks();
    // reconnection and resume (engineresume.cpp)
    bool tryReconnect(int rank, const Error &reason);
    void scheduleAttempt(int rank);
    void attemptReconnect(int rank);
    void dialPeer(int rank);
    void probePeer(int rank);
    void handleAttemptFailed(int rank, const Error &error);
    void handleResumeRefused(Link *link, const Error &error);
    Result<void> admitResume(const PeerIdentity &peer) const;
    void handleResumeLink(Link *link, const PeerIdentity &peer);
    void resumeOn(int rank, Link *link);
    void handleResume(int rank, const Frame &frame);
    // Who decided that a member is gone: this node (every member is told),
    // another member (the member itself is told, if linked here), or nobody
    // else needs to know (this node leaves, or was given up itself).
    enum class Verdict { Ours, Told, Local };
    void giveUp(int rank, World::FailureClass failureClass, const Error &reason, Verdict verdict = Verdict::Ours);
    void announceGiveUp(int rank, const Error &reason, Verdict verdict);
    void retellVerdicts(int rank);
    void handleGraceEnded(int rank, int epoch, bool waitedForLower);
    void handleGivenUp(int from, const Frame &frame);
    void stopReconnecting(Peer &peer);
    // rejoining a formed world in a lost member's place (enginerejoin.cpp)
    Result<void> admitRejoin(const PeerIdentity &peer) const;
    Result<void> admitFellowReplacement(const PeerIdentity &peer) const;
    Result<void> lowerRankDials(const Peer &known, int rank) const;
    QString contactAddress() const; // the member a replacement joins through now
    void nextContact();
    bool handleLossWhileRejoining(int rank, const Error &reason);
    void forgetMember(int rank, const Error &reason);
    void handleRejoinNotice(const Frame &frame);
    void dialFellow(int rank); // formed, rejoined: to a new node told of by a member
    void handleRejoinLink(Link *link, const PeerIdentity &id);
    void handleSpareAdvert(const PeerAdvert &advert);
    void offerRank(int rank, const PeerAdvert &spare);
    void handleInviteTimeout();
    void stopInviting();
    RankTable currentRankTable() const;
    void reportAbsentMembers();
    void ensurePeerState(int rank);
    void handleHeartbeat(int rank, const Frame &frame);
    void reportArrivalRate(int rank, Link *link, double bytesPerSecond);
    void handleHeartbeatCheck();
    void startFailureDetector();
    void handleRefused(Link *link, const Error &error);
    // Keeps a handshake's WorldKeyMismatch for the formation's own error.
    void noteKeyMismatch(const Error &error);
    void detachLink(Peer &peer);
    // Detach the peer's link, close it and delete it later, reporting nothing.
    void discardLink(Peer &peer);
    qint64 linkHighWater() const;
    // `graceOver`: a node linked to its contact has waited RootAbortGrace more.
    void handleDeadline(bool graceOver);
    // Why a node without a world key was refused, or nothing.
    QString describeMissingKey() const;
    QString describeMissing() const;
    QString describeOpenJoinRequests() const; // "" when none, else "; …" to follow describeMissing()
    int linkedCount() const;
    void becomeFormed();
    void fail(const Error &error);
    void checkCloseDone();
    void handleCloseTimeout();
    quint64 closeProgress() const;
    void finishClose();
    void dropAllLinks();
    void deliverLocally(const Frame &frame);
    void retryLater(int &attempt, std::function<void()> action);

    WorldConfig m_config;
    MessagePlacement m_placement;
    PlacedProgress m_placedProgress;
    QString m_nodeId;
    FormationState m_formation;
    World::State m_state = World::State::Idle; // m_formation's, as World sees it
    Transport *m_transport = nullptr;
    LinkMedium m_expectedLink = LinkMedium::wifi();
    QString m_listenAddress;
    int m_rank = NoRank;
    int m_size = 0;
    QList<Peer> m_peers; // by rank, once the size is known
    QList<std::shared_ptr<const PeerStream>> m_streams;
    std::shared_ptr<SendQueue> m_sends = std::make_shared<SendQueue>();

    // root, discovered: adverts being contacted or refused, authenticated candidates
    QSet<QString> m_contacted;
    // Whether this root has heard any advert of its world yet (any step).
    bool m_heardAdvert = false;
    // The fallback chain: the step running last, into discoverySteps,
    // whether the root's beacon listener is on (Beacon and JoinCode share it),
    // and how many begun steps could still bring a peer (a step that timed
    // out still does; an Address step whose every name failed does not).
    qsizetype m_discoveryStep = -1;
    bool m_beaconListening = false;
    int m_liveSteps = 0;
    // node: where its adverts go straight to (JoinCode, Address); the
    // Address step's host name lookups still open, why those that failed
    // did, and whether any typed address was found (else it gives up).
    QStringList m_directContacts;
    QList<int> m_rootAddressLookups;
    QStringList m_rootAddressMisses;
    bool m_rootAddressFound = false;
    QList<std::pair<QPointer<Link>, PeerIdentity>> m_candidates;
    QSet<int> m_meshReady;
    // root, confirmJoins: sealed joins waiting for a person's answer
    QList<JoinRequest> m_joinRequests;
    int m_lastJoinRequest = 0;
    // node
    QList<std::pair<QPointer<Link>, PeerIdentity>> m_earlyMeshLinks;
    QString m_lastRootError;
    // The rank this node joined through: the root, or whichever survivor a
    // replacement of rank 0 reached at WorldConfig::rootAddress.
    int m_contact = 0;
    // A member looking for spares (inviteSpare): the ranks still offered,
    // and the spares already asked (each is asked once per search).
    QSet<int> m_invited;
    QSet<QString> m_sparesAsked;
    int m_rootAttempts = 0;
    int m_contactIndex = 0; // into rootAddress + WorldConfig::rejoinContacts
    QString m_lastRejoinError;
    // Links refused while forming because the other end holds another world
    // key, and the last such refusal: a formation that then runs out of time
    // fails with WorldKeyMismatch, saying so, instead of only naming who is missing.
    int m_keyMismatches = 0;
    Error m_keyMismatch;
    QHash<int, int> m_meshAttempts;
    // frames that arrive between a peer's Start and ours
    QList<Frame> m_earlyFrames;
    qint64 m_earlyBytes = 0;

    QTimer m_deadline;
    QTimer m_discoveryTimer;
    // The fallback chain (enginediscovery.cpp): the current step's time alone.
    QTimer m_stepTimer;
    QTimer m_closeTimer;
    quint64 m_closeProgress = 0; // closeProgress() when m_closeTimer last started
    QTimer m_flushTimer;
    QTimer m_heartbeatTimer;
    QTimer m_ackTimer;
    QTimer m_inviteTimer; // active while this node looks for spares
    QElapsedTimer m_clock;
    std::shared_ptr<FailureDetector> m_detector;
    DepartureWatch *m_departures; // a child
};

} // namespace mmpi::detail
