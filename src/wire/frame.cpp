#include <mmpi/wire/frame.h>

#include <QtEndian>

#include <cstring>
#include <limits>

namespace mmpi {

// Field offsets of the version-1 header; docs/design/protocol.md has the same table.
void encodeHeaderInto(const FrameHeader &h, char *out)
{
    qToBigEndian<quint32>(FrameMagic, out + 0);
    out[4] = char(FrameVersion);
    out[5] = char(h.kind);
    out[6] = char(h.itemType);
    out[7] = char(h.flags);
    qToBigEndian<quint32>(h.communicator, out + 8);
    qToBigEndian<qint32>(h.source, out + 12);
    qToBigEndian<qint32>(h.destination, out + 16);
    qToBigEndian<qint32>(h.root, out + 20);
    qToBigEndian<qint32>(h.tag, out + 24);
    qToBigEndian<quint32>(h.count, out + 28);
    qToBigEndian<quint64>(h.sequence, out + 32);
    qToBigEndian<quint32>(h.payloadLength, out + 40);
}

QByteArray encodeHeader(const FrameHeader &header)
{
    QByteArray out(FrameHeaderSize, Qt::Uninitialized);
    encodeHeaderInto(header, out.data());
    return out;
}

QByteArray encodeFrame(const Frame &frame)
{
    // The length field is 32 bits; a larger payload is a programming error
    // (no decoder limit could accept it anyway).
    Q_ASSERT(frame.payload.size() <= qsizetype(std::numeric_limits<quint32>::max()));
    FrameHeader header = frame.header;
    header.payloadLength = quint32(frame.payload.size());

    // One allocation for header and payload: frames go straight to a socket.
    QByteArray out(FrameHeaderSize + frame.payload.size(), Qt::Uninitialized);
    encodeHeaderInto(header, out.data());
    if (!frame.payload.isEmpty())
        memcpy(out.data() + FrameHeaderSize, frame.payload.constData(), size_t(frame.payload.size()));
    return out;
}

Frame makeFrame(FrameKind kind, ItemType type, quint32 count, QByteArray payload)
{
    Q_ASSERT(payload.size() <= qsizetype(std::numeric_limits<quint32>::max()));
    Frame frame;
    frame.header.kind = kind;
    frame.header.itemType = type;
    frame.header.count = count;
    frame.header.payloadLength = quint32(payload.size());
    frame.payload = std::move(payload);
    return frame;
}

} // namespace mmpi
