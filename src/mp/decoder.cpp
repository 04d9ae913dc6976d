#include <mmpi/mp/decoder.h>

#include <mmpi/mp/codec.h>

#include <QtEndian>

namespace mmpi::mp {

Decoder::Decoder(qint64 maxMessageSize) : m_maxMessageSize(maxMessageSize) {}

Result<void> Decoder::feed(QByteArrayView bytes)
{
    if (hasFailed())
        return m_failure;
    while (!bytes.isEmpty()) {
        if (!m_inPayload) {
            bytes = bytes.sliced(takeHeader(bytes));
            if (auto ok = checkHeaderSoFar(); !ok)
                return fail(ok.error());
        } else {
            bytes = bytes.sliced(takePayload(bytes));
        }
    }
    return success();
}

qsizetype Decoder::takeHeader(QByteArrayView bytes)
{
    const qsizetype n = qMin<qsizetype>(HeaderSize - m_header.size(), bytes.size());
    m_header.append(bytes.first(n));
    return n;
}

// Fields are judged as soon as their bytes are in, so garbage is refused
// without waiting for bytes that may never come.
Result<void> Decoder::checkHeaderSoFar()
{
    const char *h = m_header.constData();
    if (m_header.size() >= 4 && qFromBigEndian<quint32>(h) != Magic)
        return Error(ErrorCode::BadMagic,
                     QStringLiteral("expected magic 0x01CBF854 (30144596), got 0x%1")
                         .arg(qFromBigEndian<quint32>(h), 8, 16, QLatin1Char('0')));
    if (m_header.size() >= 9 && !typeFromCode(quint8(h[8])))
        return Error(ErrorCode::BadItemType,
                     QStringLiteral("type code %1 is not an edu.rit.mp type (1..13); the message cannot be skipped")
                         .arg(quint8(h[8])));
    if (m_header.size() < HeaderSize)
        return success();
    m_current = Message{qFromBigEndian<qint32>(h + 4), quint8(h[8]), qFromBigEndian<qint32>(h + 9), {}};
    if (m_current.count < 0)
        return Error(ErrorCode::BadHeader, QStringLiteral("negative item count %1").arg(m_current.count));
    m_payloadLength = payloadLength(m_current.typeCode, m_current.count);
    if (m_payloadLength > m_maxMessageSize)
        return Error(ErrorCode::FrameTooLarge,
                     QStringLiteral("message of %1 %2 items (%3 bytes) exceeds the limit of %4 bytes")
                         .arg(m_current.count).arg(codeName(m_current.typeCode)).arg(m_payloadLength)
                         .arg(m_maxMessageSize));
    m_header.clear();
    m_inPayload = true;
    takePayload({});
    return success();
}

qsizetype Decoder::takePayload(QByteArrayView bytes)
{
    const qsizetype n = qsizetype(qMin<qint64>(m_payloadLength - m_current.items.size(), bytes.size()));
    m_current.items.append(bytes.first(n));
    if (m_current.items.size() == m_payloadLength) {
        m_ready.append(std::move(m_current));
        m_current = {};
        m_inPayload = false;
    }
    return n;
}

std::optional<Message> Decoder::next()
{
    if (m_ready.isEmpty())
        return std::nullopt;
    return m_ready.takeFirst();
}

Result<void> Decoder::finish() const
{
    if (hasFailed())
        return m_failure;
    if (m_inPayload)
        return Error(ErrorCode::TruncatedPayload,
                     QStringLiteral("stream ended after %1 of %2 item bytes of a message of %3 %4 items (tag %5)")
                         .arg(m_current.items.size()).arg(m_payloadLength).arg(m_current.count)
                         .arg(codeName(m_current.typeCode)).arg(m_current.tag));
    if (!m_header.isEmpty())
        return Error(ErrorCode::TruncatedPayload,
                     QStringLiteral("stream ended after %1 of the %2 header bytes of a message")
                         .arg(m_header.size()).arg(HeaderSize));
    return success();
}

Result<void> Decoder::fail(Error error)
{
    m_failure = error;
    return error;
}

} // namespace mmpi::mp
