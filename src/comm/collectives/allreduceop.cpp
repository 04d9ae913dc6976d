#include "allreduceop.h"

namespace mmpi::detail {

AllreduceOp::AllreduceOp(CollectiveSetup setup, Payload contribution, Combiner combiner, std::optional<Error> problem)
    : CollectiveOp(std::move(setup)), m_accumulated(std::move(contribution)), m_combiner(std::move(combiner)),
      m_problem(std::move(problem))
{
}

void AllreduceOp::begin()
{
    if (m_problem)
        return fail(*m_problem);
    while (m_powerOfTwo * 2 <= size())
        m_powerOfTwo *= 2;
    m_remainder = size() - m_powerOfTwo;
    if (rank() < 2 * m_remainder) {
        if (rank() % 2 == 0) {
            // Paired off: hand the contribution to the odd neighbour, wait for the result.
            send(rank() + 1, m_accumulated, Pairing);
            m_step = Result;
        } else {
            m_newRank = rank() / 2;
        }
    } else {
        m_newRank = rank() - m_remainder;
        m_step = 1;
    }
    advance();
}

int AllreduceOp::senderOf(int step) const
{
    const bool paired = rank() < 2 * m_remainder;
    if (step == Result)
        return paired && rank() % 2 == 0 ? rank() + 1 : -1;
    if (step == Pairing)
        return paired && rank() % 2 == 1 ? rank() - 1 : -1;
    if (m_newRank < 0 || step > 30)
        return -1;
    const int mask = 1 << (step - 1);
    if (mask >= m_powerOfTwo)
        return -1;
    const int partner = m_newRank ^ mask;
    return partner < m_remainder ? partner * 2 + 1 : partner + m_remainder;
}

bool AllreduceOp::combineWith(int from, Payload theirs, bool theirsFirst)
{
    auto combined = theirsFirst ? m_combiner.combine(std::move(theirs), m_accumulated)
                                : m_combiner.combine(std::move(m_accumulated), std::move(theirs));
    if (!combined) {
        fail({combined.error().code, describe(QStringLiteral("combining rank %1's contribution: %2")
                                                  .arg(from).arg(combined.error().message))});
        return false;
    }
    m_accumulated = std::move(*combined);
    return true;
}

bool AllreduceOp::lastCombineIsOurs() const
{
    return m_step != Result && senderOf(m_step + 1) < 0 && rank() >= 2 * m_remainder;
}

// The caller combines the two straight into its list (one pass where a
// combine here and its decoding would be two): checked here, so that a
// mismatch still fails the collective as any other combine's would.
void AllreduceOp::leaveLastCombine(int from, Payload theirs, bool theirsFirst)
{
    Payload &left = theirsFirst ? theirs : m_accumulated;
    Payload &right = theirsFirst ? m_accumulated : theirs;
    if (auto ok = m_combiner.check(left, right); !ok)
        return fail({ok.error().code, describe(QStringLiteral("combining rank %1's contribution: %2")
                                                   .arg(from).arg(ok.error().message))});
    m_result->payload = std::move(left);
    m_result->operand = std::move(right);
    succeed();
}

void AllreduceOp::advance()
{
    for (;;) {
        if (isOver())
            return;
        const int from = expectedFrom();
        if (from < 0) {
            // Rounds done: a rank with a paired-off neighbour hands it the result.
            if (rank() < 2 * m_remainder)
                send(rank() - 1, m_accumulated, Result);
            m_result->payload = std::move(m_accumulated);
            return succeed();
        }
        if (m_step >= 1 && m_step != Result && m_sentStep < m_step) {
            // Our half of this round goes out once, before waiting for theirs.
            m_sentStep = m_step;
            send(from, m_accumulated, m_step);
        }
        const auto it = m_arrived.find(m_step);
        if (it == m_arrived.end())
            return;
        const int sender = it->first;
        Payload payload = std::move(it->second);
        m_arrived.erase(it);
        if (m_step == Result) {
            m_result->payload = std::move(payload);
            return succeed();
        }
        if (m_combiner.lastCombineToCaller && lastCombineIsOurs())
            return leaveLastCombine(sender, std::move(payload), sender < rank());
        if (!combineWith(sender, std::move(payload), sender < rank()))
            return;
        ++m_step;
    }
}

// Between 2 ranks the one swap brings the other half of the result: it is
// written into the caller's list as it arrives and combined there, in place,
// instead of into a buffer and then, combined, into a new list (a pass over
// a third buffer). Only in the host's order, in which our half is.
char *AllreduceOp::place(int from, const FrameHeader &header, const CollectiveTag &tag, qint64 bytes,
                         std::shared_ptr<void> &keep)
{
    if (size() != 2 || !m_combiner.newList || m_placed.list || tag.argument != 1
        || m_step != 1 || senderOf(1) != from || m_arrived.contains(1) || header.itemType != m_accumulated.itemType
        || header.count != m_accumulated.count || bytes != m_accumulated.bytes.size()
        || itemOrderOf(header) != HostItemOrder || m_accumulated.order != HostItemOrder)
        return nullptr;
    m_placed = m_combiner.newList(header.count);
    m_placedFrom = from;
    m_placedCombined = 0;
    keep = m_placed.list;
    return m_placed.data;
}

// Each chunk is combined as soon as it is in, while the partner's next one
// is on its way, and while this one is still in the cache it was read into.
void AllreduceOp::handlePlaced(qint64 bytes)
{
    if (m_placed.list && m_combiner.itemBytes > 0)
        combinePlacedUpTo(qsizetype(bytes - bytes % m_combiner.itemBytes));
}

void AllreduceOp::combinePlacedUpTo(qsizetype bytes)
{
    const qsizetype from = m_placedCombined;
    if (bytes <= from)
        return;
    char *theirs = m_placed.data + from;
    const char *mine = m_accumulated.bytes.constData() + from;
    if (m_placedFrom < rank())
        m_combiner.combineBytes(theirs, theirs, mine, bytes - from);
    else
        m_combiner.combineBytes(theirs, mine, theirs, bytes - from);
    m_placedCombined = bytes;
}

void AllreduceOp::combinePlaced()
{
    combinePlacedUpTo(m_accumulated.bytes.size());
    m_result->list = std::exchange(m_placed, {}).list;
    succeed();
}

void AllreduceOp::handleData(int from, Frame &frame, const CollectiveTag &tag)
{
    if (frame.header.flags & PlacedPayload) {
        if (!m_placed.list || tag.argument != m_step || senderOf(m_step) != from)
            return fail({ErrorCode::ProtocolViolation,
                         describe(QStringLiteral("rank %1's contribution arrived where none was awaited").arg(from))});
        return combinePlaced();
    }
    // Each step has one sender: anything else (a rank running another
    // algorithm because its contribution differs in size, say) fails at once.
    if (m_arrived.contains(tag.argument) || senderOf(tag.argument) != from || tag.argument < m_step)
        return fail({ErrorCode::ProtocolViolation,
                     describe(QStringLiteral("unexpected message of step %1 from rank %2 (contributions of "
                                             "different sizes?)").arg(tag.argument).arg(from))});
    m_arrived.insert(tag.argument, {from, payloadOf(std::move(frame))});
    advance();
}

bool AllreduceOp::waitsOn(int r) const
{
    return !isOver() && r == expectedFrom();
}

} // namespace mmpi::detail
