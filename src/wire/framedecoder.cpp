#include <mmpi/wire/framedecoder.h>

#include <mmpi/core/logging.h>
#include <mmpi/wire/bufferpool.h>
#include <mmpi/wire/itemcodec.h>

#include <QtEndian>

#include <cstring>
#include <utility>

namespace mmpi {

namespace {

// Once feed()'s buffer has held a large burst and is drained, its memory goes
// back to the system instead of staying reserved for the lifetime of the link.
constexpr qsizetype KeepCapacity = 64 * 1024;

// What a header alone makes the decoder set aside for its payload; a larger
// payload gets room as its bytes arrive. 1 MiB: a chunk of the transports'
// largest preferred size (512 KiB, tcp and local) arrives without a
// reallocation, while a peer that announces 256 MiB and sends nothing costs
// its link 1 MiB.
constexpr qsizetype FirstPayloadBytes = 1024 * 1024;

QString hex(quint64 value, int width)
{
    return QStringLiteral("0x") + QString::number(value, 16).toUpper().rightJustified(width, u'0');
}

// Fragment frames have their own flags; Data frames and their fragments may
// say their items are little-endian, unless the items are Object records.
Result<void> checkFlags(FrameKind kind, ItemType type, quint8 flags)
{
    quint8 allowed = 0;
    if (kind == FrameKind::Fragment)
        allowed |= FirstFragment | LastFragment;
    if ((kind == FrameKind::Data || kind == FrameKind::Fragment) && type != ItemType::Object)
        allowed |= LittleEndianItems;
    if (flags & ~allowed)
        return Error(ErrorCode::BadHeader, QStringLiteral("reserved flags %1 are set (allowed: %2)")
                                               .arg(hex(flags, 2), hex(allowed, 2)));
    return success();
}

// Checks the fixed fields of the first `size` header bytes, each field only
// once it is complete. Used on a full header and, earlier, on a partial one, so
// a peer that is not speaking MMPI is rejected after 4 bytes rather than left
// waiting for 44 that may never come.
Result<void> checkLeadingFields(const char *p, qsizetype size)
{
    if (size >= 4) {
        const quint32 magic = qFromBigEndian<quint32>(p);
        if (magic != FrameMagic)
            return Error(ErrorCode::BadMagic, QStringLiteral("bad magic %1 (expected %2)")
                                                  .arg(hex(magic, 8), hex(FrameMagic, 8)));
    }
    if (size >= 5 && quint8(p[4]) != FrameVersion)
        return Error(ErrorCode::BadVersion,
                     QStringLiteral("unsupported frame version %1 (expected %2)")
                         .arg(quint8(p[4])).arg(FrameVersion));
    if (size >= 6) {
        const quint8 kind = quint8(p[5]);
        if (kind < quint8(FrameKind::Data) || kind > quint8(FrameKind::Sealed))
            return Error(ErrorCode::BadFrameKind,
                         QStringLiteral("unknown frame kind %1 (expected 1 to 7)").arg(kind));
    }
    if (size >= 7 && !itemTypeFromCode(quint8(p[6])))
        return Error(ErrorCode::BadItemType,
                     QStringLiteral("unknown item type code %1 (expected 0 to %2)")
                         .arg(quint8(p[6])).arg(quint8(ItemType::UnsignedShort)));
    if (size >= 8)
        return checkFlags(FrameKind(quint8(p[5])), ItemType(quint8(p[6])), quint8(p[7]));
    return success();
}

// A fragment's count and type describe the whole message, which the receiver
// checks once reassembled; here only the length prefix of a first fragment.
Result<void> checkFragment(const FrameHeader &h)
{
    if (h.itemType == ItemType::None)
        return Error(ErrorCode::BadItemType, QStringLiteral("a Fragment frame must carry items"));
    if ((h.flags & FirstFragment) && h.payloadLength < FragmentLengthSize)
        return Error(ErrorCode::CountMismatch,
                     QStringLiteral("a first Fragment needs %1 bytes of message length, it has %2")
                         .arg(FragmentLengthSize).arg(h.payloadLength));
    return success();
}

// What the header alone can say about the payload: its exact size for
// fixed-size types, a lower bound for Object (4 bytes of length per record).
Result<void> checkDeclaredCount(const FrameHeader &h)
{
    if (h.kind == FrameKind::Fragment)
        return checkFragment(h);
    const qint64 length = h.payloadLength;
    switch (h.itemType) {
    case ItemType::None:
        if (h.count != 0 || length != 0)
            return Error(ErrorCode::CountMismatch,
                         QStringLiteral("a None frame must be empty, but it declares %1 items "
                                        "and %2 payload bytes")
                             .arg(h.count).arg(length));
        return success();
    case ItemType::Object:
        if (qint64(h.count) * 4 > length)
            return Error(ErrorCode::CountMismatch,
                         QStringLiteral("%1 Object records need at least %2 bytes but the payload "
                                        "length is %3")
                             .arg(h.count).arg(qint64(h.count) * 4).arg(length));
        return success();
    default: {
        const qint64 expected = qint64(h.count) * itemSize(h.itemType);
        if (expected != length)
            return Error(ErrorCode::CountMismatch,
                         QStringLiteral("%1 %2 items need %3 bytes but the payload length is %4")
                             .arg(h.count).arg(itemTypeName(h.itemType)).arg(expected).arg(length));
        return success();
    }
    }
}

// Drops consumed bytes. The move happens only once the consumed prefix is at
// least as long as what remains, so each byte is moved O(1) times on average
// however the stream is chunked.
void compact(QByteArray &buffer, qsizetype &readPos)
{
    if (readPos == 0)
        return;
    if (readPos == buffer.size()) {
        if (buffer.capacity() > KeepCapacity)
            buffer = QByteArray();
        else
            buffer.resize(0);
        readPos = 0;
    } else if (readPos >= buffer.size() - readPos) {
        buffer.remove(0, readPos);
        readPos = 0;
    }
}

// Records the error that ends the stream. Called only by a decoder that has not
// failed yet, so each decoder logs one warning at most.
Error fail(Error &failure, Error error)
{
    Q_ASSERT(!failure.isError());
    failure = std::move(error);
    qCWarning(lcWire).noquote() << "rejecting stream:" << failure.toString();
    return failure;
}

} // namespace

FrameDecoder::FrameDecoder(DecoderLimits limits)
    : m_limits(limits)
{
    // A legal frame must fit in the buffer, or it could never complete.
    m_limits.maxBufferedBytes = qMax(m_limits.maxBufferedBytes, m_limits.maxFrameSize);
}

Result<FrameHeader> FrameDecoder::decodeHeader(QByteArrayView bytes, const DecoderLimits &limits)
{
    if (bytes.size() < FrameHeaderSize)
        return Error(ErrorCode::BadHeader, QStringLiteral("a frame header has %1 bytes, got %2")
                                               .arg(FrameHeaderSize).arg(bytes.size()));
    const char *p = bytes.data();
    if (auto ok = checkLeadingFields(p, FrameHeaderSize); !ok)
        return ok.error();

    FrameHeader h;
    h.kind = FrameKind(quint8(p[5]));
    h.itemType = ItemType(quint8(p[6]));
    h.flags = quint8(p[7]);
    h.communicator = qFromBigEndian<quint32>(p + 8);
    h.source = qFromBigEndian<qint32>(p + 12);
    h.destination = qFromBigEndian<qint32>(p + 16);
    h.root = qFromBigEndian<qint32>(p + 20);
    h.tag = qFromBigEndian<qint32>(p + 24);
    h.count = qFromBigEndian<quint32>(p + 28);
    h.sequence = qFromBigEndian<quint64>(p + 32);
    h.payloadLength = qFromBigEndian<quint32>(p + 40);

    // Size before count: an oversized frame is refused before anything else
    // is believed about it.
    const qint64 frameSize = qint64(FrameHeaderSize) + h.payloadLength;
    if (frameSize > limits.maxFrameSize)
        return Error(ErrorCode::FrameTooLarge, QStringLiteral("frame of %1 bytes exceeds the limit of %2")
                                                   .arg(frameSize).arg(limits.maxFrameSize));
    if (auto ok = checkDeclaredCount(h); !ok)
        return ok.error();
    return h;
}

Result<void> FrameDecoder::checkHeaderPrefix(QByteArrayView bytes)
{
    return checkLeadingFields(bytes.data(), qMin<qsizetype>(bytes.size(), FrameHeaderSize));
}

// The header fixed the size; fragments are checked once reassembled.
Result<void> FrameDecoder::checkPayload(const FrameHeader &header, const QByteArray &payload)
{
    if (header.kind == FrameKind::Fragment)
        return success();
    return validatePayload(header.itemType, header.count, payload);
}

Result<void> FrameDecoder::feed(QByteArrayView bytes)
{
    if (hasFailed())
        return m_failure;
    if (bytes.size() > capacity())
        return fail(m_failure,
                    Error(ErrorCode::BufferLimitExceeded,
                          QStringLiteral("receiving %1 more bytes would buffer %2, above the "
                                         "limit of %3")
                              .arg(bytes.size()).arg(bufferedBytes() + bytes.size())
                              .arg(m_limits.maxBufferedBytes)));
    if (bytes.isEmpty())
        return success();
    compact(m_input, m_inputPos);
    m_input.append(bytes.data(), bytes.size());
    return success();
}

// feed()'s bytes take the path a transport's reads take.
Result<std::optional<Frame>> FrameDecoder::next()
{
    while (!hasFailed() && m_inputPos < m_input.size()) {
        const std::span<char> room = space();
        const qsizetype take = qMin<qsizetype>(qsizetype(room.size()), m_input.size() - m_inputPos);
        std::memcpy(room.data(), m_input.constData() + m_inputPos, size_t(take));
        m_inputPos += take;
        auto got = commit(take);
        if (!got || got->has_value()) {
            compact(m_input, m_inputPos);
            return got;
        }
    }
    if (hasFailed())
        return m_failure;
    compact(m_input, m_inputPos);
    return std::optional<Frame>();
}

std::span<char> FrameDecoder::space()
{
    if (hasFailed())
        return {};
    if (!m_pendingHeader)
        return std::span<char>(m_header).subspan(size_t(m_headerFilled));
    if (m_payloadFilled == m_payload.size())
        growPayload();
    return std::span<char>(m_payload.data() + m_payloadFilled, size_t(m_payload.size() - m_payloadFilled));
}

Result<std::optional<Frame>> FrameDecoder::commit(qint64 bytes)
{
    if (hasFailed())
        return m_failure;
    Q_ASSERT(bytes >= 0
             && bytes <= (m_pendingHeader ? m_payload.size() - m_payloadFilled : FrameHeaderSize - m_headerFilled));
    if (m_pendingHeader) {
        m_payloadFilled += bytes;
        return m_payloadFilled == qsizetype(m_pendingHeader->payloadLength) ? finishFrame()
                                                                             : std::optional<Frame>();
    }
    m_headerFilled += bytes;
    if (m_headerFilled < FrameHeaderSize) {
        if (auto ok = checkLeadingFields(m_header.data(), m_headerFilled); !ok)
            return fail(m_failure, ok.error());
        return std::optional<Frame>();
    }
    return takeHeader();
}

Result<std::optional<Frame>> FrameDecoder::takeHeader()
{
    auto header = decodeHeader(QByteArrayView(m_header.data(), FrameHeaderSize), m_limits);
    if (!header)
        return fail(m_failure, header.error());
    m_pendingHeader = *header;
    m_payload = BufferPool::take(qMin<qsizetype>(header->payloadLength, FirstPayloadBytes));
    m_payloadFilled = 0;
    if (header->payloadLength == 0)
        return finishFrame();
    return std::optional<Frame>();
}

// The payload so far is full and more is announced: twice the room, at most
// what the header declared, so each byte moves O(1) times on average (and
// glibc remaps a large block instead of copying it).
void FrameDecoder::growPayload()
{
    const qsizetype declared = qsizetype(m_pendingHeader->payloadLength);
    m_payload.resize(qMin(declared, qMax<qsizetype>(2 * m_payload.size(), FirstPayloadBytes)));
}

Result<std::optional<Frame>> FrameDecoder::finishFrame()
{
    Frame frame;
    frame.header = *m_pendingHeader;
    frame.payload = std::exchange(m_payload, QByteArray());
    m_pendingHeader.reset();
    m_headerFilled = 0;
    m_payloadFilled = 0;
    if (auto ok = checkPayload(frame.header, frame.payload); !ok)
        return fail(m_failure, ok.error());
    return std::optional<Frame>(std::move(frame));
}

qint64 FrameDecoder::capacity() const
{
    if (hasFailed())
        return 0;
    return m_limits.maxBufferedBytes - bufferedBytes();
}

qint64 FrameDecoder::bufferedBytes() const
{
    const qint64 inFrame = m_pendingHeader ? FrameHeaderSize + m_payloadFilled : m_headerFilled;
    return m_input.size() - m_inputPos + inFrame;
}

bool FrameDecoder::hasFailed() const
{
    return m_failure.isError();
}

const Error &FrameDecoder::failure() const
{
    return m_failure;
}

const DecoderLimits &FrameDecoder::limits() const
{
    return m_limits;
}

} // namespace mmpi
