#include "eagersends.h"

namespace mmpi::detail {

bool EagerSends::take(int worldRank, qint64 bytes)
{
    QMutexLocker lock(&m_mutex);
    qint64 &waiting = m_waiting[worldRank];
    if (waiting + bytes > WindowBytes)
        return false;
    waiting += bytes;
    return true;
}

void EagerSends::release(int worldRank, qint64 bytes)
{
    QMutexLocker lock(&m_mutex);
    m_waiting[worldRank] -= bytes;
}

} // namespace mmpi::detail
