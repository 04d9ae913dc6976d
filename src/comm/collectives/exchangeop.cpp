#include "exchangeop.h"

#include <mmpi/wire/bufferpool.h>

#include <cstring>
#include <limits>

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
    if (!startList(own))
        m_result->parts[rank()] = {own.itemType, own.count, BufferPool::owned(own.bytes), own.order};
    m_parts = QList<Payload>();
    if (m_missing == 0)
        finish();
}

// The caller's list, with this rank's block in it, where the blocks have a
// fixed size: every other block is expected to be the same.
bool ExchangeOp::startList(const Payload &own)
{
    const qint64 total = qint64(own.count) * size();
    if (!m_into.newList || m_into.itemBytes <= 0 || total > std::numeric_limits<quint32>::max()
        || own.bytes.size() != qint64(own.count) * m_into.itemBytes)
        return false;
    m_itemType = own.itemType;
    m_blockCount = own.count;
    m_list = m_into.newList(quint32(total));
    m_inList = QList<bool>(size(), false);
    return copyIntoList(rank(), own);
}

bool ExchangeOp::fitsList(ItemType type, quint32 count) const
{
    return m_list.list && type == m_itemType && count == m_blockCount;
}

bool ExchangeOp::copyIntoList(int r, const Payload &part)
{
    if (!fitsList(part.itemType, part.count))
        return false;
    const QByteArray bytes = inHostOrder(part).bytes;
    if (bytes.size() != blockBytes())
        return false;
    if (!bytes.isEmpty())
        std::memcpy(m_list.data + r * blockBytes(), bytes.constData(), size_t(bytes.size()));
    m_inList[r] = true;
    return true;
}

char *ExchangeOp::place(int from, const FrameHeader &header, const CollectiveTag &, qint64 bytes,
                        std::shared_ptr<void> &keep)
{
    if (m_got.at(from) || !fitsList(header.itemType, header.count) || bytes != blockBytes()
        || itemOrderOf(header) != HostItemOrder)
        return nullptr;
    keep = m_list.list;
    return m_list.data + from * blockBytes();
}

void ExchangeOp::handleData(int from, Frame &frame, const CollectiveTag &)
{
    if (m_got.at(from))
        return fail({ErrorCode::ProtocolViolation, describe(QStringLiteral("a second part from rank %1").arg(from))});
    const bool placed = frame.header.flags & PlacedPayload;
    if (placed && !m_list.list)
        return fail({ErrorCode::ProtocolViolation, describe(QStringLiteral("an unexpected part from rank %1").arg(from))});
    m_got[from] = true;
    if (placed)
        m_inList[from] = true;
    else if (Payload part = payloadOf(std::move(frame)); !copyIntoList(from, part))
        m_result->parts[from] = std::move(part);
    if (--m_missing == 0)
        finish();
}

// Every block in the list: the list is the result. Otherwise the blocks in
// it become parts again (views of it), beside the ones that did not fit.
void ExchangeOp::finish()
{
    if (m_list.list) {
        if (!m_inList.contains(false)) {
            m_result->list = std::exchange(m_list, {}).list;
            m_result->parts.clear();
            return succeed();
        }
        for (int r = 0; r < size(); ++r)
            if (m_inList.at(r))
                m_result->parts[r] = {m_itemType, m_blockCount,
                                      QByteArray::fromRawData(m_list.data + r * blockBytes(), blockBytes()),
                                      HostItemOrder, m_list.list};
        m_list = {};
    }
    succeed();
}

bool ExchangeOp::waitsOn(int r) const
{
    return !m_got.value(r, true);
}

} // namespace mmpi::detail
