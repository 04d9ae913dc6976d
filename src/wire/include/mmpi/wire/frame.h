// A frame: the unit every MMPI link carries. A fixed 44-byte big-endian header
// (docs/design/protocol.md) followed by a payload of typed items. Encoding is pure and
// total; decoding lives in FrameDecoder, which trusts nothing.
#pragma once

#include <mmpi/wire/itemtype.h>

#include <QByteArray>
#include <QMetaType>

#include <memory>

namespace mmpi {

// Own meta-object for FrameKind, for the reason given in itemtype.h.
inline namespace framekinds {
Q_NAMESPACE

enum class FrameKind : quint8 {
    Data = 1,      // an application message (point-to-point or collective)
    Control = 2,   // formation, authentication and membership messages
    Heartbeat = 3, // liveness probe; empty payload
    Goodbye = 4,   // the sender's app is ending cleanly
    // One slice of a Data message too large for one frame (docs/design/protocol.md):
    // item type and count describe the whole message, the payload a slice.
    Fragment = 5,
    // Cumulative acknowledgement of a link's sequenced frames (Data, Fragment,
    // Goodbye): one Long item, the highest sequence number received in order.
    Ack = 6,
    // A sealed record (docs/design/protocol.md, "Sealed records"): after the
    // handshake every frame travels inside one, encrypted and authenticated.
    // Item type Byte, count the payload's length, sequence the record number.
    Sealed = 7,
};
Q_ENUM_NS(FrameKind)
} // inline namespace framekinds

constexpr quint32 FrameMagic = 0x4D4D5049; // "MMPI"
constexpr quint8 FrameVersion = 1;
constexpr int FrameHeaderSize = 44;
constexpr qint32 NoRank = -1;

// Flags of a Fragment frame. The first fragment's payload starts with the
// whole message's payload length (u64) so the receiver can bound it at once.
enum FragmentFlag : quint8 {
    FirstFragment = 0x01,
    LastFragment = 0x02,
};
constexpr int FragmentLengthSize = 8;
// Flag of a Data frame and of every Fragment of one: its fixed-size items are
// little-endian, not big-endian (ItemOrder). Refused on other kinds and on
// Object items, whose record lengths are always big-endian.
constexpr quint8 LittleEndianItems = 0x04;
// Never on the wire (the decoder refuses it): marks a Data frame handed to a
// MessageSink whose payload was written, as it arrived, into the buffer the
// sink offered for it (MessageSink::placeFor); the frame itself carries none.
constexpr quint8 PlacedPayload = 0x80;

struct FrameHeader
{
    FrameKind kind = FrameKind::Data;
    ItemType itemType = ItemType::None;
    quint8 flags = 0;          // FragmentFlag bits, LittleEndianItems; 0 on other kinds
    quint32 communicator = 0;  // communicator id (0 = world)
    qint32 source = NoRank;
    qint32 destination = NoRank;
    qint32 root = NoRank;      // group root for collectives, NoRank otherwise
    qint32 tag = 0;
    quint32 count = 0;         // number of items
    // Per-link sequence number of Data, Fragment and Goodbye frames, from 1 in
    // the order they enter the link; 0 on every other kind (never replayed).
    quint64 sequence = 0;
    quint32 payloadLength = 0; // filled in by encodeFrame()

    bool operator==(const FrameHeader &) const = default;
};

struct Frame
{
    FrameHeader header;
    QByteArray payload;
    // What a payload that views memory it does not own (isBorrowed()) views,
    // kept alive and unchanged while the frame lives (e.g. a shared copy of
    // the caller's QList), so that whoever keeps the frame may keep it as it
    // is. Null: the view is valid only during the call that hands it over.
    std::shared_ptr<const void> owner = {};

    // The message, not who keeps its memory.
    bool operator==(const Frame &other) const { return header == other.header && payload == other.payload; }
};

// The order of the items a Data or Fragment frame carries, and the flag that says it.
inline ItemOrder itemOrderOf(const FrameHeader &header)
{
    return (header.flags & LittleEndianItems) ? QSysInfo::LittleEndian : QSysInfo::BigEndian;
}
inline quint8 itemOrderFlag(ItemOrder order)
{
    return order == QSysInfo::LittleEndian ? LittleEndianItems : 0;
}

// Serialize header and payload. header.payloadLength is taken from payload.size().
QByteArray encodeFrame(const Frame &frame);
// Serialize just the 44-byte header (payloadLength as given).
QByteArray encodeHeader(const FrameHeader &header);
// The same into FrameHeaderSize bytes at `out` (a sender's stack: no allocation).
void encodeHeaderInto(const FrameHeader &header, char *out);

// Convenience: a Data/Control frame whose payload holds `count` items of `type`.
Frame makeFrame(FrameKind kind, ItemType type, quint32 count, QByteArray payload);

} // namespace mmpi

Q_DECLARE_METATYPE(mmpi::Frame)
