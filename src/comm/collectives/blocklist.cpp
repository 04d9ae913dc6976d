#include "blocklist.h"

#include <cstring>
#include <limits>

namespace mmpi::detail {

bool BlockList::start(const ExchangeList &into, int ranks, int rank, const Payload &own)
{
    const qint64 total = qint64(own.count) * ranks;
    if (!into.newList || into.itemBytes <= 0 || total > std::numeric_limits<quint32>::max()
        || own.bytes.size() != qint64(own.count) * into.itemBytes)
        return false;
    m_itemType = own.itemType;
    m_blockCount = own.count;
    m_itemBytes = into.itemBytes;
    m_list = into.newList(quint32(total));
    m_in = QList<bool>(ranks, false);
    return copyIn(rank, own);
}

bool BlockList::fits(ItemType type, quint32 count) const
{
    return isStarted() && type == m_itemType && count == m_blockCount;
}

char *BlockList::placeFor(int rank, const FrameHeader &header, qint64 bytes, std::shared_ptr<void> &keep) const
{
    if (!fits(header.itemType, header.count) || m_in.at(rank) || bytes != blockBytes()
        || itemOrderOf(header) != HostItemOrder)
        return nullptr;
    keep = m_list.list;
    return m_list.data + rank * blockBytes();
}

bool BlockList::take(int rank, Frame &&frame, QList<Payload> &parts)
{
    if (frame.header.flags & PlacedPayload) {
        if (!isStarted())
            return false;
        m_in[rank] = true;
    } else if (Payload part = payloadOf(std::move(frame)); !copyIn(rank, part)) {
        parts[rank] = std::move(part);
    }
    return true;
}

bool BlockList::copyIn(int rank, const Payload &part)
{
    if (!fits(part.itemType, part.count))
        return false;
    const QByteArray bytes = inHostOrder(part).bytes;
    if (bytes.size() != blockBytes())
        return false;
    if (!bytes.isEmpty())
        std::memcpy(m_list.data + rank * blockBytes(), bytes.constData(), size_t(bytes.size()));
    m_in[rank] = true;
    return true;
}

void BlockList::finishInto(CollectiveResult &result)
{
    if (!isStarted())
        return;
    if (!m_in.contains(false)) {
        result.list = std::exchange(m_list, {}).list;
        result.parts.clear();
        return;
    }
    for (qsizetype r = 0; r < m_in.size(); ++r)
        if (m_in.at(r))
            result.parts[r] = {m_itemType, m_blockCount,
                               QByteArray::fromRawData(m_list.data + r * blockBytes(), blockBytes()), HostItemOrder,
                               m_list.list};
    m_list = {};
}

} // namespace mmpi::detail
