#include "lobby.h"

#include "qmlworld.h"

namespace mmpi {

Lobby::Lobby(QObject *parent) : QObject(parent) {}

void Lobby::setWorld(QmlWorld *world)
{
    if (m_world == world)
        return;
    if (m_world)
        disconnect(m_world, nullptr, this, nullptr);
    m_world = world;
    if (world) {
        connect(world, &QmlWorld::joinedChanged, this, &Lobby::reevaluate);
        connect(world, &QmlWorld::stateChanged, this, &Lobby::reevaluate);
        connect(world, &QObject::destroyed, this, &Lobby::reevaluate);
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

} // namespace mmpi
