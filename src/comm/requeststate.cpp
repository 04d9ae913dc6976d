#include "requeststate.h"

#include "matcher.h"

#include <mmpi/wire/bufferpool.h>

namespace mmpi::detail {

RequestState::RequestState(Kind k, quint32 comm, int src, int t)
    : kind(k), communicator(comm), source(src), tag(t)
{
}

// A received message that nobody else holds (the caller copied it into its
// own buffer) gives its allocation to the next large message.
RequestState::~RequestState()
{
    BufferPool::recycle(std::move(m_payload.bytes));
}

bool RequestState::matches(const FrameHeader &h) const
{
    return receiveMatches(h, communicator, source, tag);
}

bool receiveMatches(const FrameHeader &h, quint32 communicator, int source, int tag)
{
    return h.communicator == communicator && (source == AnySource || h.source == source)
           && (tag == AnyTag || h.tag == tag);
}

void RequestState::offerPlace(const Place &place)
{
    QMutexLocker lock(&m_mutex);
    if (m_offered.data)
        return;
    if (!m_outcome) {
        m_offered = place;
        return;
    }
    if (!place.decode || !*m_outcome)
        return;
    m_offered = place;
    if (auto ok = deliverToBoundPlace(); !ok)
        m_outcome = ok.error();
}

Result<void> RequestState::deliverToBoundPlace()
{
    if (auto ok = m_offered.decode(m_payload, m_offered.data, m_offered.items); !ok)
        return ok;
    m_delivered = m_offered.data;
    return success();
}

char *RequestState::takePlace(const FrameHeader &header, qint64 bytes)
{
    QMutexLocker lock(&m_mutex);
    const Place &p = m_offered;
    if (m_outcome || !p.data || !p.accepts || !p.accepts(header.itemType) || itemSize(header.itemType) != p.itemBytes
        || qint64(header.count) > p.items || qint64(header.count) * p.itemBytes != bytes)
        return nullptr;
    m_delivered = p.data;
    m_placed = true;
    return p.data;
}

bool RequestState::completePlaced(const Status &status, ItemOrder order)
{
    // Swapped in place where decodeItemsInto() would have swapped them on the way.
    if (order != HostItemOrder)
        swapItemsInPlace(status.itemType, const_cast<char *>(m_delivered.load()), qsizetype(status.count));
    return complete(status, Payload{status.itemType, status.count, {}, HostItemOrder});
}

const char *RequestState::deliveredData() const
{
    return m_delivered.load();
}

bool RequestState::wasPlaced() const
{
    return m_placed.load();
}

bool RequestState::complete(Result<Status> outcome, Payload payload)
{
    QList<std::function<void()>> continuations;
    {
        QMutexLocker lock(&m_mutex);
        if (m_outcome)
            return false;
        m_payload = std::move(payload);
        m_outcome = std::move(outcome);
        if (*m_outcome && m_offered.decode && !m_placed) {
            if (auto ok = deliverToBoundPlace(); !ok)
                m_outcome = ok.error();
        }
        continuations = std::exchange(m_continuations, {});
    }
    // Sequentially consistent, not just release: notify_all() wakes only if it
    // sees a waiter registered, and a release store may pass that check on
    // x86 and lose the wake-up of a thread that started to sleep meanwhile.
    m_finished.store(1, std::memory_order_seq_cst);
    m_finished.notify_all();
    for (const auto &f : std::as_const(continuations)) // a non-const begin() allocates
        f();
    return true;
}

bool RequestState::cancel()
{
    if (standsFor)
        return standsFor->cancel();
    const auto matcher = postedTo.lock();
    return matcher && matcher->cancel(this);
}

bool RequestState::isFinished() const
{
    QMutexLocker lock(&m_mutex);
    return m_outcome.has_value();
}

std::optional<Result<Status>> RequestState::outcome() const
{
    QMutexLocker lock(&m_mutex);
    return m_outcome;
}

Result<Status> RequestState::wait() const
{
    m_finished.wait(0, std::memory_order_seq_cst);
    QMutexLocker lock(&m_mutex);
    return *m_outcome;
}

void RequestState::whenFinished(std::function<void()> f)
{
    {
        QMutexLocker lock(&m_mutex);
        if (!m_outcome) {
            m_continuations.append(std::move(f));
            return;
        }
    }
    f();
}

Status statusOf(const FrameHeader &h, qint64 bytes)
{
    return {h.source, h.tag, h.itemType, h.count, bytes};
}

} // namespace mmpi::detail
