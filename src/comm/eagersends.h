// EagerSends: lets a small point-to-point send finish as soon as it is posted,
// as MPI's eager protocol does, while the bytes so reported that no link has
// taken yet stay under a bound per destination. Past the bound a send
// finishes when its link takes it, so a fast sender is still slowed by a slow
// link. Thread-safe.
#pragma once

#include <QHash>
#include <QMutex>

namespace mmpi::detail {

class EagerSends
{
public:
    // Open MPI's tcp eager limit (btl_tcp_eager_limit): what an MPI program
    // expects to leave without waiting, kept per destination here.
    static constexpr qint64 WindowBytes = 64 * 1024;

    // Whether a send of `bytes` to `worldRank` may finish now; if so, its
    // bytes count until release().
    bool take(int worldRank, qint64 bytes);
    // The link took (or refused) a send that take() let finish.
    void release(int worldRank, qint64 bytes);

private:
    QMutex m_mutex;
    QHash<int, qint64> m_waiting;
};

} // namespace mmpi::detail
