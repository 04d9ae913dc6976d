#include "receivegate.h"

#include <mmpi/world/world.h>

namespace mmpi::detail {

// World::setReceiving() only queues the change for the progress thread, so it
// is called under the lock: the changes reach the world in the order made.
void ReceiveGate::hold(int rank, Holder holder)
{
    QMutexLocker lock(&m_mutex);
    quint8 &holders = m_holders[rank];
    const bool first = holders == 0;
    holders |= holder;
    if (first)
        m_world->setReceiving(rank, false);
}

void ReceiveGate::release(int rank, Holder holder)
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_holders.find(rank);
    if (it == m_holders.end() || !(*it & holder))
        return;
    *it &= quint8(~holder);
    if (*it != 0)
        return;
    m_holders.erase(it);
    m_world->setReceiving(rank, true);
}

} // namespace mmpi::detail
