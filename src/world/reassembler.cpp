#include "reassembler.h"

#include <mmpi/wire/itemcodec.h>

#include <QtEndian>

namespace mmpi::detail {

namespace {

Error violation(const QString &message)
{
    return {ErrorCode::ProtocolViolation, message};
}

} // namespace

Reassembler::Reassembler(qint64 maxMessageSize)
    : m_maxMessageSize(maxMessageSize)
{
}

Result<void> Reassembler::begin(const Frame &fragment)
{
    if (m_message)
        return violation(QStringLiteral("a new fragmented message began before the last one ended"));
    const quint64 total = qFromBigEndian<quint64>(fragment.payload.constData());
    if (total > quint64(m_maxMessageSize))
        return violation(QStringLiteral("a message of %1 bytes exceeds the limit of %2")
                             .arg(total).arg(m_maxMessageSize));
    m_expected = qint64(total);
    m_message = Frame{fragment.header, QByteArray()};
    // All of it at once, so that appending never copies what came before.
    // Only address space: the pages are taken as fragments fill them, so
    // memory still grows with the bytes actually received.
    m_message->payload.reserve(m_expected);
    m_message->header.kind = FrameKind::Data;
    m_message->header.flags = 0;
    return success();
}

Result<void> Reassembler::checkContinues(const FrameHeader &h) const
{
    if (!m_message)
        return violation(QStringLiteral("a fragment arrived with no message in progress"));
    const FrameHeader &m = m_message->header;
    if (h.communicator != m.communicator || h.tag != m.tag || h.itemType != m.itemType
        || h.count != m.count || h.source != m.source || h.root != m.root)
        return violation(QStringLiteral("a fragment does not belong to the message in progress"));
    return success();
}

char *Reassembler::placeNext(const FrameHeader &header)
{
    if (!m_message || (header.flags & FirstFragment) || !checkContinues(header))
        return nullptr;
    QByteArray &payload = m_message->payload;
    if (payload.size() + qint64(header.payloadLength) > m_expected
        || payload.capacity() < payload.size() + qsizetype(header.payloadLength))
        return nullptr;
    // Past size(), within the reserved capacity: resize() in add() keeps it.
    m_placed = payload.size();
    return payload.data() + payload.size();
}

Result<std::optional<Frame>> Reassembler::add(const Frame &fragment)
{
    const bool first = fragment.header.flags & FirstFragment;
    if (first) {
        if (auto ok = begin(fragment); !ok)
            return ok.error();
    } else if (auto ok = checkContinues(fragment.header); !ok) {
        return ok.error();
    }
    const bool placed = fragment.payload.size() != qsizetype(fragment.header.payloadLength);
    if (placed && (first || m_placed != m_message->payload.size()))
        return violation(QStringLiteral("a fragment was read to a place its message did not offer"));
    const QByteArrayView bytes = QByteArrayView(fragment.payload).sliced(first ? FragmentLengthSize : 0);
    const qsizetype length = placed ? qsizetype(fragment.header.payloadLength) : bytes.size();
    if (m_message->payload.size() + length > m_expected)
        return violation(QStringLiteral("fragments carry more than the announced %1 bytes").arg(m_expected));
    if (placed)
        m_message->payload.resize(m_message->payload.size() + length); // the bytes are there already
    else
        m_message->payload.append(bytes);
    m_placed = -1;
    if (!(fragment.header.flags & LastFragment))
        return std::optional<Frame>();
    Frame done = std::move(*m_message);
    m_message.reset();
    if (done.payload.size() != m_expected)
        return violation(QStringLiteral("a fragmented message ended after %1 of %2 bytes")
                             .arg(done.payload.size()).arg(m_expected));
    if (auto ok = validatePayload(done.header.itemType, done.header.count, done.payload); !ok)
        return ok.error();
    return std::optional<Frame>(std::move(done));
}

} // namespace mmpi::detail
