#include "reassembler.h"

#include <mmpi/wire/bufferpool.h>
#include <mmpi/wire/itemcodec.h>

#include <QtEndian>

#include <cstring>
#include <utility>

namespace mmpi::detail {

namespace {

Error violation(const QString &message)
{
    return {ErrorCode::ProtocolViolation, message};
}

// Only a run of fixed-size items can be checked before it is read, which a
// message written straight into a receiver's buffer must be.
bool sizeKnownAhead(const FrameHeader &header, qint64 bytes)
{
    const int size = itemSize(header.itemType);
    return size > 0 && qint64(header.count) * size == bytes;
}

} // namespace

Reassembler::Reassembler(qint64 maxMessageSize) : m_maxMessageSize(maxMessageSize) {}

Result<void> Reassembler::begin(const Frame &fragment, const MessagePlacement &placement)
{
    if (m_message)
        return violation(QStringLiteral("a new fragmented message began before the last one ended"));
    const quint64 total = qFromBigEndian<quint64>(fragment.payload.constData());
    if (total > quint64(m_maxMessageSize))
        return violation(QStringLiteral("a message of %1 bytes exceeds the limit of %2")
                             .arg(total).arg(m_maxMessageSize));
    m_expected = qint64(total);
    m_filled = 0;
    m_message = Frame{fragment.header, QByteArray()};
    m_message->header.kind = FrameKind::Data;
    m_message->header.flags = fragment.header.flags & LittleEndianItems;
    m_target = placement && sizeKnownAhead(m_message->header, m_expected)
                   ? placement(m_message->header, m_expected)
                   : nullptr;
    if (m_target) {
        m_message->header.flags |= PlacedPayload;
        return success();
    }
    // All of it at once, so that appending never copies what came before.
    // A new buffer is only address space: its pages are taken as fragments
    // fill them, so memory still grows with the bytes actually received.
    m_message->payload = BufferPool::take(m_expected);
    m_target = m_message->payload.data();
    return success();
}

Result<void> Reassembler::checkContinues(const FrameHeader &h) const
{
    if (!m_message)
        return violation(QStringLiteral("a fragment arrived with no message in progress"));
    const FrameHeader &m = m_message->header;
    if (h.communicator != m.communicator || h.tag != m.tag || h.itemType != m.itemType
        || h.count != m.count || h.source != m.source || h.root != m.root
        || (h.flags & LittleEndianItems) != (m.flags & LittleEndianItems))
        return violation(QStringLiteral("a fragment does not belong to the message in progress"));
    return success();
}

// A receiver that came after the message began (a receive posted, a
// collective started, while its first fragments arrived) still gets the rest
// where it wants it: what came so far is copied there once.
void Reassembler::placeLate(const MessagePlacement &placement)
{
    if (!placement || (m_message->header.flags & PlacedPayload) || !sizeKnownAhead(m_message->header, m_expected))
        return;
    char *place = placement(m_message->header, m_expected);
    if (!place)
        return;
    if (m_filled > 0)
        std::memcpy(place, m_target, size_t(m_filled));
    BufferPool::recycle(std::exchange(m_message->payload, {}));
    m_message->header.flags |= PlacedPayload;
    m_target = place;
}

void Reassembler::abandon()
{
    m_message.reset();
    m_target = nullptr;
    m_filled = 0;
}

Result<std::optional<Frame>> Reassembler::add(const Frame &fragment, const MessagePlacement &placement)
{
    const bool first = fragment.header.flags & FirstFragment;
    if (first) {
        if (auto ok = begin(fragment, placement); !ok)
            return ok.error();
    } else if (auto ok = checkContinues(fragment.header); !ok) {
        return ok.error();
    }
    const QByteArrayView bytes = QByteArrayView(fragment.payload).sliced(first ? FragmentLengthSize : 0);
    const qint64 length = bytes.size();
    if (m_filled + length > m_expected)
        return violation(QStringLiteral("fragments carry more than the announced %1 bytes").arg(m_expected));
    if (!first)
        placeLate(placement);
    if (length > 0)
        std::memcpy(m_target + m_filled, bytes.data(), size_t(length));
    m_filled += length;
    if (!(fragment.header.flags & LastFragment))
        return std::optional<Frame>();
    return finish();
}

// A short message stays in progress, so that the caller still sees whether
// it was being placed before it abandons it.
Result<std::optional<Frame>> Reassembler::finish()
{
    if (m_filled != m_expected)
        return violation(QStringLiteral("a fragmented message ended after %1 of %2 bytes").arg(m_filled).arg(m_expected));
    Frame done = std::move(*m_message);
    abandon();
    if (done.header.flags & PlacedPayload)
        return std::optional<Frame>(std::move(done)); // its size was checked before it was placed
    if (auto ok = validatePayload(done.header.itemType, done.header.count, done.payload); !ok)
        return ok.error();
    return std::optional<Frame>(std::move(done));
}

} // namespace mmpi::detail
