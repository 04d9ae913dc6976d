#include "engine.h"

#include <mmpi/core/logging.h>
#include <mmpi/transport/sealedlink.h>
#include <mmpi/transport/transportregistry.h>
#include <mmpi/wire/framedecoder.h>

#include <QThread>

#include <algorithm>

namespace mmpi::detail {

namespace {

// Frames a peer may send between its Start and ours are held; more than this
// is not a race but a misbehaving peer.
constexpr qint64 MaxEarlyBytes = 64LL * 1024 * 1024;
// How long past its deadline a node linked to the root waits for the root's Abort.
constexpr std::chrono::milliseconds RootAbortGrace{2000};
// The longest a frame waits to be acknowledged when little traffic flows.
constexpr std::chrono::milliseconds AckDelay{20};

QString rankList(const QList<int> &ranks)
{
    QStringList parts;
    for (int r : ranks)
        parts << QString::number(r);
    return parts.join(QStringLiteral(", "));
}

Error refusal(const QString &message)
{
    return {ErrorCode::AuthenticationFailed, message};
}

bool isTransient(const Error &error)
{
    return error.code == ErrorCode::ConnectFailed || error.code == ErrorCode::ConnectionRefused
        || error.code == ErrorCode::LinkClosed
        || error.code == ErrorCode::LinkError;
}

// Whether a claimed listen address names no host a peer can dial
// ("tcp://0.0.0.0:port", "tcp://[::]:port").
bool isAnyListenAddress(const QString &address)
{
    return address.contains(QLatin1String("://0.0.0.0:")) || address.contains(QLatin1String("://[::]:"));
}

} // namespace

Engine::Engine(const WorldConfig &config, const QString &nodeId)
    : m_config(config)
    , m_nodeId(nodeId)
    , m_formation(FormationState::roleFor(config))
    // Parented so that moveToThread() takes the timers to the progress thread.
    , m_deadline(this)
    , m_discoveryTimer(this)
    , m_stepTimer(this)
    , m_closeTimer(this)
    , m_flushTimer(this)
    , m_heartbeatTimer(this)
    , m_ackTimer(this)
    , m_inviteTimer(this)
    , m_detector(std::make_shared<FailureDetector>(config.heartbeatInterval, config.heartbeatTimeout))
{
    // Connected before anyone else (slots run in connection order): a sink
    // that hears a peer is gone fails the receive its message was being
    // written into, and no byte may be written there after that.
    connect(this, &Engine::nodeLost, this, [this](int rank) { abandonMessageFrom(rank); });
    connect(this, &Engine::nodeLeft, this, &Engine::abandonMessageFrom);
    m_departures = new DepartureWatch(
        [this](int rank, double bytesPerSecond) {
            m_detector->noteSendRate(rank, bytesPerSecond);
            Q_EMIT linkQualityChanged(rank);
        },
        this);
    m_deadline.setSingleShot(true);
    connect(&m_deadline, &QTimer::timeout, this, [this] { handleDeadline(false); });
    m_inviteTimer.setSingleShot(true);
    connect(&m_inviteTimer, &QTimer::timeout, this, &Engine::handleInviteTimeout);
    m_discoveryTimer.setSingleShot(true);
    m_stepTimer.setSingleShot(true);
    // A step gives up no sooner than its timeout says (a coarse timer may
    // fire 5 % early: 2978 ms into a chain of 3000).
    m_stepTimer.setTimerType(Qt::PreciseTimer);
    connect(&m_stepTimer, &QTimer::timeout, this, &Engine::handleDiscoveryStepTimeout);
    connect(&m_discoveryTimer, &QTimer::timeout, this, &Engine::checkDiscoveryWindow);
    m_closeTimer.setSingleShot(true);
    connect(&m_closeTimer, &QTimer::timeout, this, &Engine::handleCloseTimeout);
    m_flushTimer.setInterval(10);
    connect(&m_flushTimer, &QTimer::timeout, this, &Engine::finishClose);
    connect(&m_heartbeatTimer, &QTimer::timeout, this, &Engine::handleHeartbeatCheck);
    // Acks of a trickle of frames; a busy link acks as a quarter of the
    // replay buffer arrives (PeerStream::accept).
    m_ackTimer.setInterval(AckDelay);
    connect(&m_ackTimer, &QTimer::timeout, this, &Engine::sendAcks);
}

Engine::~Engine() = default;

// ---------------------------------------------------------------- set-up

void Engine::start()
{
    m_clock.start();
    setStep(Step::OpeningTransport, m_config.transport);
    if (auto keyed = deriveJoinCodeKey(); !keyed)
        return fail(keyed.error());
    if (auto opened = openTransport(); !opened)
        return fail(opened.error());
    m_deadline.start(m_config.formationTimeout);
    const bool discovered = m_config.mode == WorldConfig::Mode::Discovered;
    m_size = discovered ? 0 : m_config.size;
    if (m_formation.formsAsRoot()) {
        m_rank = 0;
        if (!discovered)
            m_peers.resize(m_size);
        setStep(discovered ? Step::Discovering : Step::AwaitingJoins,
                QStringLiteral("root of world %1 listening at %2, expecting %3 nodes")
                    .arg(m_config.worldName, m_listenAddress)
                    .arg(m_config.size));
        if (m_config.size == 1)
            return discovered ? assignRanksAndSendTable() : sendRankTable();
        if (discovered) {
            connect(m_transport, &Transport::peerDiscovered, this, &Engine::handlePeerDiscovered);
            connect(m_transport, &Transport::serviceDiscovered, this, &Engine::handlePeerDiscovered);
            connect(m_transport, &Transport::discoveryProgress, this, &Engine::discoveryProgress);
            m_discoveryTimer.start(std::min(m_config.discoveryTimeout, m_config.formationTimeout));
            startNextDiscoveryStep();
            if (m_formation.step() != Step::Discovering)
                return; // no step could start
            announceWorld(1);
        }
        Q_EMIT formationProgress(1, m_config.size);
        return;
    }
    if (discovered) {
        m_rank = NoRank;
        setStep(Step::Advertising, QStringLiteral("node %1 advertising world %2 at %3")
                                       .arg(m_nodeId, m_config.worldName, m_listenAddress));
        return startNextDiscoveryStep();
    }
    m_rank = m_config.rank;
    m_peers.resize(m_size);
    setStep(Step::ContactingRoot, QStringLiteral("joining through %1").arg(contactAddress()));
    connectToRoot();
}

Result<void> Engine::openTransport()
{
    auto transport = TransportRegistry::create(m_config.transport, this);
    if (!transport)
        return transport.error();
    m_transport = *transport;
    m_config.chunkSize = m_config.effectiveChunkSize(m_transport->preferredChunkSize());
    if (auto configured = m_transport->configure(m_config.transportOptions); !configured)
        return configured.error();
    connect(m_transport, &Transport::incomingLink, this, &Engine::handleIncomingLink);
    // Only the launched root has a fixed address; everybody else takes what
    // the transport gives and tells the others through the rank table.
    const QString wanted = m_formation.role() == FormationState::Role::LaunchedRoot ? m_config.rootAddress
                                                                                   : m_config.listenAddress;
    auto listening = m_transport->listen(wanted);
    if (!listening)
        return listening.error();
    m_listenAddress = *listening;
    // Asked now, when the transport knows its options and where it listens.
    m_expectedLink = m_transport->expectedLink();
    return success();
}

LocalIdentity Engine::identity() const
{
    return {m_config.worldName, m_config.worldKey, m_nodeId, m_rank, m_listenAddress};
}

void Engine::setStep(Step step, const QString &reason)
{
    const Step from = m_formation.step();
    const char *role = FormationState::name(m_formation.role());
    if (step == from)
        return;
    if (!m_formation.moveTo(step)) {
        qCWarning(lcWorld).noquote() << "formation: a" << role << "cannot go from" << FormationState::name(from)
                                     << "to" << FormationState::name(step) << "(" << reason << ")";
        return;
    }
    qCInfo(lcWorld).noquote() << role << FormationState::name(from) << "->" << FormationState::name(step) << ":"
                              << reason;
    if (m_state == m_formation.worldState())
        return;
    m_state = m_formation.worldState();
    Q_EMIT stateChanged(m_state);
}

void Engine::setPeerState(Peer &peer, PeerState state, const QString &reason)
{
    if (peer.state == state)
        return;
    qCDebug(lcWorld).noquote() << "rank" << peer.info.rank << FormationState::name(peer.state) << "->"
                               << FormationState::name(state) << ":" << reason;
    peer.state = state;
}

// ---------------------------------------------------------------- root side

Result<void> Engine::admitToRoot(const PeerIdentity &peer) const
{
    if (m_formation.role() != FormationState::Role::LaunchedRoot)
        return refusal(QStringLiteral("this node does not accept joins"));
    if (peer.purpose != LinkPurpose::Join)
        return refusal(QStringLiteral("the root accepts only joins"));
    if (m_formation.step() != Step::AwaitingJoins)
        return refusal(QStringLiteral("the world is already formed"));
    if (peer.rank < 1 || peer.rank >= m_size)
        return refusal(QStringLiteral("rank %1 is not in this world of %2").arg(peer.rank).arg(m_size));
    if (m_peers.at(peer.rank).link)
        return refusal(QStringLiteral("rank %1 has already joined").arg(peer.rank));
    if (awaitsConfirmation(peer.rank))
        return refusal(QStringLiteral("rank %1 waits for its join to be confirmed").arg(peer.rank));
    return success();
}

void Engine::handleJoinedRoot(Link *link, const PeerIdentity &peer)
{
    if (m_config.confirmJoins)
        return requestConfirmation(link, peer);
    seatJoined(link, peer);
}

void Engine::seatJoined(Link *link, const PeerIdentity &peer)
{
    qCInfo(lcWorld).noquote() << "rank" << peer.rank << "joined from" << link->peerAddress();
    attachPeer(peer.rank, link, {peer.rank, peer.nodeId, peer.listenAddress});
    const int joined = linkedCount() + 1;
    Q_EMIT formationProgress(joined, m_size);
    if (joined == m_size)
        sendRankTable();
}

void Engine::handlePeerDiscovered(const PeerAdvert &advert)
{
    if (m_formation.step() != Step::Discovering || advert.nodeId == m_nodeId || m_contacted.contains(advert.nodeId)
        || candidateSlotsTaken() >= m_config.size)
        return;
    m_heardAdvert = true;
    m_contacted.insert(advert.nodeId);
    contactDiscovered(advert, 0);
}

void Engine::contactDiscovered(const PeerAdvert &advert, int index)
{
    const QString address = index == 0 ? advert.address : advert.alternateAddresses.value(index - 1);
    // Every address tried: the node may be tried again at its next advert.
    if (address.isEmpty() || m_formation.step() != Step::Discovering) {
        m_contacted.remove(advert.nodeId);
        return;
    }
    auto link = m_transport->connectTo(address);
    if (!link) {
        qCWarning(lcWorld).noquote() << "cannot contact discovered node" << advert.nodeId << "at" << address << ":"
                                     << link.error().toString();
        return contactDiscovered(advert, index + 1);
    }
    qCDebug(lcWorld).noquote() << "contacting discovered node" << advert.nodeId << "at" << address;
    auto *handshake = Handshake::connect(*link, identity(), LinkPurpose::Join, m_config.handshakeTimeout, this);
    // The rank table gives the address the root reached the node at: a node
    // listening on every interface claims 0.0.0.0, which others cannot dial.
    connect(handshake, &Handshake::succeeded, this, [this, address](Link *l, PeerIdentity peer) {
        if (isAnyListenAddress(peer.listenAddress))
            peer.listenAddress = address;
        handleCandidateJoined(l, peer);
    });
    connect(handshake, &Handshake::failed, this, [this, advert, index](Link *l, const Error &e) {
        // An address that could not be reached gives way to the node's next
        // one; a node that failed the key proof stays refused.
        if (!isTransient(e))
            return handleRefused(l, e);
        if (l)
            l->deleteLater();
        qCDebug(lcWorld).noquote() << "discovered node" << advert.nodeId << "not reachable at this address:"
                                   << e.message;
        contactDiscovered(advert, index + 1);
    });
}

int Engine::candidateSlotsTaken() const
{
    return int(m_candidates.size() + m_joinRequests.size()) + 1;
}

void Engine::handleCandidateJoined(Link *link, const PeerIdentity &peer)
{
    if (!m_config.confirmJoins)
        return takeCandidate(link, peer);
    if (m_formation.step() == Step::Discovering && candidateSlotsTaken() < m_config.size)
        return requestConfirmation(link, peer);
    // No room while others wait for an answer: its next advert is heard
    // again, in case one of them is turned away.
    m_contacted.remove(peer.nodeId);
    link->close();
    link->deleteLater();
}

void Engine::takeCandidate(Link *link, const PeerIdentity &peer)
{
    if (m_formation.step() != Step::Discovering || int(m_candidates.size()) + 1 >= m_config.size) {
        link->close();
        link->deleteLater();
        return;
    }
    qCInfo(lcWorld).noquote() << "node" << peer.nodeId << "joined from" << link->peerAddress();
    link->setParent(this);
    m_candidates.append({link, peer});
    connect(link, &Link::stateChanged, this, [this, link](Link::State state) {
        if (state != Link::State::Closed || m_formation.step() != Step::Discovering)
            return;
        m_candidates.removeIf([link](const auto &c) { return c.first == link; });
        link->deleteLater();
        announceWorld(int(m_candidates.size()) + 1);
    });
    const int joined = int(m_candidates.size()) + 1;
    Q_EMIT formationProgress(joined, m_config.size);
    if (joined < m_config.size)
        announceWorld(joined);
    if (joined == m_config.size)
        return assignRanksAndSendTable();
    checkDiscoveryWindow();
}

// When the discovery window ends, and again as each join request is settled
// after it: people still deciding about a node hold the window open.
void Engine::checkDiscoveryWindow()
{
    if (m_formation.step() != Step::Discovering || m_discoveryTimer.isActive() || !m_joinRequests.isEmpty())
        return;
    const int joined = int(m_candidates.size()) + 1;
    if (joined < m_config.effectiveMinimumSize())
        return; // keep looking until the formation deadline
    qCInfo(lcWorld) << "discovery window over:" << joined << "of" << m_config.size
                    << "nodes joined; forming with them";
    assignRanksAndSendTable();
}

void Engine::assignRanksAndSendTable()
{
    stopDiscoverySteps();
    m_discoveryTimer.stop();
    // Ranks in a stable order: by node identity, not by who answered first.
    std::sort(m_candidates.begin(), m_candidates.end(),
              [](const auto &a, const auto &b) { return a.second.nodeId < b.second.nodeId; });
    m_size = int(m_candidates.size()) + 1;
    m_peers.resize(m_size);
    for (int rank = 1; rank < m_size; ++rank) {
        const auto &[link, peer] = m_candidates.at(rank - 1);
        link->disconnect(this);
        attachPeer(rank, link, {rank, peer.nodeId, peer.listenAddress});
    }
    m_candidates.clear();
    sendRankTable();
    endJoinRequests(encodeControl(JoinRefused{JoinRefusal::NotConfirmed,
                                              QStringLiteral("the world formed before its join was confirmed")}),
                    QStringLiteral("the world formed without it"));
}

void Engine::sendRankTable()
{
    m_peers[0].info = {0, m_nodeId, m_listenAddress};
    setStep(Step::AwaitingMeshReady, QStringLiteral("rank table to %1 nodes").arg(m_size - 1));
    if (m_size == 1)
        return becomeFormed();
    RankTable table;
    for (const Peer &peer : std::as_const(m_peers))
        table.entries.append({peer.info.rank, peer.info.nodeId, peer.info.address});
    const Frame frame = encodeControl(table);
    for (int rank = 1; rank < m_size; ++rank)
        m_peers[rank].link->sendFrame(frame);
}

void Engine::handleMeshReady(int rank)
{
    m_meshReady.insert(rank);
    Q_EMIT formationProgress(int(m_meshReady.size()) + 1, m_size);
    if (int(m_meshReady.size()) < m_size - 1)
        return;
    const Frame start = encodeControl(Start{});
    for (int r = 1; r < m_size; ++r)
        m_peers[r].link->sendFrame(start);
    becomeFormed();
}

// ---------------------------------------------------------------- node side

void Engine::connectToRoot()
{
    if (m_formation.step() != Step::ContactingRoot)
        return;
    auto link = m_transport->connectTo(contactAddress());
    if (!link)
        return fail(link.error());
    const LinkPurpose purpose = m_formation.rejoining() ? LinkPurpose::RejoinVia : LinkPurpose::Join;
    auto *handshake = Handshake::connect(*link, identity(), purpose, m_config.handshakeTimeout, this);
    connect(handshake, &Handshake::succeeded, this, &Engine::handleJoinedNode);
    connect(handshake, &Handshake::failed, this, [this](Link *l, const Error &e) {
        if (l)
            l->deleteLater();
        handleRootHandshakeFailed(e);
    });
}

void Engine::handleRootHandshakeFailed(const Error &error)
{
    m_lastRootError = error.message;
    noteKeyMismatch(error);
    // A replacement is refused until the root has given the old node up.
    if (!isTransient(error) && !m_formation.rejoining())
        return fail(error);
    // The root may not be listening yet: mmpirun starts every rank at once.
    // A replacement asks the next member it knows meanwhile.
    qCDebug(lcWorld).noquote() << contactAddress() << "not reachable yet:" << error.message;
    if (m_formation.rejoining())
        nextContact();
    retryLater(m_rootAttempts, [this] { connectToRoot(); });
}

Result<void> Engine::admitToNode(const PeerIdentity &peer) const
{
    if (peer.purpose == LinkPurpose::Invite) {
        if (m_config.mode != WorldConfig::Mode::Discovered || m_config.isRoot())
            return refusal(QStringLiteral("only a node that advertises itself can be invited"));
        if (m_formation.step() != Step::Advertising)
            return refusal(QStringLiteral("this node has already joined a world"));
        return success();
    }
    if (m_formation.rejoining())
        return admitFellowReplacement(peer);
    if (peer.purpose == LinkPurpose::Join) {
        if (m_config.mode != WorldConfig::Mode::Discovered || peer.rank != 0)
            return refusal(QStringLiteral("only the root of a discovered world may ask to join"));
        if (m_formation.step() != Step::Advertising)
            return refusal(QStringLiteral("this node has already joined a root"));
        return success();
    }
    if (peer.rank < 1)
        return refusal(QStringLiteral("mesh link claims rank %1").arg(peer.rank));
    if (!m_formation.hasRankTable())
        return success(); // checked against the rank table when it arrives
    if (peer.rank <= m_rank || peer.rank >= m_size)
        return refusal(QStringLiteral("rank %1 should not connect to rank %2").arg(peer.rank).arg(m_rank));
    if (m_peers.at(peer.rank).link)
        return refusal(QStringLiteral("rank %1 is already linked").arg(peer.rank));
    if (m_peers.at(peer.rank).info.nodeId != peer.nodeId)
        return refusal(QStringLiteral("node %1 is not rank %2").arg(peer.nodeId).arg(peer.rank));
    return success();
}

void Engine::handleJoinedNode(Link *link, const PeerIdentity &peer)
{
    // Another new node's link, accepted while this one formed and done
    // after: a formed world's rejoin (the node was reported lost meanwhile).
    if (peer.purpose == LinkPurpose::Rejoin && m_state == World::State::Formed) {
        if (!admitRejoin(peer)) {
            link->close();
            link->deleteLater();
            return;
        }
        return handleRejoinLink(link, peer);
    }
    if (peer.purpose == LinkPurpose::Mesh || peer.purpose == LinkPurpose::Rejoin) {
        if (!m_formation.hasRankTable()) {
            link->setParent(this);
            m_earlyMeshLinks.append({link, peer});
            return;
        }
        attachAccepted(link, peer);
        return checkMeshComplete();
    }
    // A replacement of rank 0 may join through any survivor, a spare
    // through whichever member invited it.
    // An invitation that comes after a root's join (or the other way round) goes unanswered.
    const bool invited = peer.purpose == LinkPurpose::Invite;
    if ((invited && !m_formation.becomeSpare()) || !m_formation.canMoveTo(Step::AwaitingRankTable)) {
        link->close();
        link->deleteLater();
        return;
    }
    const bool rejoining = m_formation.rejoining();
    const bool contactRankOk = invited     ? peer.rank >= 0 && peer.rank < WorldConfig::MaxSize
                               : rejoining ? peer.rank >= 0 && peer.rank < m_size && peer.rank != m_rank
                                           : peer.rank == 0;
    if (!contactRankOk)
        return fail({ErrorCode::ProtocolViolation,
                     QStringLiteral("the %1 at %2 claims rank %3")
                         .arg(rejoining ? QStringLiteral("member") : QStringLiteral("root"), link->peerAddress())
                         .arg(peer.rank)});
    if (m_config.mode == WorldConfig::Mode::Discovered) {
        stopDiscoverySteps();
        m_peers.resize(peer.rank + 1);
    }
    setStep(Step::AwaitingRankTable, QStringLiteral("joined rank %1 at %2").arg(peer.rank).arg(link->peerAddress()));
    m_contact = peer.rank;
    attachPeer(peer.rank, link, {peer.rank, peer.nodeId, peer.listenAddress});
}

void Engine::handleRankTable(const Frame &frame)
{
    const auto table = decodeControl<RankTable>(frame);
    if (!table)
        return fail(table.error());
    const auto &entries = table->entries;
    const auto mine = std::find_if(entries.begin(), entries.end(),
                                   [this](const RankEntry &e) { return e.nodeId == m_nodeId; });
    if (mine == entries.end() || (mine->rank == 0 && !m_formation.rejoining()) || mine->rank == m_contact
        || (m_config.mode == WorldConfig::Mode::Launched && mine->rank != m_rank))
        return fail({ErrorCode::ProtocolViolation, QStringLiteral("the rank table does not list this node")});
    const Peer contact = m_peers.value(m_contact);
    const bool contactListed = m_contact < entries.size()
        && std::any_of(entries.begin(), entries.end(), [&](const RankEntry &e) {
               return e.rank == m_contact && e.nodeId == contact.info.nodeId;
           });
    if (!contactListed)
        return fail({ErrorCode::ProtocolViolation,
                     QStringLiteral("the rank table does not list rank %1, which sent it").arg(m_contact)});
    m_rank = mine->rank;
    m_size = int(entries.size());
    m_peers = QList<Peer>(m_size);
    m_peers[m_contact] = contact;
    for (const RankEntry &e : entries)
        m_peers[e.rank].info = {e.rank, e.nodeId, e.address};
    setStep(m_formation.rejoining() ? Step::LinkingSurvivors : Step::LinkingMesh,
            QStringLiteral("rank %1 of %2").arg(m_rank).arg(m_size));
    const auto early = std::exchange(m_earlyMeshLinks, {});
    for (const auto &[link, peer] : early) {
        if (!link || link->state() != Link::State::Connected)
            continue;
        if (auto ok = admitToNode(peer); !ok) {
            handleRefused(link, ok.error());
            continue;
        }
        attachAccepted(link, peer);
    }
    // A new member dials the lower ranks but 0, a replacement every member still there.
    const bool rejoining = m_formation.rejoining();
    for (int rank = 0; rank < m_size; ++rank)
        if (rejoining ? rank != m_rank && !m_peers.at(rank).info.address.isEmpty() : rank > 0 && rank < m_rank)
            dialMember(rank);
    checkMeshComplete();
}

// Forming: a link to `rank` from its rank-table entry: a lower rank while
// the mesh is built, or every member when this node rejoins (whose refusals
// are retried: a member admits it only once it has given the old node up).
void Engine::dialMember(int rank)
{
    if (m_state != World::State::Forming || m_peers.at(rank).link || m_peers.at(rank).info.address.isEmpty())
        return;
    auto link = m_transport->connectTo(m_peers.at(rank).info.address);
    if (!link)
        return fail(link.error());
    setPeerState(m_peers[rank], PeerState::Linking, m_peers.at(rank).info.address);
    const LinkPurpose purpose = m_formation.rejoining() ? LinkPurpose::Rejoin : LinkPurpose::Mesh;
    auto *handshake = Handshake::connect(*link, identity(), purpose, m_config.handshakeTimeout, this);
    connect(handshake, &Handshake::succeeded, this, [this, rank](Link *l, const PeerIdentity &peer) {
        // The node id (bound into the acceptor's MAC) decides who this is: the
        // acceptor may not have its rank table yet and then claims no rank.
        // A rejoining node may find a new node in the rank instead (another
        // replacement, at the rank's fixed address), which claims it.
        const bool fellow = m_formation.rejoining() && peer.rank == rank;
        if (peer.nodeId != m_peers.at(rank).info.nodeId && !fellow) {
            l->close();
            l->deleteLater();
            return fail({ErrorCode::ProtocolViolation,
                         QStringLiteral("the node at %1 is not rank %2").arg(l->peerAddress()).arg(rank)});
        }
        if (m_peers.at(rank).link) { // the other end's link came first (admitFellowReplacement)
            l->close();
            l->deleteLater();
            return;
        }
        if (m_state == World::State::Formed) // formed without it meanwhile: reported lost, now back
            return handleRejoinLink(l, {LinkPurpose::Rejoin, peer.nodeId, rank, peer.listenAddress});
        attachPeer(rank, l, fellow ? NodeInfo{rank, peer.nodeId, peer.listenAddress} : m_peers.at(rank).info);
        checkMeshComplete();
    });
    connect(handshake, &Handshake::failed, this, [this, rank](Link *l, const Error &e) {
        if (l)
            l->deleteLater();
        noteKeyMismatch(e);
        if (m_state != World::State::Forming)
            return; // formed (or failed) meanwhile: the notice of its rejoin, if any, brings it
        if (m_formation.rejoining()) {
            m_lastRejoinError = e.message;
            if (e.code == ErrorCode::ConnectionRefused)
                return forgetMember(rank, e); // its app has ended: a replacement of it will dial this node
            qCDebug(lcWorld).noquote() << "rank" << rank << "did not admit this node yet:" << e.message;
        } else if (!isTransient(e)) {
            return fail(e);
        }
        retryLater(m_meshAttempts[rank], [this, rank] { dialMember(rank); });
    });
}

// Linked to every rank (a replacement: to every member still there, which the
// table lists with an address), a new member tells the root and waits for its
// Start; a replacement is formed.
void Engine::checkMeshComplete()
{
    const bool rejoining = m_formation.rejoining();
    if (m_formation.step() != (rejoining ? Step::LinkingSurvivors : Step::LinkingMesh))
        return;
    int expected = 1;
    int linked = 1;
    for (int rank = 0; rank < m_size; ++rank) {
        if (rank != m_rank && !(rejoining && m_peers.at(rank).info.address.isEmpty())) {
            ++expected;
            linked += m_peers.at(rank).link ? 1 : 0;
        }
    }
    Q_EMIT formationProgress(linked, expected);
    if (linked < expected)
        return;
    if (rejoining)
        return becomeFormed();
    setStep(Step::AwaitingStart, QStringLiteral("linked to every rank; MeshReady sent"));
    m_peers[0].link->sendFrame(encodeControl(MeshReady{}));
}

// ---------------------------------------------------------------- both sides

void Engine::handleIncomingLink(Link *link)
{
    link->setParent(this);
    if (m_state == World::State::Formed) {
        // Only a peer that lost its link to us, or a node taking a lost
        // member's place, dials a formed world.
        auto *handshake = Handshake::accept(link, identity(), [this](const PeerIdentity &peer) {
            return isRejoin(peer.purpose) ? admitRejoin(peer) : admitResume(peer);
        }, m_config.handshakeTimeout, this);
        connect(handshake, &Handshake::succeeded, this, [this](Link *l, const PeerIdentity &peer) {
            if (isRejoin(peer.purpose))
                return handleRejoinLink(l, peer);
            handleResumeLink(l, peer);
        });
        connect(handshake, &Handshake::failed, this, &Engine::handleResumeRefused);
        return;
    }
    if (m_state != World::State::Forming) {
        qCWarning(lcWorld).noquote() << "refusing link from" << link->peerAddress()
                                     << ": the world is no longer forming";
        link->close();
        link->deleteLater();
        return;
    }
    const bool root = m_formation.role() == FormationState::Role::LaunchedRoot;
    auto *handshake = Handshake::accept(link, identity(), [this, root](const PeerIdentity &peer) {
        return root ? admitToRoot(peer) : admitToNode(peer);
    }, m_config.handshakeTimeout, this);
    connect(handshake, &Handshake::succeeded, this, root ? &Engine::handleJoinedRoot : &Engine::handleJoinedNode);
    connect(handshake, &Handshake::failed, this, &Engine::handleRefused);
}

qint64 Engine::linkHighWater() const
{
    return qMax<qint64>(4LL * m_config.chunkSize, 256 * 1024);
}

// An accepted mesh link is the rank-table entry's node; a fellow
// replacement's is a new node in its rank, known by what it said.
void Engine::attachAccepted(Link *link, const PeerIdentity &peer)
{
    const bool fellow = peer.purpose == LinkPurpose::Rejoin;
    attachPeer(peer.rank, link, fellow ? NodeInfo{peer.rank, peer.nodeId, peer.listenAddress} : m_peers.at(peer.rank).info);
}

void Engine::attachPeer(int rank, Link *link, const NodeInfo &info)
{
    Peer &peer = m_peers[rank];
    // A new node in a rank that had another (a replacement rejoining while
    // a member it had linked to is replaced too): nothing carries over.
    if (peer.stream && peer.info.nodeId != info.nodeId)
        restartStreams(peer);
    peer.info = info;
    // Made with the link: a peer formed before us may send messages (numbered
    // from 1) before our Start.
    ensurePeerState(rank);
    connectLink(rank, link);
    setPeerState(peer, PeerState::Linked, link->peerAddress());
}

void Engine::restartStreams(Peer &peer)
{
    peer.outbox = newOutbox();
    peer.stream->restart();
}

// Enough queued on the link to keep the socket busy between wake-ups.
std::shared_ptr<Outbox> Engine::newOutbox() const
{
    return std::make_shared<Outbox>(m_config.chunkSize, linkHighWater());
}

void Engine::ensurePeerState(int rank)
{
    Peer &peer = m_peers[rank];
    if (peer.stream)
        return;
    peer.outbox = newOutbox();
    peer.placement = [this, rank](const FrameHeader &h, qint64 bytes) { return placeMessage(rank, h, bytes); };
    peer.stream = std::make_shared<PeerStream>(rank, m_config.replayBufferSize, m_config.maxMessageSize);
}

// Only a formed world's messages, from the peer they claim to come from, may
// go to a receiver's buffer: anything else is dropped or held on arrival.
char *Engine::placeMessage(int rank, const FrameHeader &h, qint64 bytes) const
{
    if (!m_placement || m_state != World::State::Formed || h.source != rank || h.destination != m_rank)
        return nullptr;
    return m_placement(h, bytes);
}

void Engine::abandonMessageFrom(int rank)
{
    if (rank >= 0 && rank < m_peers.size() && m_peers[rank].stream)
        m_peers[rank].stream->abandonMessage();
}

void Engine::connectLink(int rank, Link *link)
{
    m_peers[rank].link = link;
    link->setParent(this);
    connect(link, &Link::bytesWritten, this, [this, rank, link] {
        if (m_peers.value(rank).link == link)
            pump(rank);
    });
    connect(link, &Link::frameReceived, this, [this, rank](const Frame &f) { handleOwnFrame(rank, f); });
    connect(link, &Link::arrivalRateMeasured, this, [this, rank, link](double bytesPerSecond) {
        if (m_peers.value(rank).link == link)
            reportArrivalRate(rank, link, bytesPerSecond);
    });
    connect(link, &Link::stateChanged, this, [this, rank, link](Link::State state) {
        if (state == Link::State::Closed)
            handleLinkClosed(rank, link);
    });
    if (const auto *sealed = qobject_cast<SealedLink *>(link))
        Q_EMIT peerVerified(rank, sealed->verificationCode());
}

void Engine::pump(int rank)
{
    Peer &peer = m_peers[rank];
    if (!peer.link || peer.isResuming() || !peer.outbox)
        return;
    Link *link = peer.link;
    const quint64 before = link->counters().bytesQueued;
    peer.outbox->pump(link, *peer.stream);
    if (peer.link == link)
        m_departures->noteQueued(rank, link, link->counters().bytesQueued - before);
}

void Engine::handleOwnFrame(int rank, const Frame &frame)
{
    bool ackDue = false;
    if (auto ok = m_peers[rank].stream->accept(frame.header, ackDue); !ok)
        return closeLink(rank, ok.error());
    if (ackDue)
        sendAck(rank);
    handleLinkFrame(rank, frame);
}

void Engine::handleLinkFrame(int rank, const Frame &frame)
{
    if (m_detector->heard(rank, FailureDetector::Clock::now())) {
        qCInfo(lcWorld) << "rank" << rank << "is no longer suspect";
        Q_EMIT nodeAlive(rank);
        Q_EMIT linkQualityChanged(rank);
    }
    switch (frame.header.kind) {
    case FrameKind::Control:
        return handleControlFrame(rank, frame);
    case FrameKind::Data:
        return handleDataFrame(rank, frame);
    case FrameKind::Goodbye:
        setPeerState(m_peers[rank], PeerState::Left, QStringLiteral("it said goodbye"));
        qCInfo(lcWorld) << "rank" << rank << "said goodbye";
        Q_EMIT nodeLeft(rank);
        if (m_detector->release(rank, World::NodeStatus::Left))
            Q_EMIT linkQualityChanged(rank);
        return checkCloseDone();
    case FrameKind::Heartbeat:
        return handleHeartbeat(rank, frame);
    case FrameKind::Fragment:
        return handleFragment(rank, frame);
    case FrameKind::Ack:
        return handleAck(rank, frame);
    case FrameKind::Sealed: // its SealedLink opens every record; one inside another is no frame of ours
        return closeLink(rank, {ErrorCode::ProtocolViolation,
                                QStringLiteral("rank %1 sent a sealed record inside a sealed record").arg(rank)});
    }
}

void Engine::handleAck(int rank, const Frame &frame)
{
    const std::optional<quint64> upTo = ackedUpTo(frame);
    if (!upTo)
        return closeLink(rank, {ErrorCode::ProtocolViolation,
                                QStringLiteral("malformed acknowledgement from rank %1").arg(rank)});
    if (auto ok = m_peers[rank].stream->acknowledge(*upTo); !ok)
        return closeLink(rank, {ok.error().code, QStringLiteral("rank %1 sent an %2").arg(rank).arg(ok.error().message)});
    pump(rank);
}

void Engine::sendAck(int rank)
{
    Peer &peer = m_peers[rank];
    if (!peer.link || peer.isResuming() || peer.link->state() != Link::State::Connected)
        return;
    const auto received = peer.stream->takeAck();
    if (!received)
        return;
    peer.link->sendFrame(ackFrame(m_rank, rank, *received));
}

void Engine::sendAcks()
{
    for (int rank = 0; rank < m_peers.size(); ++rank)
        if (rank != m_rank && m_peers.at(rank).stream)
            sendAck(rank);
}

void Engine::handleFragment(int rank, const Frame &fragment)
{
    Peer &peer = m_peers[rank];
    bool placed = false;
    auto assembly = peer.stream->addFragment(fragment, peer.placement, placed);
    if (!assembly) {
        // Nothing more of it is coming: its receive must not wait for it.
        if (placed)
            Q_EMIT messageAbandoned(rank, assembly.error());
        return closeLink(rank, assembly.error());
    }
    if (assembly->message)
        handleDataFrame(rank, std::move(*assembly->message));
    else if (assembly->placedBytes > 0 && m_placedProgress)
        m_placedProgress(rank, assembly->placedBytes);
}

void Engine::handleControlFrame(int rank, const Frame &frame)
{
    const auto type = controlType(frame);
    const bool fromRoot = rank == m_contact && rank != m_rank;
    const Step step = m_formation.step();
    if (type && *type == ControlType::Resume && m_peers[rank].isResuming())
        return handleResume(rank, frame);
    if (type && *type == ControlType::Rejoined)
        return handleRejoinNotice(frame);
    if (type && *type == ControlType::GivenUp && m_state == World::State::Formed)
        return handleGivenUp(rank, frame);
    if (type && m_state == World::State::Forming) {
        if (*type == ControlType::RankTable && fromRoot && step == Step::AwaitingRankTable)
            return handleRankTable(frame);
        if (*type == ControlType::MeshReady && step == Step::AwaitingMeshReady)
            return handleMeshReady(rank);
        if (*type == ControlType::Start && fromRoot && step == Step::AwaitingStart)
            return becomeFormed();
        if (*type == ControlType::JoinRefused && fromRoot && step == Step::AwaitingRankTable)
            return handleJoinRefused(frame);
        if (*type == ControlType::Abort && fromRoot) {
            const auto abort = decodeControl<Abort>(frame);
            return fail({ErrorCode::FormationTimeout,
                         QStringLiteral("the root abandoned formation: %1")
                             .arg(abort ? abort->reason : abort.error().message)});
        }
    }
    qCWarning(lcWorld) << "ignoring unexpected control message" << frame.header.tag << "from rank" << rank;
}

void Engine::handleDataFrame(int rank, Frame frame)
{
    if (frame.header.source != rank || frame.header.destination != m_rank) {
        qCWarning(lcWorld) << "dropping a frame from rank" << rank << "that claims source"
                           << frame.header.source << "and destination" << frame.header.destination;
        return;
    }
    if (m_state == World::State::Formed || m_state == World::State::Closing)
        return Q_EMIT frameReceived(frame);
    m_earlyBytes += frame.payload.size() + FrameHeaderSize;
    if (m_earlyBytes > MaxEarlyBytes)
        return fail({ErrorCode::ProtocolViolation,
                     QStringLiteral("rank %1 sent more than %2 bytes before the world was formed")
                         .arg(rank)
                         .arg(MaxEarlyBytes)});
    m_earlyFrames.append(std::move(frame));
}

void Engine::handleLinkClosed(int rank, Link *link)
{
    Peer &peer = m_peers[rank];
    if (peer.link != link)
        return;
    const Error reason = peer.closeReason.isError() ? std::exchange(peer.closeReason, {})
                         : link->error().isError()
                             ? link->error()
                             : Error{ErrorCode::LinkClosed, QStringLiteral("rank %1 closed its link").arg(rank)};
    detachLink(peer);
    link->deleteLater();
    // A refused record says someone tampered with the link (or a bug): the
    // app hears of it although the world goes on as for any broken link.
    if (reason.code == ErrorCode::RecordRefused)
        Q_EMIT peerRefused(link->peerAddress(), reason);
    const bool left = peer.state == PeerState::Left;
    if (m_state == World::State::Formed && !left && tryReconnect(rank, reason))
        return;
    if (!left)
        setPeerState(peer, PeerState::Lost, reason.message);
    if (!left && m_detector->release(rank, World::NodeStatus::Lost))
        Q_EMIT linkQualityChanged(rank);
    if (peer.outbox)
        peer.outbox->failAll({ErrorCode::LinkClosed,
                              QStringLiteral("the link to rank %1 closed: %2").arg(rank).arg(reason.message)});
    switch (m_state) {
    case World::State::Forming:
        if (m_formation.rejoining() && handleLossWhileRejoining(rank, reason))
            return;
        return fail({reason.code, QStringLiteral("rank %1 dropped out during formation: %2")
                                      .arg(rank)
                                      .arg(reason.message)});
    case World::State::Formed:
        if (!left) {
            qCWarning(lcWorld).noquote() << "lost rank" << rank << ":" << reason.message;
            Q_EMIT nodeLost(rank, failureClassOf(reason), reason);
        }
        return;
    case World::State::Closing:
        return checkCloseDone();
    default:
        return;
    }
}

void Engine::closeLink(int rank, const Error &reason)
{
    Peer &peer = m_peers[rank];
    Link *link = peer.link;
    if (!link)
        return;
    qCWarning(lcWorld).noquote() << "closing the link to rank" << rank << ":" << reason.message;
    peer.closeReason = reason;
    // Reported through handleLinkClosed(), with this reason.
    link->close();
}

void Engine::handleHeartbeat(int rank, const Frame &frame)
{
    const auto reply = m_detector->receive(rank, frame, FailureDetector::Clock::now());
    if (!reply)
        return closeLink(rank, reply.error());
    if (reply->echo) {
        // Straight to the link, not through the outbox: an echo waits behind
        // nothing this node has not yet handed to the link.
        if (Link *link = m_peers[rank].link)
            link->sendFrame(*reply->echo);
    }
    if (reply->rateProbe) {
        if (Link *link = m_peers[rank].link) {
            qCDebug(lcWorld) << "rate probe of" << reply->rateProbe->payload.size() << "bytes to rank" << rank;
            link->sendFrame(*reply->rateProbe);
        }
    }
    if (reply->measured)
        Q_EMIT linkQualityChanged(rank);
}

// Straight to the link, as an echo goes: the sender plans its next
// broadcast with it (LinkTable), and it waits behind nothing queued here.
void Engine::reportArrivalRate(int rank, Link *link, double bytesPerSecond)
{
    if (const auto report = m_detector->noteArrivalRate(rank, bytesPerSecond, FailureDetector::Clock::now()))
        link->sendFrame(*report);
    Q_EMIT linkQualityChanged(rank);
}

void Engine::startFailureDetector()
{
    const auto now = FailureDetector::Clock::now();
    m_detector->start(m_rank, now);
    for (int rank = 0; rank < m_size; ++rank) {
        if (rank == m_rank)
            continue;
        Link *link = m_peers.at(rank).link;
        m_detector->watch(rank, now, link ? link->counters().framesSent : 0);
        if (!m_peers.at(rank).receiving)
            m_detector->setReading(rank, false, now);
        // Straight to the link, as heartbeats go: the first round trip, and
        // on one link the radio's rate (all of a node's links share it).
        const auto kind = rank == (m_rank + 1) % m_size ? FailureDetector::Probe::RoundTripThenRate
                                                        : FailureDetector::Probe::RoundTrip;
        if (const auto probe = link ? m_detector->probe(rank, now, kind) : std::nullopt)
            link->sendFrame(*probe);
    }
    if (!m_detector->isEnabled())
        return;
    m_heartbeatTimer.start(m_detector->checkPeriod());
    qCDebug(lcWorld) << "heartbeats every" << m_config.heartbeatInterval.count() << "ms, suspect after"
                     << m_detector->suspectAfter().count() << "ms, lost after" << m_config.heartbeatTimeout.count()
                     << "ms of silence";
}

void Engine::handleHeartbeatCheck()
{
    if (m_state != World::State::Formed && m_state != World::State::Closing)
        return m_heartbeatTimer.stop();
    const auto verdicts = m_detector->check(FailureDetector::Clock::now(), [this](int rank) {
        const Link *link = m_peers.value(rank).link;
        if (!link || link->state() != Link::State::Connected || m_peers.value(rank).isResuming())
            return std::optional<FailureDetector::Activity>();
        // framesSent counts frames from every thread, direct sends included.
        return std::optional(FailureDetector::Activity{link->counters().framesSent, link->bytesToWrite()});
    });
    for (const auto &verdict : verdicts) {
        Link *link = m_peers[verdict.rank].link;
        if (verdict.heartbeat && link)
            link->sendFrame(*verdict.heartbeat);
        if (verdict.becameSuspect) {
            qCWarning(lcWorld) << "rank" << verdict.rank << "is suspect: nothing heard from it for"
                               << m_detector->suspectAfter().count() << "ms";
            Q_EMIT nodeSuspect(verdict.rank);
            Q_EMIT linkQualityChanged(verdict.rank);
        }
        if (verdict.lost) {
            Q_EMIT linkQualityChanged(verdict.rank);
            closeLink(verdict.rank, *verdict.lost);
        }
    }
}

void Engine::detachLink(Peer &peer)
{
    if (peer.isResuming())
        setPeerState(peer, PeerState::Unreachable, QStringLiteral("its new link went"));
    peer.link = nullptr;
}

void Engine::discardLink(Peer &peer)
{
    if (Link *link = peer.link) {
        detachLink(peer);
        link->disconnect(this);
        link->close();
        link->deleteLater();
    }
}

void Engine::handleRefused(Link *link, const Error &error)
{
    const QString peer = link ? link->peerAddress() : QString();
    qCWarning(lcWorld).noquote() << "refused" << peer << ":" << error.message;
    if (link)
        link->deleteLater();
    noteKeyMismatch(error);
    Q_EMIT peerRefused(peer, error);
}

void Engine::noteKeyMismatch(const Error &error)
{
    if (error.code != ErrorCode::WorldKeyMismatch || m_state != World::State::Forming)
        return;
    ++m_keyMismatches;
    m_keyMismatch = error;
}

void Engine::retryLater(int &attempt, std::function<void()> action)
{
    const int delay = std::min(1000, 50 << std::min(attempt, 5));
    ++attempt;
    QTimer::singleShot(delay, this, std::move(action));
}

int Engine::linkedCount() const
{
    return int(std::count_if(m_peers.begin(), m_peers.end(), [](const Peer &p) { return p.link; }));
}

void Engine::handleDeadline(bool graceOver)
{
    if (m_state != World::State::Forming)
        return;
    // The root knows what is missing and aborts with that reason at its own
    // deadline; a node still linked to it waits a little for that message
    // instead of failing first with a vaguer one of its own.
    if (!graceOver && !m_formation.formsAsRoot() && !m_peers.isEmpty() && m_peers.at(m_contact).link)
        return QTimer::singleShot(RootAbortGrace, this, [this] { handleDeadline(true); });
    const QString timedOut = QStringLiteral("formation timed out after %1 ms: %2%3")
                                 .arg(m_config.formationTimeout.count())
                                 .arg(describeMissing(), describeOpenJoinRequests());
    // Links refused for another key are the likely reason the others are
    // missing: a root given the wrong key would otherwise say no more than
    // that nobody joined.
    if (m_keyMismatches > 0)
        return fail({ErrorCode::WorldKeyMismatch,
                     QStringLiteral("%1 (%2 link(s) refused so)%3; %4")
                         .arg(m_keyMismatch.message)
                         .arg(m_keyMismatches)
                         .arg(describeMissingKey(), timedOut)});
    fail({ErrorCode::FormationTimeout, timedOut});
}

QString Engine::describeMissingKey() const
{
    // A node that found a closed world by a typed address most likely
    // thought the address was all it needed, as a join code is.
    if (!m_config.worldKey.isEmpty())
        return {};
    return QStringLiteral(": this node holds no world key; give it the world's key (worldKey) or a join code, which "
                          "carries one (a typed root address carries none)");
}

QString Engine::describeMissing() const
{
    const auto ranks = [this](auto missing) {
        QList<int> found;
        for (int r = 0; r < m_peers.size(); ++r)
            if (r != m_rank && missing(m_peers.at(r), r))
                found.append(r);
        return rankList(found);
    };
    const auto unlinked = [](const Peer &peer, int) { return !peer.link; };
    switch (m_formation.step()) {
    case Step::AwaitingJoins:
        return QStringLiteral("rank(s) %1 never joined (expected %2 nodes)").arg(ranks(unlinked)).arg(m_size);
    case Step::Discovering:
        return QStringLiteral("only %1 of %2 nodes joined (at least %3 needed)")
            .arg(m_candidates.size() + 1)
            .arg(m_config.size)
            .arg(m_config.effectiveMinimumSize());
    case Step::AwaitingMeshReady:
        return QStringLiteral("rank(s) %1 did not complete their links to every node")
            .arg(ranks([this](const Peer &, int r) { return !m_meshReady.contains(r); }));
    case Step::ContactingRoot:
        return QStringLiteral("could not join the %1 at %2 (%3)")
            .arg(m_formation.rejoining() ? QStringLiteral("member") : QStringLiteral("root"), contactAddress(),
                 m_lastRootError.isEmpty() ? QStringLiteral("no answer") : m_lastRootError);
    case Step::Advertising:
        return (m_keyMismatches > 0 ? QStringLiteral("no root of world '%1' with this node's world key contacted it")
                                    : QStringLiteral("no root of world '%1' contacted this node"))
            .arg(m_config.worldName);
    case Step::AwaitingRankTable:
        return QStringLiteral("the root sent no rank table");
    case Step::LinkingMesh:
        return QStringLiteral("rank %1 has no link to rank(s) %2").arg(m_rank).arg(ranks(unlinked));
    case Step::LinkingSurvivors:
        return QStringLiteral("rank(s) %1 did not admit this node as rank %2 (last answer: %3)")
            .arg(ranks([](const Peer &peer, int) { return peer.state == PeerState::Linking; }))
            .arg(m_rank)
            .arg(m_lastRejoinError.isEmpty() ? QStringLiteral("none") : m_lastRejoinError);
    case Step::AwaitingStart:
        return QStringLiteral("the root did not start the world");
    case Step::Idle:
    case Step::OpeningTransport:
    case Step::Formed:
    case Step::Closing:
    case Step::Closed:
    case Step::Failed:
        break;
    }
    return QStringLiteral("nothing (the world is not forming)");
}

void Engine::becomeFormed()
{
    m_deadline.stop();
    m_discoveryTimer.stop();
    stopDiscoverySteps();
    QList<NodeInfo> nodes;
    for (const Peer &peer : std::as_const(m_peers))
        nodes.append(peer.info);
    nodes[m_rank] = {m_rank, m_nodeId, m_listenAddress};
    m_streams = QList<std::shared_ptr<const PeerStream>>(m_size);
    for (int rank = 0; rank < m_size; ++rank) {
        if (rank == m_rank)
            continue;
        ensurePeerState(rank); // a member already gone when this node rejoined has no link
        m_streams[rank] = m_peers[rank].stream;
    }
    m_ackTimer.start();
    startFailureDetector();
    // formed() first: World publishes rank and size before the state.
    Q_EMIT formed(m_rank, nodes, m_formation.rejoining());
    setStep(Step::Formed, QStringLiteral("rank %1 of %2 in %3 ms").arg(m_rank).arg(m_size).arg(m_clock.elapsed()));
    for (Frame &frame : std::exchange(m_earlyFrames, {}))
        Q_EMIT frameReceived(frame);
    m_earlyBytes = 0;
    if (m_formation.rejoining())
        reportAbsentMembers();
}

void Engine::fail(const Error &error)
{
    if (m_state != World::State::Forming)
        return;
    qCWarning(lcWorld).noquote() << "formation failed:" << error.toString();
    if (m_formation.formsAsRoot()) {
        const Frame abort = encodeControl(Abort{error.message});
        for (const Peer &peer : std::as_const(m_peers))
            if (peer.link)
                peer.link->sendFrame(abort);
        endJoinRequests(abort, QStringLiteral("formation failed"));
    }
    m_deadline.stop();
    m_discoveryTimer.stop();
    // The error first: World holds it by the time its state says Failed.
    Q_EMIT failed(error);
    setStep(Step::Failed, error.message);
    dropAllLinks();
}

// ---------------------------------------------------------------- traffic and close

void Engine::sendPosted()
{
    for (SendQueue::Post &post : m_sends->takeAll())
        sendFrame(post.destination, std::move(post.frame), std::move(post.done), post.whenDeparted);
}

void Engine::sendFrame(int destination, Frame frame, SendCallback done, bool whenDeparted)
{
    const auto refuse = [&](const QString &why) {
        qCDebug(lcWorld).noquote() << "not sending a frame to rank" << destination << ":" << why;
        if (done)
            done({ErrorCode::LinkClosed, QStringLiteral("cannot send to rank %1: %2").arg(destination).arg(why)});
    };
    if (m_state != World::State::Formed && m_state != World::State::Closing)
        return refuse(QStringLiteral("the world is not formed"));
    frame.header.source = m_rank;
    frame.header.destination = destination;
    if (destination == m_rank) {
        deliverLocally(frame);
        if (done)
            done({});
        return;
    }
    Peer &peer = m_peers[destination];
    // While reconnecting, frames wait in the outbox for the new link.
    if (!peer.isReconnecting() && (!peer.link || peer.link->state() != Link::State::Connected))
        return refuse(QStringLiteral("it has no link (it left or was lost)"));
    if (whenDeparted && done)
        done = [this, destination, done = std::move(done)](const Error &error) mutable {
            if (error.isError())
                return done(error);
            // Called from pump(): the link that took the frame is the peer's.
            m_departures->waitForDeparture(destination, m_peers[destination].link, std::move(done));
        };
    peer.outbox->enqueue(std::move(frame), std::move(done));
    pump(destination);
}

void Engine::setReceiving(int rank, bool enabled)
{
    if (rank < 0 || rank >= m_peers.size() || rank == m_rank)
        return;
    Peer &peer = m_peers[rank];
    if (peer.receiving == enabled)
        return;
    peer.receiving = enabled;
    m_detector->setReading(rank, enabled, FailureDetector::Clock::now());
    qCDebug(lcWorld) << (enabled ? "resuming" : "pausing") << "reading from rank" << rank;
    if (Link *link = peer.link)
        link->setReading(enabled);
}

void Engine::deliverLocally(const Frame &frame)
{
    // Self-sends take the real codec path so they behave like remote ones.
    FrameDecoder decoder;
    auto fed = decoder.feed(encodeFrame(frame));
    auto decoded = decoder.next();
    if (!fed || !decoded || !decoded->has_value()) {
        qCWarning(lcWorld) << "self-send of an unencodable frame dropped";
        return;
    }
    QMetaObject::invokeMethod(this, [this, f = **decoded]() mutable { Q_EMIT frameReceived(f); },
                              Qt::QueuedConnection);
}

void Engine::close()
{
    if (m_state == World::State::Forming) {
        fail({ErrorCode::Cancelled, QStringLiteral("formation cancelled by close()")});
        return setStep(Step::Closed, QStringLiteral("close() while forming"));
    }
    // Closing already: the first close() finishes sending what was queued
    // before it (FaultTolerance closes the world on ABORT, and the app's own
    // closeAndWait() then comes here while the decision is still going out).
    if (m_state == World::State::Closing)
        return;
    if (m_state != World::State::Formed) {
        dropAllLinks();
        return setStep(Step::Closed, QStringLiteral("close() of a world that did not form"));
    }
    setStep(Step::Closing, QStringLiteral("close()"));
    // The goodbye is the last frame on every link; the detector keeps timing
    // the peers whose goodbye has not come yet.
    m_detector->stopSending();
    Frame goodbye;
    goodbye.header.kind = FrameKind::Goodbye;
    goodbye.header.source = m_rank;
    for (int rank = 0; rank < m_peers.size(); ++rank) {
        Peer &peer = m_peers[rank];
        if (peer.isReconnecting())
            giveUp(rank, peer.failureClass,
                   {ErrorCode::LinkClosed,
                    QStringLiteral("this node left the world while rank %1 was unreachable").arg(rank)},
                   Verdict::Local);
        if (!peer.link)
            continue;
        goodbye.header.destination = rank;
        // Through the outbox: after every message queued before close().
        peer.outbox->enqueue(goodbye, {});
        pump(rank);
    }
    m_closeProgress = closeProgress();
    m_closeTimer.start(m_config.closeTimeout);
    checkCloseDone();
}

// Grows while what was queued before close() is still on its way: bytes
// leaving this node's links (a slow radio), frames the peers acknowledge (a
// peer that takes them slowly, which holds the rest in its kernel, where
// they have left this node but are not yet safe).
quint64 Engine::closeProgress() const
{
    quint64 progress = 0;
    for (const Peer &peer : m_peers) {
        if (peer.link)
            progress += peer.link->counters().bytesQueued - quint64(std::max<qint64>(0, peer.link->unsentBytes()));
        if (peer.stream)
            progress += peer.stream->acknowledged();
    }
    return progress;
}

// The close timeout counts time without progress: on a slow radio the
// messages an app sent just before close() (a game's last bundles to 15
// players over Bluetooth) take longer than any fixed timeout, and dropping
// them would leave the peers waiting for data that never comes. A peer that
// reads nothing stops the progress, and then what is left is dropped, said.
// (Closing a socket whose peer has not read everything may reset it, and
// the peer's kernel then drops what it held: departure alone is no proof.)
void Engine::handleCloseTimeout()
{
    if (m_state != World::State::Closing)
        return;
    const bool pending = std::any_of(m_peers.cbegin(), m_peers.cend(), [](const Peer &p) {
        return p.link
               && (!p.outbox->isEmpty() || p.link->unsentBytes() > 0
                   || (p.stream && p.stream->sent() > p.stream->acknowledged()));
    });
    // Only what is still on its way earns more time: once all of it has been
    // acknowledged, the wait is for the peers' goodbyes, and that is bounded.
    if (const quint64 progress = closeProgress(); pending && progress != m_closeProgress) {
        m_closeProgress = progress;
        m_closeTimer.start(m_config.closeTimeout);
        return;
    }
    for (int rank = 0; rank < m_peers.size(); ++rank) {
        const Peer &peer = m_peers.at(rank);
        if (!peer.link)
            continue;
        if (!peer.outbox->isEmpty() || peer.link->unsentBytes() > 0)
            qCWarning(lcWorld).noquote()
                << "close: nothing left for rank" << rank << "in" << m_config.closeTimeout.count()
                << "ms; dropping" << peer.link->unsentBytes() << "unsent bytes"
                << (peer.outbox->isEmpty() ? "" : "and messages not yet on the link") << "(the peer reads nothing)";
        else if (peer.state != PeerState::Left)
            qCInfo(lcWorld) << "close: rank" << rank << "did not say goodbye within" << m_config.closeTimeout.count()
                            << "ms";
    }
    finishClose();
}

void Engine::checkCloseDone()
{
    if (m_state != World::State::Closing || m_flushTimer.isActive())
        return;
    const bool everyoneLeft = std::all_of(m_peers.begin(), m_peers.end(), [](const Peer &p) {
        return !p.link || p.state == PeerState::Left;
    });
    if (everyoneLeft)
        m_flushTimer.start();
}

void Engine::finishClose()
{
    // Our own goodbye must reach the operating system before the links close,
    // or a peer would wait its whole close timeout for it.
    const bool flushed = std::all_of(m_peers.begin(), m_peers.end(), [](const Peer &p) {
        return !p.link || (p.outbox->isEmpty() && p.link->bytesToWrite() == 0);
    });
    if (!flushed && m_closeTimer.isActive())
        return;
    const QString reason = m_closeTimer.isActive() ? QStringLiteral("goodbyes said") : QStringLiteral("close timeout");
    m_flushTimer.stop();
    m_closeTimer.stop();
    m_heartbeatTimer.stop();
    m_ackTimer.stop();
    dropAllLinks();
    setStep(Step::Closed, reason);
}

void Engine::dropAllLinks()
{
    for (Peer &peer : m_peers) {
        if (peer.isReconnecting())
            setPeerState(peer, PeerState::Lost, QStringLiteral("this node left the world"));
        stopReconnecting(peer);
        discardLink(peer);
        if (peer.outbox)
            peer.outbox->failAll({ErrorCode::LinkClosed, QStringLiteral("this node left the world")});
    }
    for (auto *links : {&m_candidates, &m_earlyMeshLinks})
        for (const auto &[link, _] : std::exchange(*links, {}))
            if (link)
                link->deleteLater();
    if (m_transport) {
        stopDiscoverySteps();
        m_transport->stopListening();
    }
}

void Engine::shutdown()
{
    m_deadline.stop();
    m_closeTimer.stop();
    m_flushTimer.stop();
    m_heartbeatTimer.stop();
    m_ackTimer.stop();
    dropAllLinks();
}

} // namespace mmpi::detail
