#include "ringallreduceop.h"

#include <mmpi/wire/bufferpool.h>

#include <cstring>
#include <utility>

namespace mmpi::detail {

// Segments are kept in the host's byte order, in which the combiner leaves
// what it combines; so one assembled from them is in one order.
RingAllreduceOp::RingAllreduceOp(CollectiveSetup setup, Payload contribution, Combiner combiner)
    : CollectiveOp(std::move(setup)), m_combiner(std::move(combiner)), m_itemType(contribution.itemType),
      m_itemBytes(m_combiner.itemBytes), m_count(contribution.count)
{
    Payload inOrder = inHostOrder(std::move(contribution));
    m_contribution = std::move(inOrder.bytes);
    // A view of the caller's items is read in place while their owner keeps
    // them; one that nothing keeps is valid only until the caller's call returns.
    if (isBorrowed(m_contribution) && inOrder.owner)
        m_owner = std::move(inOrder.owner);
    else
        m_contribution = BufferPool::owned(std::move(m_contribution));
    const int n = qMax(size(), 1);
    for (int i = 0; i < n; ++i) {
        const qint64 first = qint64(m_count) * i / n, end = qint64(m_count) * (i + 1) / n;
        m_counts.append(quint32(end - first));
        m_offsets.append(qsizetype(first * m_itemBytes));
    }
    m_segments.resize(n);
}

// Reduce-scatter steps 1..n-1: send segment r - s + 1, combine r - s into
// ours; after them this rank holds the whole of segment r + 1. Allgather
// steps n..2n-2 pass the whole segments on: send r + 1 - (s - n), take r - (s - n).
int RingAllreduceOp::sentSegment(int step) const
{
    const int n = size();
    const int index = step <= n - 1 ? rank() - (step - 1) : rank() + 1 - (step - n);
    return ((index % n) + n) % n;
}

int RingAllreduceOp::receivedSegment(int step) const
{
    return (sentSegment(step) + size() - 1) % size();
}

Payload RingAllreduceOp::segment(int index) const
{
    const QByteArray &own = m_segments.at(index);
    if (!own.isNull())
        return {m_itemType, m_counts.at(index), own, HostItemOrder};
    // Only the first send is of a segment still in the contribution. What is
    // sent stays (replay buffer) after this op is gone: a view of the
    // caller's items goes with their owner, a buffer of this op's is copied.
    if (m_owner)
        return {m_itemType, m_counts.at(index), contributed(index), HostItemOrder, m_owner};
    return {m_itemType, m_counts.at(index), m_contribution.mid(m_offsets.at(index), segmentBytes(index)), HostItemOrder};
}

QByteArray RingAllreduceOp::contributed(int index) const
{
    return QByteArray::fromRawData(m_contribution.constData() + m_offsets.at(index), segmentBytes(index));
}

void RingAllreduceOp::begin()
{
    if (size() == 1) {
        m_result->payload = {m_itemType, m_count, std::move(m_contribution), HostItemOrder};
        return succeed();
    }
    advance();
}

void RingAllreduceOp::advance()
{
    while (!isOver()) {
        if (m_step > steps())
            return finish();
        if (m_sentStep < m_step) {
            m_sentStep = m_step;
            send(next(), segment(sentSegment(m_step)), m_step);
        }
        const auto it = m_arrived.find(m_step);
        if (it == m_arrived.end())
            return;
        Payload theirs = std::move(*it);
        m_arrived.erase(it);
        if (!take(m_step, std::move(theirs)))
            return;
        ++m_step;
    }
}

// Every segment has been received by now; they go over the contribution,
// which nothing reads any more (appending them to a new buffer one by one
// had reallocated and copied the growing result at every segment).
void RingAllreduceOp::finish()
{
    if (m_combiner.lastCombineToCaller) {
        // The caller decodes the segments straight into its list: one pass.
        for (int i = 0; i < size(); ++i)
            m_result->parts.append({m_itemType, m_counts.at(i), std::exchange(m_segments[i], {}), HostItemOrder});
        BufferPool::recycle(std::move(m_contribution));
        return succeed();
    }
    QByteArray whole = std::move(m_contribution);
    if (!whole.isDetached())
        whole = QByteArray(whole.size(), Qt::Uninitialized);
    for (int i = 0; i < size(); ++i) {
        const QByteArray &segment = m_segments.at(i);
        Q_ASSERT(segment.size() == segmentBytes(i));
        if (!segment.isEmpty())
            std::memcpy(whole.data() + m_offsets.at(i), segment.constData(), size_t(segment.size()));
    }
    m_result->payload = {m_itemType, m_count, std::move(whole), HostItemOrder};
    succeed();
}

bool RingAllreduceOp::take(int step, Payload theirs)
{
    const int index = receivedSegment(step);
    if (theirs.count != m_counts.at(index) || theirs.itemType != m_itemType
        || theirs.bytes.size() != segmentBytes(index)) {
        fail({ErrorCode::ProtocolViolation,
              describe(QStringLiteral("rank %1 sent %2 items where segment %3 has %4 (contributions of different "
                                      "sizes?)").arg(previous()).arg(theirs.count).arg(index).arg(m_counts.at(index)))});
        return false;
    }
    if (step >= size()) { // allgather: the whole segment
        m_segments[index] = inHostOrder(std::move(theirs)).bytes;
        return true;
    }
    // A segment combined before is moved out, not shared: the combiner writes
    // over it. This rank's own part is read where it lies (a view, so the
    // result goes over `theirs`).
    QByteArray mine = m_segments.at(index).isNull() ? contributed(index) : std::exchange(m_segments[index], {});
    auto combined = m_combiner.combine({m_itemType, m_counts.at(index), std::move(mine), HostItemOrder},
                                       std::move(theirs));
    if (!combined) {
        fail({combined.error().code, describe(QStringLiteral("combining rank %1's segment: %2")
                                                  .arg(previous()).arg(combined.error().message))});
        return false;
    }
    m_segments[index] = std::move(combined->bytes);
    return true;
}

void RingAllreduceOp::handleData(int from, Frame &frame, const CollectiveTag &tag)
{
    // One message per step, from the previous rank: anything else (a rank
    // running another algorithm because its contribution differs) fails.
    if (from != previous() || tag.argument < m_step || tag.argument > steps() || m_arrived.contains(tag.argument))
        return fail({ErrorCode::ProtocolViolation,
                     describe(QStringLiteral("unexpected message of step %1 from rank %2 (contributions of "
                                             "different sizes?)").arg(tag.argument).arg(from))});
    m_arrived.insert(tag.argument, payloadOf(std::move(frame)));
    advance();
}

bool RingAllreduceOp::waitsOn(int r) const
{
    return !isOver() && r == previous();
}

} // namespace mmpi::detail
