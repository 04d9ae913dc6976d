#include "collectivematcher.h"

#include "collectiveop.h"
#include "collectivetag.h"

#include <mmpi/core/logging.h>

namespace mmpi::detail {

namespace {

// Enough to cover every collective that can still have frames in flight
// (a straggler needs a started collective somewhere, and that one waits).
constexpr size_t FinishedMemory = 4096;

} // namespace

CollectiveMatcher::CollectiveMatcher(std::shared_ptr<ReceiveGate> gate, std::function<qint64()> limit)
    : m_gate(std::move(gate)), m_limit(std::move(limit))
{
}

QHash<int, CollectiveMatcher::Departure> CollectiveMatcher::attach(quint32 context, quint32 sequence,
                                                                   const std::shared_ptr<CollectiveOp> &op)
{
    const quint64 k = key(context, sequence);
    QMutexLocker lock(&m_mutex);
    // The collective may need frames from anyone, possibly behind the ones
    // that made us stop reading.
    // (Taken into a const set: a non-const loop over an empty one would
    // allocate and scan a table for every collective.)
    if (!m_paused.isEmpty()) {
        const QSet<int> paused = std::exchange(m_paused, {});
        for (int source : paused) {
            qCDebug(lcComm) << "a collective starts; reading from rank" << source << "again";
            m_gate->release(source, ReceiveGate::Collectives);
        }
    }
    if (m_attached.contains(k))
        qCWarning(lcComm) << "collective" << sequence << "of context" << Qt::hex << context
                          << "started twice (more than 2^16 collectives outstanding in an epoch?)";
    m_attached.insert(k, op);
    m_finished.remove(k);
    if (auto it = m_early.find(k); it != m_early.end()) {
        for (Frame &frame : *it) {
            m_earlyBytes -= frame.payload.size();
            op->enqueue(std::move(frame));
        }
        m_early.erase(it);
    }
    return m_gone;
}

void CollectiveMatcher::detach(quint32 context, quint32 sequence)
{
    const quint64 k = key(context, sequence);
    QMutexLocker lock(&m_mutex);
    m_attached.remove(k);
    if (!m_finished.contains(k)) {
        m_finished.insert(k);
        m_finishedOrder.push_back(k);
        if (m_finishedOrder.size() > FinishedMemory) {
            m_finished.remove(m_finishedOrder.front());
            m_finishedOrder.pop_front();
        }
    }
}

char *CollectiveMatcher::placeFor(const FrameHeader &header, qint64 bytes)
{
    std::shared_ptr<CollectiveOp> op;
    {
        QMutexLocker lock(&m_mutex);
        if (const auto placing = m_placing.constFind(header.source); placing != m_placing.cend())
            return placing->offer.againFor(header);
        op = m_attached.value(key(header.communicator, decodeCollectiveTag(header.tag).sequence));
    }
    std::shared_ptr<void> keep;
    char *place = op ? op->placeFor(header, bytes, keep) : nullptr;
    if (place) {
        QMutexLocker lock(&m_mutex);
        m_placing.insert(header.source, {std::move(keep), op, PlaceOffer::of(place, header)});
        qCDebug(lcComm) << "receiving" << bytes << "bytes of a collective from rank" << header.source
                        << "into its result";
    }
    return place;
}

void CollectiveMatcher::handleMessageAbandoned(int rank)
{
    QMutexLocker lock(&m_mutex);
    m_placing.remove(rank);
}

void CollectiveMatcher::handlePlacedProgress(int rank, qint64 bytes)
{
    std::shared_ptr<CollectiveOp> op;
    {
        QMutexLocker lock(&m_mutex);
        op = m_placing.value(rank).op.lock();
    }
    if (op)
        op->placedProgress(bytes);
}

void CollectiveMatcher::handleFrame(Frame &&frame)
{
    const quint64 k = key(frame.header.communicator, decodeCollectiveTag(frame.header.tag).sequence);
    const bool placed = frame.header.flags & PlacedPayload;
    std::shared_ptr<CollectiveOp> op;
    {
        QMutexLocker lock(&m_mutex);
        // Its place lives on in the op that asked for it, if it still runs.
        if (placed)
            m_placing.remove(frame.header.source);
        if (auto it = m_attached.find(k); it != m_attached.end()) {
            op = *it;
            // Queued under our lock, so frames reach the op in arrival order
            // even while attach() hands it the earlier ones on another thread.
            op->enqueue(std::move(frame));
        } else if (m_finished.contains(k) || placed || isInterrupted(k)) {
            qCDebug(lcComm) << "dropping a frame for finished or interrupted collective" << (k & SequenceMask)
                            << "from rank" << frame.header.source;
            return;
        } else {
            const int source = frame.header.source;
            m_earlyBytes += frame.payload.size();
            m_early[k].push_back(std::move(frame));
            if (shouldPause(source))
                m_gate->hold(source, ReceiveGate::Collectives);
            return;
        }
    }
    op->pump();
}

bool CollectiveMatcher::shouldPause(int source)
{
    if (!m_attached.isEmpty() || m_paused.contains(source))
        return false;
    if (m_limitBytes < 0) // frames come only once the world is formed and its configuration final
        m_limitBytes = m_limit();
    if (m_earlyBytes <= m_limitBytes)
        return false;
    m_paused.insert(source);
    qCDebug(lcComm) << "holding" << m_earlyBytes << "bytes for collectives not started here; pausing rank"
                    << source;
    return true;
}

void CollectiveMatcher::handlePeerGone(int rank, const Error &reason, bool clean)
{
    QList<std::shared_ptr<CollectiveOp>> running;
    {
        QMutexLocker lock(&m_mutex);
        m_gone.insert(rank, {reason, clean});
        m_placing.remove(rank); // the world writes nothing more of its message
        if (m_paused.remove(rank))
            m_gate->release(rank, ReceiveGate::Collectives);
        running = m_attached.values();
    }
    for (const auto &op : running)
        op->peerGone(rank, reason, clean);
}

void CollectiveMatcher::failContext(quint32 context, const Error &reason)
{
    // Every member hears of the revoke: no Abort needs to go out.
    failWhere([context](quint64 k) { return quint32(k >> 32) == context; }, reason, false);
}

void CollectiveMatcher::interruptContext(quint32 context, quint32 epoch, const Error &reason)
{
    {
        QMutexLocker lock(&m_mutex);
        // Two interrupts racing on other threads may get here out of order.
        const auto it = m_interrupted.constFind(context);
        if (it != m_interrupted.cend() && !isEarlierEpoch(it->epoch, epoch))
            return;
        m_interrupted.insert(context, {epoch, reason});
        forgetFinished(context);
    }
    // A member still in the collective this one leaves is told, so that it
    // does not wait for this node until it is interrupted too.
    failWhere([this](quint64 k) { return isInterrupted(k); }, reason, true);
}

std::optional<Error> CollectiveMatcher::interrupted(quint32 context, quint32 sequence) const
{
    QMutexLocker lock(&m_mutex);
    if (!isInterrupted(key(context, sequence)))
        return std::nullopt;
    return m_interrupted.value(context).reason;
}

// The ones of earlier epochs are dropped as such from now on; those of the
// epochs to come are numbers used at least 9 epochs ago, which the next
// collectives take again: a frame of one must not be dropped as a straggler.
void CollectiveMatcher::forgetFinished(quint32 context)
{
    for (auto it = m_finished.begin(); it != m_finished.end();)
        it = quint32(*it >> 32) == context ? m_finished.erase(it) : std::next(it);
}

bool CollectiveMatcher::isInterrupted(quint64 k) const
{
    const auto it = m_interrupted.constFind(quint32(k >> 32));
    return it != m_interrupted.cend() && isEarlierEpoch(epochOf(quint32(k)), it->epoch);
}

void CollectiveMatcher::failWhere(const std::function<bool(quint64)> &stale, const Error &reason, bool tellOthers)
{
    QList<std::shared_ptr<CollectiveOp>> running;
    {
        QMutexLocker lock(&m_mutex);
        for (auto it = m_attached.cbegin(); it != m_attached.cend(); ++it)
            if (stale(it.key()))
                running.append(it.value());
        for (auto it = m_early.begin(); it != m_early.end();) {
            if (!stale(it.key())) {
                ++it;
                continue;
            }
            for (const Frame &frame : *it)
                m_earlyBytes -= frame.payload.size();
            it = m_early.erase(it);
        }
    }
    for (const auto &op : running)
        op->abandon(reason, tellOthers);
}

void CollectiveMatcher::handlePeerRejoined(int rank)
{
    QMutexLocker lock(&m_mutex);
    m_gone.remove(rank);
}

qint64 CollectiveMatcher::earlyBytes() const
{
    QMutexLocker lock(&m_mutex);
    return m_earlyBytes;
}

} // namespace mmpi::detail
