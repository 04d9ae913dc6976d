// Joins a person confirms (WorldConfig::confirmJoins, docs/design/protocol.md,
// "Confirming joins"): the root holds each joining node's sealed link, unranked,
// until World::confirmJoin() or rejectJoin() answers its request, the request
// times out, or the node goes. Meanwhile other nodes join as usual.
#include "engine.h"

#include <mmpi/core/logging.h>
#include <mmpi/transport/sealedlink.h>

#include <algorithm>

namespace mmpi::detail {

void Engine::requestConfirmation(Link *link, const PeerIdentity &peer)
{
    // Every handshake seals its link; one that did not leaves no code for a person to compare.
    const auto *sealed = qobject_cast<SealedLink *>(link);
    if (!sealed) {
        qCWarning(lcWorld).noquote() << "refusing the unsealed join of node" << peer.nodeId;
        link->close();
        return link->deleteLater();
    }
    const int id = ++m_lastJoinRequest;
    link->setParent(this);
    m_joinRequests.append({id, link, peer});
    connect(link, &Link::stateChanged, this, [this, id](Link::State state) {
        if (state != Link::State::Closed)
            return;
        dismissJoin(takeJoinRequest(id), std::nullopt, QStringLiteral("the node closed its link"));
        checkDiscoveryWindow();
    });
    QTimer::singleShot(m_config.confirmTimeout, this, [this, id] {
        refuseJoin(id, JoinRefusal::NotConfirmed,
                   QStringLiteral("nobody confirmed it within %1 ms").arg(m_config.confirmTimeout.count()));
    });
    qCInfo(lcWorld).noquote() << "join request" << id << "of node" << peer.nodeId << "at" << link->peerAddress()
                              << "waits for confirmation, code" << sealed->verificationCode();
    Q_EMIT joinRequested(id, peer.nodeId, link->peerAddress(), sealed->verificationCode());
}

void Engine::answerJoin(int requestId, bool confirmed)
{
    if (!confirmed)
        return refuseJoin(requestId, JoinRefusal::Rejected, QStringLiteral("it was rejected at the root"));
    const JoinRequest request = takeJoinRequest(requestId);
    if (request.id == 0)
        return;
    Link *link = request.link;
    if (!link || link->state() != Link::State::Connected)
        return dismissJoin(request, std::nullopt, QStringLiteral("confirmed after its link closed"));
    link->disconnect(this);
    qCInfo(lcWorld).noquote() << "join request" << requestId << "of node" << request.peer.nodeId << "confirmed";
    Q_EMIT joinRequestEnded(requestId);
    if (m_formation.role() == FormationState::Role::LaunchedRoot)
        return seatJoined(link, request.peer);
    takeCandidate(link, request.peer);
}

// A discovered root keeps a refused node in m_contacted: its next advert
// does not bring the question back to the person.
void Engine::refuseJoin(int requestId, JoinRefusal cause, const QString &reason)
{
    const JoinRequest request = takeJoinRequest(requestId);
    if (request.id == 0)
        return;
    dismissJoin(request, encodeControl(JoinRefused{cause, reason}), reason);
    checkDiscoveryWindow();
}

Engine::JoinRequest Engine::takeJoinRequest(int requestId)
{
    const auto found = std::find_if(m_joinRequests.begin(), m_joinRequests.end(),
                                    [requestId](const JoinRequest &r) { return r.id == requestId; });
    if (found == m_joinRequests.end())
        return {};
    const JoinRequest request = *found;
    m_joinRequests.erase(found);
    return request;
}

void Engine::dismissJoin(const JoinRequest &request, const std::optional<Frame> &notice, const QString &why)
{
    if (request.id == 0)
        return;
    qCInfo(lcWorld).noquote() << "join request" << request.id << "of node" << request.peer.nodeId
                              << "ended:" << why;
    if (Link *link = request.link) {
        link->disconnect(this);
        if (notice && link->state() == Link::State::Connected)
            link->sendFrame(*notice);
        link->close(); // after the notice: a link flushes what it holds before it closes
        link->deleteLater();
    }
    Q_EMIT joinRequestEnded(request.id);
}

bool Engine::awaitsConfirmation(int rank) const
{
    return std::any_of(m_joinRequests.begin(), m_joinRequests.end(),
                       [rank](const JoinRequest &r) { return r.peer.rank == rank; });
}

void Engine::endJoinRequests(const Frame &notice, const QString &why)
{
    for (const JoinRequest &request : std::exchange(m_joinRequests, {}))
        dismissJoin(request, notice, why);
}

// A formation that runs out of time while people still decide says so:
// the missing nodes may be there, waiting for an answer.
QString Engine::describeOpenJoinRequests() const
{
    if (m_joinRequests.isEmpty())
        return {};
    QStringList nodes;
    for (const JoinRequest &request : m_joinRequests)
        nodes << request.peer.nodeId;
    return QStringLiteral("; %1 join request(s) still unanswered (node %2)")
        .arg(m_joinRequests.size())
        .arg(nodes.join(QStringLiteral(", ")));
}

void Engine::handleJoinRefused(const Frame &frame)
{
    const auto refused = decodeControl<JoinRefused>(frame);
    if (!refused)
        return fail(refused.error());
    const ErrorCode code = refused->cause == JoinRefusal::Rejected ? ErrorCode::JoinRejected
                                                                   : ErrorCode::JoinNotConfirmed;
    fail({code, QStringLiteral("the root did not admit this node: %1").arg(refused->reason)});
}

} // namespace mmpi::detail
