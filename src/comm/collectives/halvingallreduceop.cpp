#include "halvingallreduceop.h"

#include <cstring>
#include <utility>

namespace mmpi::detail {

// Blocks are kept in the host's byte order, in which the combiner leaves
// what it combines; so the result assembled from them is in one order.
HalvingAllreduceOp::HalvingAllreduceOp(CollectiveSetup setup, Payload contribution, Combiner combiner)
    : CollectiveOp(std::move(setup)), m_combiner(std::move(combiner)), m_itemType(contribution.itemType),
      m_count(contribution.count), m_itemBytes(m_combiner.itemBytes)
{
    Payload kept = keptPastCall(std::move(contribution));
    m_contribution = std::move(kept.bytes);
    // What is sent of bytes of our own views them too: a share keeps them
    // (nothing writes over them) for as long as a send does.
    m_owner = kept.owner ? std::move(kept.owner) : std::make_shared<const QByteArray>(m_contribution);
}

void HalvingAllreduceOp::begin()
{
    if (size() == 1) {
        m_result->payload = {m_itemType, m_count, m_contribution, HostItemOrder, m_owner};
        return succeed();
    }
    while (m_powerOfTwo * 2 <= size()) {
        m_powerOfTwo *= 2;
        ++m_rounds;
    }
    m_remainder = size() - m_powerOfTwo;
    m_cut = ItemSegments(m_count, m_powerOfTwo, m_itemBytes);
    m_heldBlocks = {0, m_powerOfTwo};
    if (isPaired() && rank() % 2 == 0) {
        // Folded away: the odd neighbour combines for both, and hands back the result.
        send(rank() + 1, viewOf(m_heldBlocks), Fold);
        m_step = Unfold;
    } else {
        m_groupRank = isPaired() ? rank() / 2 : rank() - m_remainder;
        m_step = isPaired() ? Fold : 1;
    }
    advance();
}

int HalvingAllreduceOp::rankOf(int groupRank) const
{
    return groupRank < m_remainder ? groupRank * 2 + 1 : groupRank + m_remainder;
}

int HalvingAllreduceOp::senderOf(int step) const
{
    if (step == Fold)
        return isPaired() && rank() % 2 == 1 ? rank() - 1 : -1;
    if (step == Unfold)
        return isPaired() && rank() % 2 == 0 ? rank() + 1 : -1;
    if (m_groupRank < 0 || step < 1 || step > 2 * m_rounds)
        return -1;
    // Halving pairs ranks p/2 apart first, then p/4, ... 1; doubling the other way round.
    const int distance = step <= m_rounds ? m_powerOfTwo >> step : 1 << (step - m_rounds - 1);
    return rankOf(m_groupRank ^ distance);
}

// Before halving round `step` a rank holds the aligned run of 2h blocks
// (h = p >> step) that contains its own block; it keeps the half its own
// block is in and sends the other. After the last round it holds its block.
HalvingAllreduceOp::Blocks HalvingAllreduceOp::keptAt(int step) const
{
    const int half = m_powerOfTwo >> step;
    const int first = m_groupRank & ~(2 * half - 1);
    return m_groupRank & half ? Blocks{first + half, first + 2 * half} : Blocks{first, first + half};
}

HalvingAllreduceOp::Blocks HalvingAllreduceOp::sentAt(int step) const
{
    const Blocks kept = keptAt(step);
    const int half = kept.end - kept.first;
    return m_groupRank & half ? Blocks{kept.first - half, kept.first} : Blocks{kept.end, kept.end + half};
}

// Doubling round `step` - k: a rank holds the aligned run of 2^(step-k-1)
// blocks around its own, and its partner the run beside it, which it sends.
HalvingAllreduceOp::Blocks HalvingAllreduceOp::heldAt(int step) const
{
    const int length = 1 << (step - m_rounds - 1);
    const int first = (m_groupRank & ~(length - 1)) ^ length;
    return {first, first + length};
}

// What this rank holds of `blocks` while halving: the contribution as it
// is, or what it has combined. A view either way, kept by its owner (the
// send keeps it after this op is gone).
Payload HalvingAllreduceOp::viewOf(Blocks blocks) const
{
    const qsizetype bytes = m_cut.bytes(blocks.first, blocks.end);
    if (!m_held)
        return {m_itemType, m_cut.count(blocks.first, blocks.end),
                QByteArray::fromRawData(m_contribution.constData() + m_cut.offset(blocks.first), bytes),
                HostItemOrder, m_owner};
    const qsizetype at = m_cut.offset(blocks.first) - m_cut.offset(m_heldBlocks.first);
    return {m_itemType, m_cut.count(blocks.first, blocks.end),
            QByteArray::fromRawData(m_held->constData() + at, bytes), HostItemOrder, m_held};
}

// What the allgather has of `blocks`: they are written once and never
// again, so a view of them may go out while other blocks come in.
Payload HalvingAllreduceOp::outputView(Blocks blocks) const
{
    return {m_itemType, m_cut.count(blocks.first, blocks.end),
            QByteArray::fromRawData(m_output.data + m_cut.offset(blocks.first), m_cut.bytes(blocks.first, blocks.end)),
            HostItemOrder, m_output.list};
}

void HalvingAllreduceOp::advance()
{
    while (!isOver()) {
        if (m_step > 2 * m_rounds && m_step != Unfold)
            return finish();
        if (m_step >= 1 && m_step != Unfold && m_sentStep < m_step) {
            // Our half of this round goes out once, before waiting for theirs.
            m_sentStep = m_step;
            sendFor(m_step);
        }
        const auto it = m_arrived.find(m_step);
        if (it == m_arrived.end())
            return;
        const int from = it->first;
        Payload theirs = std::move(it->second);
        m_arrived.erase(it);
        if (!take(m_step, from, std::move(theirs)) || isOver())
            return;
        if (m_step == m_rounds)
            startAllgather();
        ++m_step;
    }
}

void HalvingAllreduceOp::sendFor(int step)
{
    if (step <= m_rounds)
        return send(senderOf(step), viewOf(sentAt(step)), step);
    const int length = 1 << (step - m_rounds - 1);
    const int first = m_groupRank & ~(length - 1);
    send(senderOf(step), outputView({first, first + length}), step);
}

HalvingAllreduceOp::Blocks HalvingAllreduceOp::receivedAt(int step) const
{
    if (step == Fold || step == Unfold)
        return {0, m_powerOfTwo};
    return step <= m_rounds ? keptAt(step) : heldAt(step);
}

// Its size was checked as it arrived (handleData()).
bool HalvingAllreduceOp::take(int step, int from, Payload theirs)
{
    if (step == Unfold) {
        m_result->payload = std::move(theirs);
        succeed();
        return true;
    }
    if (step == Fold || step <= m_rounds)
        return combineHeld(from, receivedAt(step), std::move(theirs));
    const Blocks blocks = receivedAt(step);
    const QByteArray bytes = inHostOrder(std::move(theirs)).bytes;
    if (!bytes.isEmpty())
        std::memcpy(m_output.data + m_cut.offset(blocks.first), bytes.constData(), size_t(bytes.size()));
    return true;
}

bool HalvingAllreduceOp::checkSize(int from, Blocks blocks, const Payload &theirs)
{
    const quint32 count = m_cut.count(blocks.first, blocks.end);
    if (theirs.count == count && theirs.itemType == m_itemType
        && theirs.bytes.size() == m_cut.bytes(blocks.first, blocks.end))
        return true;
    fail({ErrorCode::ProtocolViolation,
          describe(QStringLiteral("rank %1 sent %2 items where blocks %3 to %4 have %5 (contributions of different "
                                  "sizes?)")
                       .arg(from).arg(theirs.count).arg(blocks.first).arg(blocks.end - 1).arg(count))});
    return false;
}

// This rank's part is read where it lies (a view, so the result goes over
// `theirs`, or a new buffer): what was sent of it stays as it was sent.
bool HalvingAllreduceOp::combineHeld(int from, Blocks blocks, Payload theirs)
{
    Payload mine = viewOf(blocks);
    auto combined = from < rank() ? m_combiner.combine(std::move(theirs), std::move(mine))
                                  : m_combiner.combine(std::move(mine), std::move(theirs));
    if (!combined) {
        fail({combined.error().code, describe(QStringLiteral("combining rank %1's blocks: %2")
                                                  .arg(from).arg(combined.error().message))});
        return false;
    }
    m_held = std::make_shared<const QByteArray>(std::move(combined->bytes));
    m_heldBlocks = blocks;
    return true;
}

// The result goes straight into the caller's list type where the combiner
// can make one (it is then the result, no copy), else into bytes of ours.
void HalvingAllreduceOp::startAllgather()
{
    const qsizetype total = m_cut.offset(m_powerOfTwo);
    if (m_combiner.newList) {
        m_output = m_combiner.newList(m_count);
    } else {
        auto bytes = std::make_shared<QByteArray>(total, Qt::Uninitialized);
        m_output = {bytes, bytes->data()};
    }
    const qsizetype own = m_cut.bytes(m_heldBlocks.first, m_heldBlocks.end);
    if (own > 0)
        std::memcpy(m_output.data + m_cut.offset(m_heldBlocks.first), m_held->constData(), size_t(own));
    m_held.reset(); // what went out of it is kept by the sends
}

void HalvingAllreduceOp::finish()
{
    if (isPaired())
        send(rank() - 1, outputView({0, m_powerOfTwo}), Unfold);
    if (m_combiner.newList)
        m_result->list = m_output.list;
    else
        m_result->payload = {m_itemType, m_count, *std::static_pointer_cast<const QByteArray>(m_output.list),
                             HostItemOrder};
    succeed();
}

void HalvingAllreduceOp::handleData(int from, Frame &frame, const CollectiveTag &tag)
{
    // Each step has one sender and one size: anything else (a rank running
    // another algorithm because its contribution differs in size, say) fails
    // at once, not when its step comes, which may wait on a rank that is
    // waiting on this one.
    if (m_arrived.contains(tag.argument) || senderOf(tag.argument) != from || tag.argument < m_step)
        return fail({ErrorCode::ProtocolViolation,
                     describe(QStringLiteral("unexpected message of step %1 from rank %2 (contributions of "
                                             "different sizes?)").arg(tag.argument).arg(from))});
    Payload theirs = payloadOf(std::move(frame));
    if (!checkSize(from, receivedAt(tag.argument), theirs))
        return;
    m_arrived.insert(tag.argument, {from, std::move(theirs)});
    advance();
}

bool HalvingAllreduceOp::waitsOn(int r) const
{
    return !isOver() && r == senderOf(m_step);
}

} // namespace mmpi::detail
