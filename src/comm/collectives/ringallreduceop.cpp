#include "ringallreduceop.h"

#include <mmpi/wire/bufferpool.h>

#include <cstring>
#include <utility>

namespace mmpi::detail {

// Segments are kept in the host's byte order, in which the combiner leaves
// what it combines; so one assembled from them is in one order.
RingAllreduceOp::RingAllreduceOp(CollectiveSetup setup, Payload contribution, Combiner combiner)
    : CollectiveOp(std::move(setup)), m_combiner(std::move(combiner)), m_itemType(contribution.itemType),
      m_count(contribution.count), m_cut(m_count, size(), m_combiner.itemBytes)
{
    // A view of the caller's items is read in place while their owner keeps them.
    Payload kept = keptPastCall(std::move(contribution));
    m_contribution = std::move(kept.bytes);
    m_owner = std::move(kept.owner);
    m_segments.resize(m_cut.parts());
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
        return {m_itemType, m_cut.count(index), own, HostItemOrder};
    // Only the first send is of a segment still in the contribution. What is
    // sent stays (replay buffer) after this op is gone: a view of the
    // caller's items goes with their owner, a buffer of this op's is copied.
    if (m_owner)
        return {m_itemType, m_cut.count(index), contributed(index), HostItemOrder, m_owner};
    return {m_itemType, m_cut.count(index), m_contribution.mid(m_cut.offset(index), m_cut.bytes(index)), HostItemOrder};
}

QByteArray RingAllreduceOp::contributed(int index) const
{
    return QByteArray::fromRawData(m_contribution.constData() + m_cut.offset(index), m_cut.bytes(index));
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
            m_result->parts.append({m_itemType, m_cut.count(i), std::exchange(m_segments[i], {}), HostItemOrder});
        BufferPool::recycle(std::move(m_contribution));
        return succeed();
    }
    QByteArray whole = std::move(m_contribution);
    if (!whole.isDetached())
        whole = QByteArray(whole.size(), Qt::Uninitialized);
    for (int i = 0; i < size(); ++i) {
        const QByteArray &segment = m_segments.at(i);
        Q_ASSERT(segment.size() == m_cut.bytes(i));
        if (!segment.isEmpty())
            std::memcpy(whole.data() + m_cut.offset(i), segment.constData(), size_t(segment.size()));
    }
    m_result->payload = {m_itemType, m_count, std::move(whole), HostItemOrder};
    succeed();
}

bool RingAllreduceOp::take(int step, Payload theirs)
{
    const int index = receivedSegment(step);
    if (theirs.count != m_cut.count(index) || theirs.itemType != m_itemType
        || theirs.bytes.size() != m_cut.bytes(index)) {
        fail({ErrorCode::ProtocolViolation,
              describe(QStringLiteral("rank %1 sent %2 items where segment %3 has %4 (contributions of different "
                                      "sizes?)").arg(previous()).arg(theirs.count).arg(index).arg(m_cut.count(index)))});
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
    auto combined = m_combiner.combine({m_itemType, m_cut.count(index), std::move(mine), HostItemOrder},
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
