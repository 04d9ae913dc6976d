// libFuzzer target for the wire layer: arbitrary bytes, delivered in arbitrary
// chunks, must never crash the decoder, and every frame it does accept must
// survive re-encoding and item decoding unchanged.
//
// Input layout: byte 0 picks the chunking (0 = everything at once, otherwise the
// largest chunk), byte 1 seeds the chunk-size sequence, the rest is the stream.
#include "invariant.h"

#include <mmpi/wire/framedecoder.h>
#include <mmpi/wire/itemcodec.h>

#include <QLoggingCategory>

#include <cstdint>

using namespace mmpi;
using mmpi::fuzz::check;

namespace {

const DecoderLimits Limits{1024 * 1024, 1024 * 1024 + 4096};

// Decoding, re-encoding and decoding again must give the same items: a frame
// the decoder accepted is well-formed for its declared type.
template<typename T>
void checkItems(const Frame &f)
{
    const ItemOrder order = itemOrderOf(f.header);
    const auto items = decodeItems<T>(f.header.itemType, f.header.count, f.payload, order);
    check(items.hasValue(), "decodeItems failed on an accepted frame");
    check(encodeItems<T>(*items, f.header.itemType, order) == f.payload, "items do not re-encode to the payload");
}

void checkPayload(const Frame &f)
{
    switch (f.header.itemType) {
    case ItemType::None: check(f.payload.isEmpty() && f.header.count == 0, "None frame not empty"); break;
    case ItemType::Boolean: checkItems<bool>(f); break;
    case ItemType::Byte:
    case ItemType::SignedByte: checkItems<qint8>(f); break;
    case ItemType::UnsignedByte: checkItems<quint8>(f); break;
    case ItemType::Short:
    case ItemType::SignedShort: checkItems<qint16>(f); break;
    case ItemType::UnsignedShort: checkItems<quint16>(f); break;
    case ItemType::Int: checkItems<qint32>(f); break;
    case ItemType::Long: checkItems<qint64>(f); break;
    case ItemType::Char: checkItems<char16_t>(f); break;
    case ItemType::Float: checkItems<float>(f); break;
    case ItemType::Double: checkItems<double>(f); break;
    case ItemType::Object: {
        const auto objects = decodeObjects(f.header.count, f.payload);
        check(objects.hasValue(), "decodeObjects failed on an accepted frame");
        check(encodeObjects(*objects) == f.payload, "objects do not re-encode to the payload");
        break;
    }
    }
    // The wrong C++ type is refused, never reinterpreted.
    const auto asInt = decodeItems<qint32>(f.header.itemType, f.header.count, f.payload);
    check(asInt.hasValue() == (f.header.itemType == ItemType::Int), "Int decoding of another type");
    if (!asInt)
        check(asInt.error().code == ErrorCode::TypeMismatch, "wrong error for a type mismatch");
}

// A Fragment's count describes the whole message, not its slice: only its own
// shape is the decoder's to promise.
void checkFragment(const Frame &f)
{
    check(f.header.itemType != ItemType::None, "Fragment without items");
    check((f.header.flags & ~(FirstFragment | LastFragment | LittleEndianItems)) == 0, "unknown Fragment flags");
    check(!(f.header.flags & LittleEndianItems) || f.header.itemType != ItemType::Object,
          "little-endian Object records");
    if (f.header.flags & FirstFragment)
        check(f.payload.size() >= FragmentLengthSize, "first Fragment without its length");
}

void checkFrame(const Frame &f, const QByteArray &reencoded)
{
    check(f.header.payloadLength == quint32(f.payload.size()), "payloadLength != payload size");
    check(FrameHeaderSize + f.payload.size() <= Limits.maxFrameSize, "frame over the limit");

    FrameDecoder again(Limits);
    check(again.feed(reencoded).hasValue(), "re-encoded frame not accepted by feed");
    auto next = again.next();
    check(next.hasValue() && next->has_value(), "re-encoded frame does not decode");
    check(**next == f, "re-encoded frame decodes differently");
    check(again.bufferedBytes() == 0, "re-encoded frame leaves bytes behind");
    if (f.header.kind == FrameKind::Fragment)
        return checkFragment(f);
    const bool mayBeLittle = f.header.kind == FrameKind::Data && f.header.itemType != ItemType::Object;
    check((f.header.flags & ~(mayBeLittle ? LittleEndianItems : 0)) == 0, "flags this frame may not have");
    checkPayload(f);
}

// A tiny xorshift so chunk sizes vary along the stream, reproducibly.
struct Chunker
{
    quint32 state;
    quint32 largest;

    qsizetype nextSize(qsizetype remaining)
    {
        if (largest == 0)
            return remaining;
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        return qMin<qsizetype>(remaining, 1 + state % largest);
    }
};

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    // Every rejected input would log a warning; that is the slow path here.
    QLoggingCategory::setFilterRules(QStringLiteral("mmpi.wire.warning=false"));
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    Chunker chunker{quint32(data[1]) * 2654435761u + 1, data[0]};
    const QByteArrayView stream(reinterpret_cast<const char *>(data) + 2, qsizetype(size) - 2);

    FrameDecoder decoder(Limits);
    QByteArray reencoded; // all accepted frames, encoded again
    qsizetype pos = 0;
    while (pos < stream.size() && !decoder.hasFailed()) {
        const qsizetype chunk = chunker.nextSize(stream.size() - pos);
        if (!decoder.feed(stream.sliced(pos, chunk)))
            break;
        pos += chunk;
        check(decoder.bufferedBytes() + decoder.capacity() == decoder.limits().maxBufferedBytes,
              "capacity does not add up");
        for (;;) {
            auto next = decoder.next();
            if (!next || !next->has_value())
                break;
            const QByteArray wire = encodeFrame(**next);
            checkFrame(**next, wire);
            reencoded += wire;
        }
    }

    // The accepted frames are exactly the start of the input.
    check(reencoded.size() <= pos, "more frame bytes than input");
    check(stream.first(reencoded.size()) == QByteArrayView(reencoded), "frames are not the input's prefix");
    if (decoder.hasFailed()) {
        const Error failure = decoder.failure();
        check(!failure.message.isEmpty(), "error without a message");
        auto again = decoder.next();
        check(!again && again.error() == failure, "decoder did not stay failed");
        check(!decoder.feed("x") && decoder.capacity() == 0, "failed decoder still accepts bytes");
    }
    return 0;
}
