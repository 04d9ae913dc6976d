// The engine's reconnection and resume (docs/design/resume.md): a
// peer whose link broke is unreachable; the higher rank of the pair dials the
// lower one again (one link per pair, as at formation) while the lower one
// probes the higher one's address to learn early if its app has ended; on the
// new link each side first says what it received, then resends what the other
// lacks. Until the grace period ends nothing sent to the peer is lost.
#include "engine.h"

#include <mmpi/core/logging.h>

#include <QMetaEnum>

namespace mmpi::detail {

namespace {

// Retries of a silent peer start fast and double up to the cap, so a phone
// back in range is found within a couple of seconds at most.
constexpr int FirstRetryMs = 50;
constexpr int MaxRetryMs = 2000;

const char *className(World::FailureClass failureClass)
{
    return QMetaEnum::fromType<World::FailureClass>().valueToKey(int(failureClass));
}

} // namespace

World::FailureClass failureClassOf(const Error &reason)
{
    return reason.code == ErrorCode::NodeLost ? World::FailureClass::Range : World::FailureClass::Normal;
}

bool Engine::tryReconnect(int rank, const Error &reason)
{
    Peer &peer = m_peers[rank];
    if (m_config.reconnectGracePeriod.count() == 0 || peer.info.address.isEmpty())
        return false;
    if (!peer.isReconnecting()) {
        setPeerState(peer, PeerState::Unreachable, reason.message);
        peer.failureClass = failureClassOf(reason);
        peer.unreachableReason = reason;
        peer.unreachableFor.start();
        peer.attempt = 0;
        const int epoch = ++peer.epoch;
        m_detector->markUnreachable(rank);
        qCWarning(lcWorld).noquote() << "rank" << rank << "is unreachable (" << className(peer.failureClass)
                                     << "):" << reason.message << "; reconnecting for up to"
                                     << m_config.reconnectGracePeriod.count() << "ms";
        peer.lastAttemptError = {};
        QTimer::singleShot(m_config.reconnectGracePeriod, this,
                           [this, rank, epoch] { handleGraceEnded(rank, epoch, false); });
        Q_EMIT nodeUnreachable(rank, peer.failureClass);
        Q_EMIT linkQualityChanged(rank);
    }
    scheduleAttempt(rank);
    return true;
}

// A broken link (Normal) is tried again at once; after that, and for a silent
// peer (Range), with backoff.
void Engine::scheduleAttempt(int rank)
{
    const Peer &peer = m_peers.at(rank);
    const bool atOnce = peer.attempt == 0 && peer.failureClass == World::FailureClass::Normal;
    const int delay = atOnce ? 0 : std::min(MaxRetryMs, FirstRetryMs << std::min(peer.attempt, 6));
    const int epoch = peer.epoch;
    QTimer::singleShot(delay, this, [this, rank, epoch] {
        if (m_peers.at(rank).epoch == epoch)
            attemptReconnect(rank);
    });
}

void Engine::attemptReconnect(int rank)
{
    Peer &peer = m_peers[rank];
    if (!peer.isReconnecting() || peer.attemptLink || peer.link)
        return;
    ++peer.attempt;
    if (m_rank > rank)
        dialPeer(rank);
    else
        probePeer(rank);
}

void Engine::dialPeer(int rank)
{
    Peer &peer = m_peers[rank];
    auto link = m_transport->connectTo(peer.info.address);
    if (!link)
        return handleAttemptFailed(rank, link.error());
    peer.attemptLink = *link;
    (*link)->setParent(this);
    auto *handshake = Handshake::connect(*link, identity(), LinkPurpose::Resume, m_config.handshakeTimeout, this);
    connect(handshake, &Handshake::succeeded, this, [this, rank](Link *l, const PeerIdentity &id) {
        Peer &p = m_peers[rank];
        p.attemptLink = nullptr;
        if (p.isReconnecting() && !p.link && id.nodeId == p.info.nodeId)
            return resumeOn(rank, l);
        l->close();
        l->deleteLater();
        if (p.isReconnecting() && !p.link)
            handleAttemptFailed(rank, {ErrorCode::ProtocolViolation,
                                       QStringLiteral("the node at %1 is not rank %2").arg(p.info.address).arg(rank)});
    });
    connect(handshake, &Handshake::failed, this, [this, rank](Link *l, const Error &error) {
        if (l)
            l->deleteLater();
        m_peers[rank].attemptLink = nullptr;
        handleAttemptFailed(rank, error);
    });
}

// The lower rank waits to be dialled, but a connect tells it whether anything
// still listens at the peer's address: refused means the peer's app ended.
void Engine::probePeer(int rank)
{
    Peer &peer = m_peers[rank];
    auto link = m_transport->connectTo(peer.info.address);
    if (!link)
        return handleAttemptFailed(rank, link.error());
    Link *probe = *link;
    probe->setParent(this);
    peer.attemptLink = probe;
    connect(probe, &Link::stateChanged, this, [this, rank, probe](Link::State state) {
        if (state == Link::State::Connecting)
            return;
        probe->disconnect(this);
        m_peers[rank].attemptLink = nullptr;
        const Error error = probe->error();
        if (state == Link::State::Connected)
            probe->close();
        probe->deleteLater();
        if (state == Link::State::Connected)
            return scheduleAttempt(rank); // alive: it will dial us
        handleAttemptFailed(rank, error.isError() ? error
                                                  : Error{ErrorCode::LinkClosed, QStringLiteral("probe closed")});
    });
}

void Engine::handleAttemptFailed(int rank, const Error &error)
{
    Peer &peer = m_peers[rank];
    if (!peer.isReconnecting() || peer.link)
        return;
    if (error.code == ErrorCode::PairingRefused && peer.lastAttemptError.code != ErrorCode::PairingRefused)
        qCWarning(lcWorld).noquote() << "rank" << rank << "is in reach but its device refuses to pair again:"
                                     << error.message;
    peer.lastAttemptError = error;
    if (error.code == ErrorCode::ConnectionRefused)
        return giveUp(rank, World::FailureClass::NodeTerm,
                      {ErrorCode::NodeLost, QStringLiteral("rank %1's app has ended: %2").arg(rank).arg(error.message)});
    if (peer.failureClass == World::FailureClass::Normal) {
        // Reconnecting at once failed: not a passing I/O error, the peer is
        // out of reach (Range), and is tried again with backoff.
        peer.failureClass = World::FailureClass::Range;
        qCWarning(lcWorld).noquote() << "rank" << rank << "is out of reach (Range):" << error.message;
        Q_EMIT nodeUnreachable(rank, peer.failureClass);
    }
    qCDebug(lcWorld).noquote() << "reconnecting to rank" << rank << ": attempt" << peer.attempt
                               << "failed:" << error.message;
    scheduleAttempt(rank);
}

Result<void> Engine::admitResume(const PeerIdentity &peer) const
{
    if (peer.purpose != LinkPurpose::Resume)
        return Error(ErrorCode::AuthenticationFailed, QStringLiteral("the world is formed; only a member may link again"));
    if (peer.rank <= m_rank || peer.rank >= m_size)
        return Error(ErrorCode::AuthenticationFailed,
                     QStringLiteral("rank %1 should not reconnect to rank %2").arg(peer.rank).arg(m_rank));
    const Peer &known = m_peers.at(peer.rank);
    if (known.info.nodeId != peer.nodeId)
        return Error(ErrorCode::AuthenticationFailed,
                     QStringLiteral("node %1 is not rank %2").arg(peer.nodeId).arg(peer.rank));
    if (!known.isMember())
        return Error(ErrorCode::AuthenticationFailed,
                     QStringLiteral("rank %1 has left or was given up").arg(peer.rank));
    return success();
}

// The peer noticed the break first when its old link still looks fine here:
// that link is dead too, and goes quietly.
void Engine::handleResumeLink(Link *link, const PeerIdentity &id)
{
    const int rank = id.rank;
    Peer &peer = m_peers[rank];
    if (peer.link) {
        discardLink(peer);
        tryReconnect(rank, {ErrorCode::LinkError, QStringLiteral("rank %1 reconnected: its old link is broken").arg(rank)});
    }
    if (!peer.isReconnecting()) {
        link->close();
        link->deleteLater();
        return;
    }
    resumeOn(rank, link);
}

void Engine::handleResumeRefused(Link *link, const Error &error)
{
    // A peer's probe: it connects and closes without a word.
    if (error.code == ErrorCode::LinkClosed) {
        qCDebug(lcWorld).noquote() << "a link from" << (link ? link->peerAddress() : QString())
                                   << "closed before its handshake (a probe)";
        if (link)
            link->deleteLater();
        return;
    }
    handleRefused(link, error);
}

void Engine::resumeOn(int rank, Link *link)
{
    Peer &peer = m_peers[rank];
    connectLink(rank, link);
    setPeerState(peer, PeerState::Resuming, link->peerAddress());
    link->sendFrame(encodeControl(Resume{peer.stream->received()}));
}

void Engine::handleResume(int rank, const Frame &frame)
{
    Peer &peer = m_peers[rank];
    const auto resume = decodeControl<Resume>(frame);
    if (!resume)
        return closeLink(rank, resume.error());
    const auto resent = peer.stream->resume(peer.link, resume->received);
    if (!resent)
        return giveUp(rank, World::FailureClass::NodeTerm,
                      {ErrorCode::ProtocolViolation,
                       QStringLiteral("cannot resume the stream to rank %1: %2").arg(rank).arg(resent.error().message)});
    setPeerState(peer, PeerState::Linked, QStringLiteral("resumed"));
    const qint64 away = peer.unreachableFor.elapsed();
    stopReconnecting(peer);
    m_detector->watch(rank, FailureDetector::Clock::now(), peer.link->counters().framesSent);
    // A warning like the outage it ends, so that logs show both.
    qCWarning(lcWorld).noquote() << "rank" << rank << "is back after" << away << "ms; resent" << *resent
                                 << "frame(s) it had not received";
    retellVerdicts(rank);
    Q_EMIT nodeReturned(rank);
    Q_EMIT linkQualityChanged(rank);
    sendAck(rank);
    pump(rank);
}

// One view of a member that does not come back (docs/design/resume.md, "One
// view"): the lower rank of a broken pair decides. The higher one, at the end
// of its own grace period, waits as long again to hear the verdict (GivenUp),
// through any member, and decides itself only if none comes (the lower rank
// is gone too). A member back to some peers and not to others is so given up
// by all, never kept by some.
void Engine::handleGraceEnded(int rank, int epoch, bool waitedForLower)
{
    const Peer &peer = m_peers.at(rank);
    if (!peer.isReconnecting() || peer.epoch != epoch)
        return;
    if (rank < m_rank && !waitedForLower) {
        qCInfo(lcWorld).noquote() << "grace period for rank" << rank << "over; waiting up to"
                                  << m_config.reconnectGracePeriod.count()
                                  << "ms for the verdict of the lower rank of the pair";
        QTimer::singleShot(m_config.reconnectGracePeriod, this,
                           [this, rank, epoch] { handleGraceEnded(rank, epoch, true); });
        return;
    }
    const bool pairing = peer.lastAttemptError.code == ErrorCode::PairingRefused;
    const QString why = pairing ? QStringLiteral("its device refuses to pair again: %1").arg(peer.lastAttemptError.message)
                                : QStringLiteral("unreachable since: %1").arg(peer.unreachableReason.message);
    const QString verdict = waitedForLower ? QStringLiteral(", nor word from it in as long again") : QString();
    giveUp(rank, World::FailureClass::NodeTerm,
           {pairing ? ErrorCode::PairingRefused : ErrorCode::NodeLost,
            QStringLiteral("no link to rank %1 again within the %2 ms grace period%3 (%4)")
                .arg(rank)
                .arg(m_config.reconnectGracePeriod.count())
                .arg(verdict, why)});
}

void Engine::announceGiveUp(int rank, const Error &reason, Verdict verdict)
{
    if (verdict == Verdict::Local || m_state != World::State::Formed)
        return;
    m_peers[rank].verdict = reason.message.left(512);
    const Frame notice = encodeControl(GivenUp{rank, m_peers.at(rank).info.nodeId, m_peers.at(rank).verdict});
    for (int other = 0; other < m_peers.size(); ++other) {
        const Peer &peer = m_peers.at(other);
        const bool tell = verdict == Verdict::Ours ? other != m_rank : other == rank;
        if (tell && peer.link && peer.isMember())
            peer.link->sendFrame(notice);
    }
}

// A verdict sent while the link to `rank` was down never reached it: the
// resumed link carries every verdict again (a repeat is ignored).
void Engine::retellVerdicts(int rank)
{
    for (int other = 0; other < m_peers.size(); ++other) {
        const Peer &peer = m_peers.at(other);
        if (other != rank && peer.state == PeerState::Lost && !peer.verdict.isEmpty())
            m_peers[rank].link->sendFrame(encodeControl(GivenUp{other, peer.info.nodeId, peer.verdict}));
    }
}

void Engine::handleGivenUp(int from, const Frame &frame)
{
    const auto notice = decodeControl<GivenUp>(frame);
    if (!notice)
        return closeLink(from, notice.error());
    if (notice->rank == m_rank && notice->nodeId == identity().nodeId) {
        qCWarning(lcWorld).noquote() << "rank" << from << "gave this node up:" << notice->reason;
        for (int rank = 0; rank < m_peers.size(); ++rank)
            if (rank != m_rank && m_peers.at(rank).isMember())
                giveUp(rank, World::FailureClass::NodeTerm,
                       {ErrorCode::NodeLost, QStringLiteral("rank %1 gave this node up, so the world goes on without "
                                                            "it: %2").arg(from).arg(notice->reason)},
                       Verdict::Local);
        return;
    }
    if (notice->rank >= m_peers.size() || notice->rank == m_rank)
        return;
    const Peer &peer = m_peers.at(notice->rank);
    if (!peer.isMember() || peer.info.nodeId != notice->nodeId)
        return; // given up here too already, or replaced since
    giveUp(notice->rank, World::FailureClass::NodeTerm,
           {ErrorCode::NodeLost,
            QStringLiteral("rank %1 gave rank %2 up: %3").arg(from).arg(notice->rank).arg(notice->reason)},
           Verdict::Told);
}

void Engine::giveUp(int rank, World::FailureClass failureClass, const Error &reason, Verdict verdict)
{
    Peer &peer = m_peers[rank];
    stopReconnecting(peer);
    // Before its link goes: the member itself hears it too.
    announceGiveUp(rank, reason, verdict);
    discardLink(peer);
    setPeerState(peer, PeerState::Lost, reason.message);
    if (!m_detector->giveUp(rank))
        m_detector->release(rank, World::NodeStatus::Lost);
    if (peer.outbox)
        peer.outbox->failAll({ErrorCode::LinkClosed,
                              QStringLiteral("the link to rank %1 is gone: %2").arg(rank).arg(reason.message)});
    qCWarning(lcWorld).noquote() << "lost rank" << rank << "(" << className(failureClass) << "):" << reason.message;
    Q_EMIT linkQualityChanged(rank);
    Q_EMIT nodeLost(rank, failureClass, reason);
}

void Engine::stopReconnecting(Peer &peer)
{
    ++peer.epoch;
    if (Link *attempt = peer.attemptLink) {
        attempt->disconnect(this);
        attempt->close();
        attempt->deleteLater();
    }
    peer.attemptLink = nullptr;
}

} // namespace mmpi::detail
