#include "exchangeop.h"

#include <mmpi/wire/bufferpool.h>

namespace mmpi::detail {

ExchangeOp::ExchangeOp(CollectiveSetup setup, Result<QList<Payload>> parts, ExchangeList into)
    : CollectiveOp(std::move(setup)), m_parts(std::move(parts)), m_into(std::move(into))
{
}

void ExchangeOp::begin()
{
    if (!m_parts)
        return fail({m_parts.error().code, describe(m_parts.error().message)});
    const bool same = m_parts->size() == 1;
    if (!same && m_parts->size() != size())
        return fail({ErrorCode::CountMismatch,
                     describe(QStringLiteral("%1 parts for %2 ranks").arg(m_parts->size()).arg(size()))});
    m_got = QList<bool>(size(), false);
    m_got[rank()] = true;
    m_missing = size() - 1;
    m_result->parts = QList<Payload>(size());
    // Ranks start with different peers so that no rank gets everything at once.
    for (int i = 1; i < size(); ++i) {
        const int r = (rank() + i) % size();
        send(r, m_parts->at(same ? 0 : r));
    }
    // Parts may be views of the caller's items (alltoall of bytes): the
    // world copies what it keeps of those sent, and this rank's own is kept.
    const Payload &own = m_parts->at(same ? 0 : rank());
    if (!m_list.start(m_into, size(), rank(), own))
        m_result->parts[rank()] = {own.itemType, own.count, BufferPool::owned(own.bytes), own.order};
    m_parts = QList<Payload>();
    if (m_missing == 0)
        finish();
}

char *ExchangeOp::place(int from, const FrameHeader &header, const CollectiveTag &, qint64 bytes,
                        std::shared_ptr<void> &keep)
{
    return m_got.at(from) ? nullptr : m_list.placeFor(from, header, bytes, keep);
}

void ExchangeOp::handleData(int from, Frame &frame, const CollectiveTag &)
{
    if (m_got.at(from))
        return fail({ErrorCode::ProtocolViolation, describe(QStringLiteral("a second part from rank %1").arg(from))});
    if (!m_list.take(from, std::move(frame), m_result->parts))
        return fail({ErrorCode::ProtocolViolation, describe(QStringLiteral("an unexpected part from rank %1").arg(from))});
    m_got[from] = true;
    if (--m_missing == 0)
        finish();
}

void ExchangeOp::finish()
{
    m_list.finishInto(*m_result);
    succeed();
}

bool ExchangeOp::waitsOn(int r) const
{
    return !m_got.value(r, true);
}

} // namespace mmpi::detail
