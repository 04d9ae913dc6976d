#include "lobby.h"

#include "qmlworld.h"

namespace mmpi {

Lobby::Lobby(QObject *parent) : QObject(parent), m_pendingJoins(new JoinRequestModel(this)) {}

void Lobby::setWorld(QmlWorld *world)
{
    if (m_world == world)
        return;
    if (m_world)
        disconnect(m_world, nullptr, this, nullptr);
    m_world = world;
    // Requests of another world are not this one's to answer.
    m_pendingJoins->clear();
    if (world) {
        connect(world, &QmlWorld::joinedChanged, this, &Lobby::reevaluate);
        connect(world, &QmlWorld::stateChanged, this, &Lobby::reevaluate);
        connect(world, &QObject::destroyed, this, &Lobby::reevaluate);
        watchJoinRequests(world);
    }
    Q_EMIT worldChanged();
    reevaluate();
}

void Lobby::setWanted(int wanted)
{
    if (m_wanted == wanted)
        return;
    m_wanted = qMax(1, wanted);
    Q_EMIT wantedChanged();
    reevaluate();
}

void Lobby::reevaluate()
{
    const int joined = m_world ? m_world->joined() : 0;
    const bool ready = m_world && m_world->state() == QmlWorld::State::Formed && joined >= m_wanted;
    if (joined != m_joined) {
        m_joined = joined;
        Q_EMIT joinedChanged();
    }
    if (ready != m_ready) {
        m_ready = ready;
        Q_EMIT readyChanged();
        if (ready)
            Q_EMIT allJoined();
    }
}

void Lobby::watchJoinRequests(QmlWorld *world)
{
    connect(world, &QmlWorld::joinRequested, m_pendingJoins, &JoinRequestModel::add);
    connect(world, &QmlWorld::joinRequestEnded, m_pendingJoins, &JoinRequestModel::remove);
    connect(world, &QObject::destroyed, m_pendingJoins, &JoinRequestModel::clear);
}

bool Lobby::confirm(int requestId)
{
    return answer(requestId, true);
}

bool Lobby::reject(int requestId)
{
    return answer(requestId, false);
}

bool Lobby::answer(int requestId, bool confirmed)
{
    World *world = m_world ? m_world->world() : nullptr;
    if (!world) {
        setErrorString(QStringLiteral("no join request %1: the lobby's world has not started").arg(requestId));
        return false;
    }
    const Result<void> answered = confirmed ? world->confirmJoin(requestId) : world->rejectJoin(requestId);
    setErrorString(answered ? QString() : answered.error().message);
    return bool(answered);
}

void Lobby::setErrorString(const QString &message)
{
    if (m_errorString == message)
        return;
    m_errorString = message;
    Q_EMIT errorStringChanged();
}

} // namespace mmpi
