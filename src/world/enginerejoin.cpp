// Rejoining (docs/guide/fault-tolerance.md#rebuild): a replacement node takes the
// rank of a member the world has given up. It joins through the root (or,
// replacing rank 0, through any survivor), which answers with the current
// rank table, then links to every other member;
// each member admits it only once it has given the old node up itself, so
// the replacement retries refusals until its formation deadline. Both ends
// of every new link start their streams afresh: nothing of the old node's
// traffic carries over (its state comes back from a checkpoint).
#include "engine.h"

#include <mmpi/core/logging.h>

#include <algorithm>

namespace mmpi::detail {

namespace {

Error rejoinRefusal(const QString &message)
{
    return {ErrorCode::AuthenticationFailed, message};
}

} // namespace

Result<void> Engine::admitRejoin(const PeerIdentity &peer) const
{
    if (peer.rank < 0 || peer.rank >= m_size || peer.rank == m_rank)
        return rejoinRefusal(QStringLiteral("rank %1 cannot rejoin this world of %2 through rank %3")
                                 .arg(peer.rank).arg(m_size).arg(m_rank));
    const Peer &known = m_peers.at(peer.rank);
    if (known.isMember())
        return rejoinRefusal(QStringLiteral("rank %1 is still a member here (%2)")
                                 .arg(peer.rank)
                                 .arg(known.isReconnecting() ? QStringLiteral("reconnecting to it")
                                                             : QStringLiteral("linked")));
    // This very node is the one being dialled (a new node told of), or the one given up.
    if (known.info.nodeId == peer.nodeId && known.state != PeerState::Linking)
        return rejoinRefusal(QStringLiteral("node %1 was given up as rank %2; a replacement needs a new identity")
                                 .arg(peer.nodeId).arg(peer.rank));
    return lowerRankDials(known, peer.rank);
}

// Of two new nodes dialling each other at once, the lower rank's link stays.
Result<void> Engine::lowerRankDials(const Peer &known, int rank) const
{
    if (known.state == PeerState::Linking && m_rank < rank)
        return rejoinRefusal(QStringLiteral("rank %1 dials rank %2 itself (the lower rank's link stays)")
                                 .arg(m_rank).arg(rank));
    return success();
}

// Replacements rejoining at overlapping times (members lost together or one
// after the other) link to each other as they link to the survivors: a later
// one finds an earlier one in its rank table, or at the fixed address of the
// rank, and dials it. When two of them dial each other at once, the lower
// rank's link stays: the higher one accepts it even while dialling, the lower
// one refuses while it dials, and a dial that finds the rank linked is closed.
Result<void> Engine::admitFellowReplacement(const PeerIdentity &peer) const
{
    if (peer.purpose != LinkPurpose::Rejoin)
        return rejoinRefusal(QStringLiteral("this node is rejoining as rank %1 and accepts links only from other new "
                                      "nodes until it has")
                           .arg(m_rank));
    if (!m_formation.hasRankTable())
        return success(); // checked against the rank table when it arrives
    if (peer.rank < 0 || peer.rank >= m_size || peer.rank == m_rank)
        return rejoinRefusal(QStringLiteral("rank %1 cannot rejoin this world of %2 through rank %3")
                           .arg(peer.rank).arg(m_size).arg(m_rank));
    const Peer &known = m_peers.at(peer.rank);
    if (known.link)
        return rejoinRefusal(QStringLiteral("rank %1 is already linked").arg(peer.rank));
    return lowerRankDials(known, peer.rank);
}

QString Engine::contactAddress() const
{
    const QStringList contacts = QStringList{m_config.rootAddress} + m_config.rejoinContacts;
    return contacts.at(m_contactIndex % contacts.size());
}

void Engine::nextContact()
{
    if (!m_config.rejoinContacts.isEmpty())
        ++m_contactIndex;
}

// A member lost while this node rejoins is gone for it too: the survivors
// will report it lost, and a replacement of it dials this node. Only the
// contact lost before its rank table came leaves this node nothing to go
// on: it asks the next member.
bool Engine::handleLossWhileRejoining(int rank, const Error &reason)
{
    const Step step = m_formation.step();
    if (step == Step::AwaitingRankTable && rank == m_contact && m_formation.canMoveTo(Step::ContactingRoot)) {
        qCWarning(lcWorld).noquote() << "rank" << rank << "was lost before it sent the rank table:" << reason.message
                                     << "; asking the next member";
        nextContact();
        setStep(Step::ContactingRoot, QStringLiteral("joining through %1").arg(contactAddress()));
        retryLater(m_rootAttempts, [this] { connectToRoot(); });
        return true;
    }
    if (step != Step::LinkingSurvivors)
        return false;
    forgetMember(rank, reason);
    return true;
}

void Engine::forgetMember(int rank, const Error &reason)
{
    qCInfo(lcWorld).noquote() << "rank" << rank << "is gone while this node rejoins:" << reason.message;
    Peer &peer = m_peers[rank];
    peer.info.address.clear(); // not expected any more
    setPeerState(peer, PeerState::Lost, reason.message);
    checkMeshComplete();
}

// Survivor side: the lost member's rank gets the new node, with fresh
// streams, and (on the root) the replacement learns who else is there.
void Engine::handleRejoinLink(Link *link, const PeerIdentity &id)
{
    const int rank = id.rank;
    Peer &peer = m_peers[rank];
    stopReconnecting(peer);
    discardLink(peer);
    peer.info = {rank, id.nodeId, id.listenAddress};
    peer.verdict.clear();
    peer.closeReason = {};
    peer.failureClass = World::FailureClass::Normal;
    restartStreams(peer);
    connectLink(rank, link);
    setPeerState(peer, PeerState::Linked, QStringLiteral("node %1 rejoined").arg(id.nodeId));
    if (!peer.receiving)
        link->setReading(false);
    m_detector->watch(rank, FailureDetector::Clock::now(), link->counters().framesSent);
    if (startsRejoin(id.purpose))
        link->sendFrame(encodeControl(currentRankTable()));
    // Another new node that came before it may not know of it (its rank
    // table listed the old node, or none): it dials when told.
    const Frame notice = encodeControl(Rejoined{{rank, id.nodeId, id.listenAddress}});
    for (int other = 0; other < m_size; ++other)
        if (other != rank && other != m_rank && m_peers.at(other).link && m_peers.at(other).isMember())
            m_peers[other].link->sendFrame(notice);
    qCWarning(lcWorld).noquote() << "rank" << rank << "rejoined: node" << id.nodeId << "at"
                                 << id.listenAddress << "replaces the lost one";
    Q_EMIT nodeRejoined(rank, peer.info);
    Q_EMIT linkQualityChanged(rank);
}

// A new node in a rank this node (a new node too) has no link to: dial it,
// while rejoining as one of the members to link to, once formed on its own.
void Engine::handleRejoinNotice(const Frame &frame)
{
    const auto notice = decodeControl<Rejoined>(frame);
    if (!notice) {
        qCWarning(lcWorld).noquote() << "ignoring a rejoin notice:" << notice.error().message;
        return;
    }
    const RankEntry &e = notice->entry;
    if (!m_formation.rejoining() || e.rank >= m_size || e.rank == m_rank)
        return; // a member that was there all along: the new node dials it
    Peer &peer = m_peers[e.rank];
    if (peer.link || peer.isMember() || (peer.state == PeerState::Linking && peer.info.nodeId == e.nodeId))
        return; // linked, still has the node before it, or dialling it already
    peer.info = {e.rank, e.nodeId, e.address};
    peer.verdict.clear();
    qCInfo(lcWorld).noquote() << "rank" << e.rank << "rejoined as node" << e.nodeId << "at" << e.address
                              << ": linking to it";
    if (m_formation.step() == Step::LinkingSurvivors)
        return dialMember(e.rank);
    if (m_state == World::State::Formed)
        dialFellow(e.rank);
}

void Engine::dialFellow(int rank)
{
    Peer &peer = m_peers[rank];
    if (m_state != World::State::Formed || peer.link || peer.isMember())
        return;
    auto link = m_transport->connectTo(peer.info.address);
    if (!link) {
        qCWarning(lcWorld).noquote() << "cannot link to rank" << rank << "at" << peer.info.address << ":"
                                     << link.error().message;
        return;
    }
    setPeerState(peer, PeerState::Linking, peer.info.address);
    auto *handshake = Handshake::connect(*link, identity(), LinkPurpose::Rejoin, m_config.handshakeTimeout, this);
    connect(handshake, &Handshake::succeeded, this,
            [this, rank, nodeId = peer.info.nodeId](Link *l, const PeerIdentity &id) {
                if (m_state != World::State::Formed || id.nodeId != nodeId || m_peers.at(rank).link) {
                    l->close(); // linked the other way meanwhile, or not the node told of
                    l->deleteLater();
                    return;
                }
                handleRejoinLink(l, {LinkPurpose::Rejoin, id.nodeId, rank, id.listenAddress});
            });
    connect(handshake, &Handshake::failed, this, [this, rank](Link *l, const Error &e) {
        if (l)
            l->deleteLater();
        Peer &p = m_peers[rank];
        if (p.state != PeerState::Linking)
            return;
        // The backoff reaches its 1 s ceiling after 5 tries: this allows
        // about as long as a formation's default deadline.
        constexpr int MaxFellowAttempts = 30;
        if (m_meshAttempts[rank] >= MaxFellowAttempts) {
            setPeerState(p, PeerState::Lost, e.message);
            qCWarning(lcWorld).noquote() << "gave up linking to rank" << rank << ":" << e.message;
            return;
        }
        retryLater(m_meshAttempts[rank], [this, rank] {
            if (m_peers.at(rank).state == PeerState::Linking) {
                setPeerState(m_peers[rank], PeerState::Lost, QStringLiteral("dialling again"));
                dialFellow(rank);
            }
        });
    });
}

// ---------------------------------------------------------------- spares

void Engine::inviteSpare(int rank)
{
    const auto refuse = [this, rank](ErrorCode code, const QString &why) {
        Q_EMIT spareNotFound(rank, {code, QStringLiteral("no spare invited to rank %1: %2").arg(rank).arg(why)});
    };
    if (m_state != World::State::Formed)
        return refuse(ErrorCode::NotFormed, QStringLiteral("the world is not formed"));
    if (rank < 0 || rank >= m_size || rank == m_rank)
        return refuse(ErrorCode::InvalidRank, QStringLiteral("not another rank of this world of %1").arg(m_size));
    if (m_peers.at(rank).isMember())
        return refuse(ErrorCode::InvalidRank, QStringLiteral("rank %1 is still a member here").arg(rank));
    m_invited.insert(rank);
    if (!m_inviteTimer.isActive()) {
        connect(m_transport, &Transport::peerDiscovered, this, &Engine::handleSpareAdvert, Qt::UniqueConnection);
        if (auto started = m_transport->startDiscovery(m_config.worldName); !started) {
            m_invited.remove(rank);
            return refuse(started.error().code, started.error().message);
        }
        m_sparesAsked.clear();
        qCInfo(lcWorld).noquote() << "looking for a spare of world" << m_config.worldName << "to take rank" << rank;
    }
    m_inviteTimer.start(m_config.discoveryTimeout);
}

void Engine::handleSpareAdvert(const PeerAdvert &advert)
{
    if (m_invited.isEmpty() || advert.worldName != m_config.worldName || advert.nodeId == m_nodeId
        || m_sparesAsked.contains(advert.nodeId))
        return;
    const bool member = std::any_of(m_peers.cbegin(), m_peers.cend(),
                                    [&](const Peer &p) { return p.info.nodeId == advert.nodeId; });
    if (member)
        return;
    m_sparesAsked.insert(advert.nodeId);
    const int rank = *std::min_element(m_invited.cbegin(), m_invited.cend());
    m_invited.remove(rank); // offered to this spare; offered again if it says no
    offerRank(rank, advert);
}

void Engine::offerRank(int rank, const PeerAdvert &spare)
{
    const auto offerAgain = [this, rank, spare](const QString &why) {
        qCInfo(lcWorld).noquote() << "the spare at" << spare.address << "did not take rank" << rank << ":" << why;
        if (m_inviteTimer.isActive() && !m_peers.at(rank).isMember())
            m_invited.insert(rank);
    };
    auto link = m_transport->connectTo(spare.address);
    if (!link)
        return offerAgain(link.error().message);
    auto *handshake = Handshake::connect(*link, identity(), LinkPurpose::Invite, m_config.handshakeTimeout, this);
    connect(handshake, &Handshake::succeeded, this, [this, rank](Link *l, const PeerIdentity &peer) {
        const Peer &lost = m_peers.at(rank);
        if (m_state != World::State::Formed || lost.isMember()) {
            l->close();
            l->deleteLater();
            return;
        }
        handleRejoinLink(l, {LinkPurpose::Invite, peer.nodeId, rank, peer.listenAddress});
        if (m_invited.isEmpty())
            stopInviting();
    });
    connect(handshake, &Handshake::failed, this, [offerAgain](Link *l, const Error &e) {
        if (l)
            l->deleteLater();
        offerAgain(e.message);
    });
}

void Engine::handleInviteTimeout()
{
    const QSet<int> unanswered = std::exchange(m_invited, {});
    stopInviting();
    for (int rank : unanswered)
        Q_EMIT spareNotFound(rank, {ErrorCode::DiscoveryFailed,
                                    QStringLiteral("no spare of world '%1' took rank %2 within %3 ms")
                                        .arg(m_config.worldName)
                                        .arg(rank)
                                        .arg(m_config.discoveryTimeout.count())});
}

void Engine::stopInviting()
{
    m_inviteTimer.stop();
    m_transport->stopDiscovery();
    disconnect(m_transport, &Transport::peerDiscovered, this, &Engine::handleSpareAdvert);
}

// Members this node no longer has (left or lost) go out without an address:
// the replacement does not wait for them.
RankTable Engine::currentRankTable() const
{
    RankTable table;
    for (int rank = 0; rank < m_size; ++rank) {
        const Peer &peer = m_peers.at(rank);
        if (rank == m_rank) {
            table.entries.append({rank, m_nodeId, m_listenAddress});
            continue;
        }
        table.entries.append({rank, peer.info.nodeId, peer.isMember() ? peer.info.address : QString()});
    }
    return table;
}

// Members gone before this node rejoined are lost to it from the start, so
// that everything above (communicators, fault tolerance) sees the same world
// as the survivors.
void Engine::reportAbsentMembers()
{
    for (int rank = 0; rank < m_size; ++rank) {
        if (rank == m_rank || m_peers.at(rank).link)
            continue;
        m_detector->release(rank, World::NodeStatus::Lost);
        const Error reason{ErrorCode::NodeLost,
                           QStringLiteral("rank %1 was already gone when rank %2 rejoined").arg(rank).arg(m_rank)};
        setPeerState(m_peers[rank], PeerState::Lost, reason.message);
        Q_EMIT linkQualityChanged(rank);
        Q_EMIT nodeLost(rank, World::FailureClass::NodeTerm, reason);
    }
}

} // namespace mmpi::detail
