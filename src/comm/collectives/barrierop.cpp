#include "barrierop.h"

namespace mmpi::detail {

int BarrierOp::rounds() const
{
    int r = 0;
    while ((1 << r) < size())
        ++r;
    return r;
}

int BarrierOp::partnerFrom(int round) const
{
    return (rank() - (1 << round) % size() + size()) % size();
}

void BarrierOp::begin()
{
    if (size() > 1)
        send((rank() + 1) % size(), {}, 0);
    advance();
}

void BarrierOp::handleData(int from, Frame &frame, const CollectiveTag &tag)
{
    if (tag.argument >= rounds() || from != partnerFrom(tag.argument) || frame.header.count != 0
        || m_heard.contains(tag.argument)) {
        fail({ErrorCode::ProtocolViolation,
              describe(QStringLiteral("unexpected message of round %1 from rank %2").arg(tag.argument).arg(from))});
        return;
    }
    m_heard.insert(tag.argument);
    advance();
}

// Rounds complete in order; a message of a later round may come first.
void BarrierOp::advance()
{
    while (m_round < rounds() && m_heard.contains(m_round)) {
        ++m_round;
        if (m_round < rounds())
            send((rank() + (1 << m_round)) % size(), {}, m_round);
    }
    if (m_round == rounds())
        succeed();
}

bool BarrierOp::waitsOn(int r) const
{
    for (int round = m_round; round < rounds(); ++round)
        if (!m_heard.contains(round) && partnerFrom(round) == r)
            return true;
    return false;
}

} // namespace mmpi::detail
