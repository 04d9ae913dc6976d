#include <mmpi/wire/bufferpool.h>

#include <QList>
#include <QMutex>

#include <cstring>

namespace mmpi {

namespace {

// Sent messages come back in bursts, when the peer acknowledges a quarter
// of the replay buffer (2 MiB by default: 32 messages of 64 KiB).
constexpr qsizetype MaximumBuffers = 64;
// A buffer more than this many times larger than asked for stays for a
// message that needs it.
constexpr qsizetype MaximumSlack = 4;

qint64 defaultLimit()
{
    bool ok = false;
    const qint64 configured = qgetenv("MMPI_BUFFER_POOL_BYTES").toLongLong(&ok);
    if (ok && configured >= 0)
        return configured;
#if defined(Q_OS_ANDROID) || defined(Q_OS_IOS)
    return 4 * 1024 * 1024; // a phone's memory is shared with everything else
#else
    return 16 * 1024 * 1024;
#endif
}

struct Pool
{
    QMutex mutex;
    QList<QByteArray> buffers; // each unshared, empty, of capacity >= MinimumSize
    qint64 kept = 0;
    qint64 limit = defaultLimit();

    void trimTo(qint64 bytes)
    {
        while (kept > bytes && !buffers.isEmpty()) {
            kept -= buffers.first().capacity();
            buffers.removeFirst(); // the oldest
        }
    }
};

Pool &pool()
{
    static Pool instance;
    return instance;
}

// Index of the smallest kept buffer that holds `size` bytes without too
// much slack, or -1.
qsizetype bestFit(const QList<QByteArray> &buffers, qsizetype size)
{
    qsizetype best = -1;
    for (qsizetype i = 0; i < buffers.size(); ++i) {
        const qsizetype capacity = buffers[i].capacity();
        if (capacity >= size && capacity / MaximumSlack <= size
            && (best < 0 || capacity < buffers[best].capacity()))
            best = i;
    }
    return best;
}

} // namespace

QByteArray BufferPool::take(qsizetype size)
{
    if (size >= MinimumSize) {
        Pool &p = pool();
        QMutexLocker lock(&p.mutex);
        if (const qsizetype i = bestFit(p.buffers, size); i >= 0) {
            QByteArray bytes = p.buffers.takeAt(i);
            p.kept -= bytes.capacity();
            lock.unlock();
            bytes.resize(size); // within its capacity: no allocation
            return bytes;
        }
    }
    return QByteArray(size, Qt::Uninitialized);
}

void BufferPool::recycle(QByteArray &&bytes)
{
    QByteArray::DataPointer &d = bytes.data_ptr();
    const qsizetype capacity = d.constAllocatedCapacity();
    if (capacity < MinimumSize || d.isShared())
        return;
    // A slice of a larger message (Outbox) starts inside the allocation.
    d.setBegin(d.begin() - d.freeSpaceAtBegin());
    d.size = 0;
    Pool &p = pool();
    QMutexLocker lock(&p.mutex);
    if (capacity > p.limit)
        return;
    if (p.buffers.size() == MaximumBuffers) {
        p.kept -= p.buffers.first().capacity();
        p.buffers.removeFirst();
    }
    p.buffers.append(std::move(bytes));
    p.kept += capacity;
    p.trimTo(p.limit);
}

qint64 BufferPool::limit()
{
    Pool &p = pool();
    QMutexLocker lock(&p.mutex);
    return p.limit;
}

void BufferPool::setLimit(qint64 bytes)
{
    Pool &p = pool();
    QMutexLocker lock(&p.mutex);
    p.limit = qMax<qint64>(0, bytes);
    p.trimTo(p.limit);
}

qint64 BufferPool::keptBytes()
{
    Pool &p = pool();
    QMutexLocker lock(&p.mutex);
    return p.kept;
}

void BufferPool::clear()
{
    Pool &p = pool();
    QMutexLocker lock(&p.mutex);
    p.trimTo(0);
}

QByteArray BufferPool::owned(QByteArray bytes)
{
    if (!isBorrowed(bytes))
        return bytes;
    QByteArray copy = take(bytes.size());
    std::memcpy(copy.data(), bytes.constData(), size_t(bytes.size()));
    return copy;
}

} // namespace mmpi
