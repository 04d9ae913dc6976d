#include "gatherop.h"

namespace mmpi::detail {

GatherOp::GatherOp(CollectiveSetup setup, Payload contribution, int root)
    : CollectiveOp(std::move(setup)), m_contribution(std::move(contribution)), m_root(root)
{
}

void GatherOp::begin()
{
    if (m_root < 0 || m_root >= size())
        return fail({ErrorCode::InvalidRank,
                     describe(QStringLiteral("root %1 is not a rank of this communicator").arg(m_root))});
    if (rank() != m_root) {
        send(m_root, m_contribution);
        return succeed();
    }
    m_result->parts = QList<Payload>(size());
    m_result->parts[rank()] = std::move(m_contribution);
    m_got = QList<bool>(size(), false);
    m_got[rank()] = true;
    m_missing = size() - 1;
    if (m_missing == 0)
        succeed();
}

void GatherOp::handleData(int from, Frame &frame, const CollectiveTag &)
{
    if (rank() != m_root || m_got.at(from))
        return fail({ErrorCode::ProtocolViolation,
                     describe(QStringLiteral("unexpected contribution from rank %1").arg(from))});
    m_got[from] = true;
    m_result->parts[from] = payloadOf(frame);
    if (--m_missing == 0)
        succeed();
}

bool GatherOp::waitsOn(int r) const
{
    return rank() == m_root && !m_got.value(r, true);
}

} // namespace mmpi::detail
