#include "linearallreduceop.h"

#include <mmpi/wire/bufferpool.h>

#include <cstring>

namespace mmpi::detail {

LinearAllreduceOp::LinearAllreduceOp(CollectiveSetup setup, Payload contribution, Combiner combiner,
                                     std::optional<Error> problem, int roots)
    : CollectiveOp(std::move(setup)), m_combiner(std::move(combiner)), m_problem(std::move(problem)),
      m_roots(qBound(1, roots, qMax(size(), 1)))
{
    if (m_roots > 1) {
        // Segments go out as views of the contribution, in the host's order
        // (the combiner's), kept by its owner: the caller's list, or a copy
        // of our own.
        contribution = inHostOrder(std::move(contribution));
        if (!contribution.owner) {
            auto kept = std::make_shared<const QByteArray>(BufferPool::owned(std::move(contribution.bytes)));
            contribution.bytes = *kept;
            contribution.owner = std::move(kept);
        }
    }
    m_contribution = std::move(contribution);
    m_inList.resize(m_roots, false);
    m_results.resize(m_roots);
    const qint64 count = m_contribution.count;
    for (int i = 0; i < m_roots; ++i) {
        const qint64 first = count * i / m_roots, end = count * (i + 1) / m_roots;
        m_counts.append(quint32(end - first));
        m_offsets.append(qsizetype(first * m_combiner.itemBytes));
    }
}

int LinearAllreduceOp::rootsFor(const Payload &contribution, const Combiner &combiner, int ranks, int cpus)
{
    const int k = qMin(cpus, ranks);
    const qsizetype bytes = contribution.bytes.size();
    if (bytes <= MaxBytesOneRoot || k < 2 || !combiner.lastCombineToCaller || combiner.itemBytes <= 0
        || qsizetype(contribution.count) < k || bytes != qsizetype(contribution.count) * combiner.itemBytes)
        return 1;
    return k;
}

Payload LinearAllreduceOp::segment(int index) const
{
    if (m_roots == 1)
        return m_contribution;
    const qsizetype bytes = qsizetype(m_counts.at(index)) * m_combiner.itemBytes;
    return {m_contribution.itemType, m_counts.at(index),
            QByteArray::fromRawData(m_contribution.bytes.constData() + m_offsets.at(index), bytes), HostItemOrder,
            m_contribution.owner};
}

bool LinearAllreduceOp::fitsSegment(const Payload &payload, int index) const
{
    return m_roots == 1
           || (payload.itemType == m_contribution.itemType && payload.count == m_counts.at(index)
               && payload.bytes.size() == qsizetype(m_counts.at(index)) * m_combiner.itemBytes);
}

void LinearAllreduceOp::begin()
{
    if (m_problem)
        return fail(*m_problem);
    if (size() == 1) {
        m_result->payload = std::move(m_contribution);
        return succeed();
    }
    for (int root = 0; root < m_roots; ++root)
        if (root != rank())
            send(root, segment(root), Contribution);
    if (isRoot()) {
        m_arrived.insert(rank(), segment(rank()));
        if (combineInOrder() && m_nextRank == size())
            finishAsRoot();
    }
}

// A root: x0 op x1 op ... of its segment in rank order, so that a
// non-commutative op gives what it does elsewhere; each contribution is
// combined as soon as those before it are, while later ones are still coming,
// and its buffer goes back to the pool (a large allreduce would otherwise
// hold every contribution at once and page-fault on fresh memory for the
// next). A barrier has nothing to combine.
bool LinearAllreduceOp::combineInOrder()
{
    for (auto it = m_arrived.find(m_nextRank); it != m_arrived.end(); it = m_arrived.find(m_nextRank)) {
        Payload theirs = std::move(*it);
        m_arrived.erase(it);
        if (!m_accumulated) {
            m_accumulated = std::move(theirs);
        } else if (m_combiner.combine) {
            // Shared for the call, so that the result goes over our own buffer.
            QByteArray spent = m_accumulated->bytes.isDetached() ? theirs.bytes : QByteArray();
            auto combined = m_combiner.combine(std::move(*m_accumulated), std::move(theirs));
            if (!combined) {
                fail({combined.error().code, describe(QStringLiteral("combining rank %1's contribution: %2")
                                                          .arg(m_nextRank).arg(combined.error().message))});
                return false;
            }
            m_accumulated = std::move(*combined);
            BufferPool::recycle(std::move(spent));
        }
        ++m_nextRank;
    }
    return true;
}

void LinearAllreduceOp::finishAsRoot()
{
    for (int r = 0; r < size(); ++r)
        if (r != rank())
            send(r, *m_accumulated, Result);
    takeResult(rank(), *std::exchange(m_accumulated, std::nullopt));
}

// The combined segments go into the caller's list where it is a list of
// items whose memory is their wire form: those placed there as they arrived
// are in it, the rest are copied in. Otherwise one root's result is the
// payload, and several roots' segments are put together by the caller
// (Combiner::lastCombineToCaller: rootsFor() asks for it).
void LinearAllreduceOp::takeResult(int root, std::optional<Payload> combined)
{
    if (combined)
        m_results[root] = std::move(*combined);
    else
        m_inList[root] = true;
    for (int r = 0; r < m_roots; ++r)
        if (!hasResultOf(r))
            return;
    if (m_placed.list || (m_roots > 1 && m_combiner.newList)) {
        if (!m_placed.list)
            m_placed = m_combiner.newList(m_contribution.count);
        for (int r = 0; r < m_roots; ++r) {
            if (!m_results[r])
                continue;
            const QByteArray bytes = inHostOrder(*std::exchange(m_results[r], std::nullopt)).bytes;
            std::memcpy(m_placed.data + m_offsets.at(r), bytes.constData(), size_t(bytes.size()));
        }
        m_result->list = std::exchange(m_placed, {}).list;
    } else if (m_roots == 1) {
        m_result->payload = *std::exchange(m_results[0], std::nullopt);
    } else {
        for (std::optional<Payload> &part : m_results) // by root; none was placed
            if (part)
                m_result->parts.append(*std::exchange(part, std::nullopt));
    }
    succeed();
}

// A root's combined segment goes straight into its place in the list the
// caller gets (a list of items whose memory is their wire form, in the
// host's order), instead of into a buffer that is then copied there.
char *LinearAllreduceOp::place(int from, const FrameHeader &header, const CollectiveTag &tag, qint64 bytes,
                               std::shared_ptr<void> &keep)
{
    if (!m_combiner.newList || from >= m_roots || from == rank() || tag.argument != Result || hasResultOf(from)
        || header.itemType != m_contribution.itemType
        || header.count != m_counts.at(from) || bytes != qsizetype(m_counts.at(from)) * m_combiner.itemBytes
        || itemOrderOf(header) != HostItemOrder)
        return nullptr;
    if (!m_placed.list)
        m_placed = m_combiner.newList(m_contribution.count);
    keep = m_placed.list;
    return m_placed.data + m_offsets.at(from);
}

void LinearAllreduceOp::handleData(int from, Frame &frame, const CollectiveTag &tag)
{
    const bool contribution = isRoot() && tag.argument == Contribution && from >= m_nextRank
                              && !m_arrived.contains(from);
    const bool result = from < m_roots && from != rank() && tag.argument == Result && !hasResultOf(from);
    const bool placed = frame.header.flags & PlacedPayload;
    if ((!contribution && !result) || (placed && !(result && m_placed.list)))
        return fail({ErrorCode::ProtocolViolation,
                     describe(QStringLiteral("unexpected message %1 from rank %2 (contributions of different "
                                             "sizes?)").arg(tag.argument).arg(from))});
    if (placed)
        return takeResult(from, std::nullopt);
    Payload payload = payloadOf(std::move(frame));
    const int index = contribution ? rank() : from;
    if (!fitsSegment(payload, index))
        return fail({ErrorCode::ProtocolViolation,
                     describe(QStringLiteral("rank %1 sent %2 items where segment %3 has %4 (contributions of "
                                             "different sizes?)").arg(from).arg(payload.count).arg(index)
                                                                 .arg(m_counts.at(index)))});
    if (result)
        return takeResult(from, std::move(payload));
    m_arrived.insert(from, std::move(payload));
    if (combineInOrder() && m_nextRank == size())
        finishAsRoot();
}

bool LinearAllreduceOp::waitsOn(int r) const
{
    if (isOver() || r == rank())
        return false;
    const bool contributionDue = isRoot() && r >= m_nextRank && !m_arrived.contains(r);
    const bool resultDue = r < m_roots && !hasResultOf(r);
    return contributionDue || resultDue;
}

} // namespace mmpi::detail
