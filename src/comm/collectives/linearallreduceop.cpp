#include "linearallreduceop.h"

#include <mmpi/wire/bufferpool.h>

namespace mmpi::detail {

LinearAllreduceOp::LinearAllreduceOp(CollectiveSetup setup, Payload contribution, Combiner combiner,
                                     std::optional<Error> problem)
    : CollectiveOp(std::move(setup)), m_contribution(std::move(contribution)), m_combiner(std::move(combiner)),
      m_problem(std::move(problem))
{
}

void LinearAllreduceOp::begin()
{
    if (m_problem)
        return fail(*m_problem);
    if (size() == 1) {
        m_result->payload = std::move(m_contribution);
        return succeed();
    }
    if (rank() != 0)
        send(0, m_contribution, Contribution);
}

// Rank 0: (x0 op x1) op ... in rank order, so that a non-commutative op
// gives what the others do; each contribution is combined as soon as those
// before it are, while later ones are still coming, and its buffer goes back
// to the pool (a large allreduce would otherwise hold every contribution at
// once and page-fault on fresh memory for the next). A barrier has nothing
// to combine.
bool LinearAllreduceOp::combineInOrder()
{
    for (auto it = m_arrived.find(m_nextRank); it != m_arrived.end(); it = m_arrived.find(m_nextRank)) {
        Payload theirs = std::move(*it);
        m_arrived.erase(it);
        if (m_combiner.combine) {
            // Shared for the call, so that the result goes over our own buffer.
            QByteArray spent = m_contribution.bytes.isDetached() ? theirs.bytes : QByteArray();
            auto combined = m_combiner.combine(std::move(m_contribution), std::move(theirs));
            if (!combined) {
                fail({combined.error().code, describe(QStringLiteral("combining rank %1's contribution: %2")
                                                          .arg(m_nextRank).arg(combined.error().message))});
                return false;
            }
            m_contribution = std::move(*combined);
            BufferPool::recycle(std::move(spent));
        }
        ++m_nextRank;
    }
    return true;
}

void LinearAllreduceOp::finishAtRankZero()
{
    for (int r = 1; r < size(); ++r)
        send(r, m_contribution, Result);
    m_result->payload = std::move(m_contribution);
    succeed();
}

// Rank 0's result goes straight into the list the caller gets (a list of
// items whose memory is their wire form, in the host's order), instead of
// into a buffer that is then decoded into that list.
char *LinearAllreduceOp::place(int from, const FrameHeader &header, const CollectiveTag &tag, qint64 bytes,
                               std::shared_ptr<void> &keep)
{
    if (!m_combiner.newList || m_placed.list || rank() == 0 || from != 0 || tag.argument != Result
        || header.itemType != m_contribution.itemType || header.count != m_contribution.count
        || bytes != m_contribution.bytes.size() || itemOrderOf(header) != HostItemOrder)
        return nullptr;
    m_placed = m_combiner.newList(header.count);
    keep = m_placed.list;
    return m_placed.data;
}

void LinearAllreduceOp::handleData(int from, Frame &frame, const CollectiveTag &tag)
{
    const bool contribution = rank() == 0 && tag.argument == Contribution && from >= m_nextRank
                              && !m_arrived.contains(from);
    const bool result = rank() != 0 && from == 0 && tag.argument == Result;
    const bool placed = frame.header.flags & PlacedPayload;
    if ((!contribution && !result) || (placed && !(result && m_placed.list)))
        return fail({ErrorCode::ProtocolViolation,
                     describe(QStringLiteral("unexpected message %1 from rank %2 (contributions of different "
                                             "sizes?)").arg(tag.argument).arg(from))});
    if (placed) {
        m_result->list = std::exchange(m_placed, {}).list;
        return succeed();
    }
    if (result) {
        m_result->payload = payloadOf(std::move(frame));
        return succeed();
    }
    m_arrived.insert(from, payloadOf(std::move(frame)));
    if (combineInOrder() && m_nextRank == size())
        finishAtRankZero();
}

bool LinearAllreduceOp::waitsOn(int r) const
{
    if (isOver())
        return false;
    return rank() == 0 ? r >= m_nextRank && !m_arrived.contains(r) : r == 0;
}

} // namespace mmpi::detail
