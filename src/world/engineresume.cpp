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
        QTimer::singleShot(m_config.reconnectGracePeriod, this, [this, rank, epoch] {
            const Peer &p = m_peers.at(rank);
            if (p.isReconnecting() && p.epoch == epoch)
                giveUp(rank, World::FailureClass::NodeTerm,
                       {ErrorCode::NodeLost, QStringLiteral("no link to rank %1 again within the %2 ms grace period "
                                                            "(unreachable since: %3)")
                                                 .arg(rank)
                                                 .arg(m_config.reconnectGracePeriod.count())
                                                 .arg(p.unreachableReason.message)});
        });
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
    Q_EMIT nodeReturned(rank);
    Q_EMIT linkQualityChanged(rank);
    sendAck(rank);
    pump(rank);
}

void Engine::giveUp(int rank, World::FailureClass failureClass, const Error &reason)
{
    Peer &peer = m_peers[rank];
    stopReconnecting(peer);
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
