#include "matcher.h"

#include <mmpi/core/logging.h>

#include <QScopeGuard>

namespace mmpi::detail {

namespace {

Result<Status> received(const Frame &frame)
{
    return statusOf(frame.header, frame.payload.size());
}

} // namespace

Matcher::Matcher(World *world, std::shared_ptr<ReceiveGate> gate)
    : m_world(world), m_gate(std::move(gate))
{
}

std::deque<Frame>::const_iterator Matcher::findUnexpected(quint32 communicator, int source, int tag) const
{
    return std::find_if(m_unexpected.begin(), m_unexpected.end(),
                        [&](const Frame &f) { return receiveMatches(f.header, communicator, source, tag); });
}

// A receive from a rank that is gone can never complete; AnySource only once
// every other rank is gone.
std::optional<Error> Matcher::whyUnreachable(int source) const
{
    if (source != AnySource)
        return m_gone.contains(source) ? std::optional<Error>(m_gone.value(source)) : std::nullopt;
    const int others = m_world->size() - 1;
    if (others > 0 && m_gone.size() >= others)
        return Error{ErrorCode::NodeLost, QStringLiteral("every other rank has left or was lost")};
    return std::nullopt;
}

void Matcher::post(const std::shared_ptr<RequestState> &receive)
{
    receive->postedTo = weak_from_this();
    QMutexLocker lock(&m_mutex);
    const auto it = findUnexpected(receive->communicator, receive->source, receive->tag);
    if (it != m_unexpected.end()) {
        const Frame frame = *it;
        m_unexpectedBytes -= frame.payload.size();
        m_unexpected.erase(it);
        const QList<int> resumable = takeResumable();
        lock.unlock();
        resume(resumable);
        receive->complete(received(frame), payloadOf(frame));
        return;
    }
    if (auto gone = whyUnreachable(receive->source)) {
        lock.unlock();
        receive->complete(Error{ErrorCode::NodeLost, gone->message});
        return;
    }
    m_posted.push_back(receive);
    const QList<int> resumable = takeResumable();
    lock.unlock();
    resume(resumable);
}

qint64 Matcher::limit()
{
    if (m_limit < 0 && m_world->state() != World::State::Idle)
        m_limit = m_world->config().maxUnexpectedBytes;
    return m_limit < 0 ? WorldConfig().maxUnexpectedBytes : m_limit;
}

bool Matcher::awaited(int source) const
{
    const auto wanted = [source](int s) { return s == source || s == AnySource; };
    return std::any_of(m_posted.begin(), m_posted.end(), [&](const auto &r) { return wanted(r->source); })
           || std::any_of(m_probing.begin(), m_probing.end(), wanted) || m_placing.contains(source);
}

bool Matcher::shouldPause(int source)
{
    if (m_unexpectedBytes <= limit() || source == m_world->rank() || m_paused.contains(source)
        || awaited(source))
        return false;
    m_paused.insert(source);
    qCDebug(lcComm) << "holding" << m_unexpectedBytes << "bytes of unexpected messages; pausing rank" << source;
    return true;
}

// Below half the limit every paused rank may send again; above it only those
// a receive or probe now waits for.
QList<int> Matcher::takeResumable()
{
    QList<int> resumable;
    // Not even an iteration: an emptied QSet's begin() walks all its buckets.
    if (m_paused.isEmpty())
        return resumable;
    const bool drained = m_unexpectedBytes <= limit() / 2;
    for (auto it = m_paused.begin(); it != m_paused.end();) {
        if (drained || awaited(*it)) {
            resumable.append(*it);
            it = m_paused.erase(it);
        } else {
            ++it;
        }
    }
    return resumable;
}

void Matcher::resume(const QList<int> &sources)
{
    for (int source : sources) {
        qCDebug(lcComm) << "resuming rank" << source;
        m_gate->release(source, ReceiveGate::PointToPoint);
    }
}

bool Matcher::cancel(const RequestState *receive)
{
    std::shared_ptr<RequestState> found;
    {
        QMutexLocker lock(&m_mutex);
        const auto it = std::find_if(m_posted.begin(), m_posted.end(),
                                     [receive](const auto &p) { return p.get() == receive; });
        if (it == m_posted.end())
            return false;
        found = *it;
        m_posted.erase(it);
    }
    return found->complete(Error{ErrorCode::Cancelled, QStringLiteral("the receive was cancelled")});
}

std::optional<Status> Matcher::iprobe(quint32 communicator, int source, int tag) const
{
    QMutexLocker lock(&m_mutex);
    const auto it = findUnexpected(communicator, source, tag);
    if (it == m_unexpected.end())
        return std::nullopt;
    return statusOf(it->header, it->payload.size());
}

Result<Status> Matcher::probe(quint32 communicator, int source, int tag)
{
    QMutexLocker lock(&m_mutex);
    m_probing.append(source);
    const auto done = qScopeGuard([&] { m_probing.removeOne(source); });
    const quint64 failuresBefore = m_failures.value(communicator).count;
    for (;;) {
        if (const auto it = findUnexpected(communicator, source, tag); it != m_unexpected.end())
            return statusOf(it->header, it->payload.size());
        if (auto gone = whyUnreachable(source))
            return Error{ErrorCode::NodeLost, gone->message};
        if (const Failure failure = m_failures.value(communicator); failure.count != failuresBefore)
            return failure.reason;
        if (const QList<int> resumable = takeResumable(); !resumable.isEmpty()) {
            lock.unlock();
            resume(resumable);
            lock.relock();
            continue;
        }
        m_arrived.wait(&m_mutex);
    }
}

qint64 Matcher::unexpectedBytes() const
{
    QMutexLocker lock(&m_mutex);
    return m_unexpectedBytes;
}

qsizetype Matcher::unexpectedCount() const
{
    QMutexLocker lock(&m_mutex);
    return qsizetype(m_unexpected.size());
}

// The oldest posted receive that takes a message with this header.
std::deque<std::shared_ptr<RequestState>>::iterator Matcher::findPosted(const FrameHeader &header)
{
    return std::find_if(m_posted.begin(), m_posted.end(), [&](const auto &p) { return p->matches(header); });
}

std::shared_ptr<RequestState> Matcher::takePlacing(int source)
{
    QMutexLocker lock(&m_mutex);
    return m_placing.take(source).receive;
}

char *Matcher::placeFor(const FrameHeader &header, qint64 bytes)
{
    QMutexLocker lock(&m_mutex);
    if (const auto placing = m_placing.constFind(header.source); placing != m_placing.cend())
        return placing->offer.againFor(header);
    const auto it = findPosted(header);
    if (it == m_posted.end())
        return nullptr;
    char *place = (*it)->takePlace(header, bytes);
    if (!place)
        return nullptr;
    m_placing.insert(header.source, {*it, PlaceOffer::of(place, header)});
    m_posted.erase(it);
    qCDebug(lcComm) << "receiving" << bytes << "bytes from rank" << header.source << "into the receive's own buffer";
    return place;
}

void Matcher::handleMessageAbandoned(int rank, const Error &reason)
{
    if (const auto receive = takePlacing(rank))
        receive->complete(Error{reason.code, QStringLiteral("the message from rank %1 being received into the "
                                                            "buffer was abandoned: %2").arg(rank).arg(reason.message)});
}

void Matcher::completePlaced(const Frame &frame)
{
    const auto receive = takePlacing(frame.header.source);
    if (!receive) {
        qCWarning(lcComm) << "a message from rank" << frame.header.source << "arrived for a receive that is gone";
        return;
    }
    const qint64 bytes = qint64(frame.header.count) * itemSize(frame.header.itemType);
    receive->completePlaced(statusOf(frame.header, bytes), itemOrderOf(frame.header));
}

void Matcher::handleFrame(const Frame &frame)
{
    if (frame.header.flags & PlacedPayload)
        return completePlaced(frame);
    QMutexLocker lock(&m_mutex);
    const auto it = findPosted(frame.header);
    if (it == m_posted.end()) {
        m_unexpected.push_back(frame);
        m_unexpectedBytes += frame.payload.size();
        m_arrived.wakeAll();
        const bool pause = shouldPause(frame.header.source);
        lock.unlock();
        if (pause)
            m_gate->hold(frame.header.source, ReceiveGate::PointToPoint);
        return;
    }
    const auto receive = *it;
    m_posted.erase(it);
    lock.unlock();
    receive->complete(received(frame), payloadOf(frame));
}

bool Matcher::isGone(int rank) const
{
    QMutexLocker lock(&m_mutex);
    return m_gone.contains(rank);
}

void Matcher::handlePeerGone(int rank, const Error &reason)
{
    QList<std::shared_ptr<RequestState>> failed;
    std::shared_ptr<RequestState> placing;
    {
        QMutexLocker lock(&m_mutex);
        m_gone.insert(rank, reason);
        // The world wrote its last byte to this buffer before telling us.
        placing = m_placing.take(rank).receive;
        for (auto it = m_posted.begin(); it != m_posted.end();) {
            if (whyUnreachable((*it)->source) && ((*it)->source == rank || (*it)->source == AnySource)) {
                failed.append(*it);
                it = m_posted.erase(it);
            } else {
                ++it;
            }
        }
        m_arrived.wakeAll();
    }
    for (const auto &receive : failed) {
        const QString why = receive->source == AnySource
                                ? QStringLiteral("every other rank has left or was lost")
                                : QStringLiteral("rank %1 is gone: %2").arg(rank).arg(reason.message);
        receive->complete(Error{ErrorCode::NodeLost, why});
    }
    if (placing)
        placing->complete(Error{ErrorCode::NodeLost, QStringLiteral("rank %1 was lost while its message arrived: %2")
                                                         .arg(rank).arg(reason.message)});
}

// The replacement starts from a checkpoint and sends again what the old node
// sent after it: messages of the old node nobody received yet would arrive twice.
void Matcher::handlePeerRejoined(int rank)
{
    QMutexLocker lock(&m_mutex);
    m_gone.remove(rank);
    qsizetype dropped = 0;
    for (auto it = m_unexpected.begin(); it != m_unexpected.end();) {
        if (it->header.source == rank) {
            m_unexpectedBytes -= it->payload.size();
            it = m_unexpected.erase(it);
            ++dropped;
        } else {
            ++it;
        }
    }
    if (dropped > 0)
        qCWarning(lcComm) << "rank" << rank << "rejoined: dropped" << dropped
                          << "unreceived message(s) of the node it replaces";
}

void Matcher::failCommunicator(quint32 communicator, const Error &reason)
{
    QList<std::shared_ptr<RequestState>> failed;
    {
        QMutexLocker lock(&m_mutex);
        Failure &failure = m_failures[communicator];
        ++failure.count;
        failure.reason = reason;
        m_arrived.wakeAll();
        for (auto it = m_posted.begin(); it != m_posted.end();) {
            if ((*it)->communicator == communicator) {
                failed.append(*it);
                it = m_posted.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (const auto &receive : failed)
        receive->complete(reason);
}

quint64 Matcher::failures(quint32 communicator) const
{
    QMutexLocker lock(&m_mutex);
    return m_failures.value(communicator).count;
}

} // namespace mmpi::detail
