#include "scatterop.h"

namespace mmpi::detail {

ScatterOp::ScatterOp(CollectiveSetup setup, Result<QList<Payload>> parts, int root)
    : CollectiveOp(std::move(setup)), m_parts(std::move(parts)), m_root(root)
{
}

void ScatterOp::begin()
{
    if (m_root < 0 || m_root >= size())
        return fail({ErrorCode::InvalidRank,
                     describe(QStringLiteral("root %1 is not a rank of this communicator").arg(m_root))});
    if (rank() != m_root)
        return;
    if (!m_parts)
        return fail({m_parts.error().code, describe(m_parts.error().message)});
    if (m_parts->size() != size())
        return fail({ErrorCode::CountMismatch,
                     describe(QStringLiteral("the root has %1 parts for %2 ranks").arg(m_parts->size()).arg(size()))});
    // Starting after the root spreads the order over the ranks.
    for (int i = 1; i < size(); ++i) {
        const int r = (rank() + i) % size();
        send(r, m_parts->at(r));
    }
    m_result->payload = m_parts->at(rank());
    m_parts = QList<Payload>();
    succeed();
}

void ScatterOp::handleData(int from, Frame &frame, const CollectiveTag &)
{
    if (from != m_root || rank() == m_root || isOver())
        return fail({ErrorCode::ProtocolViolation, describe(QStringLiteral("unexpected part from rank %1").arg(from))});
    m_result->payload = payloadOf(frame);
    succeed();
}

bool ScatterOp::waitsOn(int r) const
{
    return rank() != m_root && r == m_root;
}

} // namespace mmpi::detail
