// ReceiveGate: the one switch per peer for the comm layer's two kinds of flow
// control - unexpected point-to-point messages (Matcher) and frames of
// collectives not started yet (CollectiveMatcher). The world reads from a
// rank again only once neither holds it, so one cannot undo the other's pause.
#pragma once

#include <QHash>
#include <QMutex>

namespace mmpi {
class World;
}

namespace mmpi::detail {

class ReceiveGate
{
public:
    enum Holder : quint8 {
        PointToPoint = 1,
        Collectives = 2,
    };

    explicit ReceiveGate(World *world) : m_world(world) {}

    // Thread-safe; the world is told only when the first holder comes or
    // the last one goes.
    void hold(int rank, Holder holder);
    void release(int rank, Holder holder);

private:
    World *m_world;
    QMutex m_mutex;
    QHash<int, quint8> m_holders;
};

} // namespace mmpi::detail
