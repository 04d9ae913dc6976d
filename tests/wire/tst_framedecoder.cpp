// Frame encoding and the incremental decoder: the header's exact bytes, frames
// however the stream is split, and every kind of bad input refused with its own
// error, early, without buffering what the peer merely claims to send.
#include "why.h"

#include <mmpi/core/logging.h>
#include <mmpi/wire/framedecoder.h>
#include <mmpi/wire/itemcodec.h>

#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTest>

#include <QtEndian>

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace mmpi;
using mmpi::test::why;

namespace {

QByteArray bytes(std::initializer_list<int> values)
{
    QByteArray out;
    for (int v : values)
        out.append(char(quint8(v)));
    return out;
}

// A few frames of different kinds and item types, including empty payloads.
QList<Frame> sampleFrames()
{
    QList<Frame> frames;
    const QList<qint32> ints = {1, -2, 0x7FFFFFFF};
    Frame data = makeFrame(FrameKind::Data, ItemType::Int, 3, encodeItems<qint32>(ints));
    data.header.source = 2;
    data.header.destination = 5;
    data.header.tag = 77;
    data.header.sequence = 1;
    frames.append(data);

    const QList<double> doubles = {3.5, -0.0};
    Frame collective = makeFrame(FrameKind::Data, ItemType::Double, 2, encodeItems<double>(doubles));
    collective.header.communicator = 9;
    collective.header.root = 0;
    collective.header.sequence = 2;
    frames.append(collective);

    Frame heartbeat = makeFrame(FrameKind::Heartbeat, ItemType::None, 0, QByteArray());
    heartbeat.header.sequence = 3;
    frames.append(heartbeat);

    frames.append(makeFrame(FrameKind::Control, ItemType::Object, 3,
                            encodeObjects({QByteArray("hello"), QByteArray(), QByteArray(300, 'x')})));
    const QList<bool> flags = {true, false, true};
    frames.append(makeFrame(FrameKind::Data, ItemType::Boolean, 3, encodeItems<bool>(flags)));
    frames.append(makeFrame(FrameKind::Data, ItemType::UnsignedShort, 0, QByteArray()));
    frames.append(makeFrame(FrameKind::Goodbye, ItemType::None, 0, QByteArray()));
    return frames;
}

QByteArray encodeAll(const QList<Frame> &frames)
{
    QByteArray stream;
    for (const Frame &f : frames)
        stream += encodeFrame(f);
    return stream;
}

// Pulls every frame now available; stops at nullopt or at the first error.
Result<QList<Frame>> drain(FrameDecoder &decoder)
{
    QList<Frame> out;
    for (;;) {
        auto next = decoder.next();
        if (!next)
            return next.error();
        if (!next->has_value())
            return out;
        out.append(std::move(**next));
    }
}

// Header bytes with one field overwritten, for the validation tests.
QByteArray headerWith(int offset, QByteArray field, const FrameHeader &base = {})
{
    QByteArray h = encodeHeader(base);
    h.replace(offset, field.size(), field);
    return h;
}

QByteArray be32(quint32 v)
{
    QByteArray out(4, Qt::Uninitialized);
    qToBigEndian(v, out.data());
    return out;
}

Error decodeError(const QByteArray &input, DecoderLimits limits = {})
{
    FrameDecoder decoder(limits);
    if (auto fed = decoder.feed(input); !fed)
        return fed.error();
    auto frames = drain(decoder);
    return frames ? Error() : frames.error();
}

bool isWireError(ErrorCode code)
{
    switch (code) {
    case ErrorCode::BadMagic:
    case ErrorCode::BadVersion:
    case ErrorCode::BadFrameKind:
    case ErrorCode::BadItemType:
    case ErrorCode::BadHeader:
    case ErrorCode::CountMismatch:
    case ErrorCode::FrameTooLarge:
    case ErrorCode::BufferLimitExceeded:
        return true;
    default:
        return false;
    }
}

// What any decoder output must satisfy, however hostile the input was.
bool frameIsSound(const Frame &f, const DecoderLimits &limits)
{
    return f.header.payloadLength == quint32(f.payload.size())
        && FrameHeaderSize + f.payload.size() <= limits.maxFrameSize
        && f.header.flags == 0
        && validatePayload(f.header.itemType, f.header.count, f.payload).hasValue()
        && FrameDecoder::decodeHeader(encodeFrame(f), limits).hasValue();
}

// Rejections are expected by the thousand in the random tests; keep the log
// readable while they run.
struct QuietWire
{
    QuietWire() { QLoggingCategory::setFilterRules(QStringLiteral("mmpi.wire.warning=false")); }
    ~QuietWire() { QLoggingCategory::setFilterRules(QString()); }
};

} // namespace

class tst_FrameDecoder : public QObject
{
    Q_OBJECT

private slots:
    void headerLiteralBytes();
    void encodeFrameSetsPayloadLength();
    void decodeHeaderNeedsWholeHeader();
    void littleEndianItemsFlag();
    void oneByteAtATime();
    void everySplitPoint();
    void randomChunks();
    void manyFramesBackToBack();
    void truncatedInputWaits();
    void oversizedRefusedBeforePayload();
    void headerErrors_data();
    void headerErrors();
    void badMagicDetectedEarly();
    void countMismatchAtHeader();
    void payloadErrorsAtCompletion_data();
    void payloadErrorsAtCompletion();
    void bufferLimit();
    void limitsAreMadeConsistent();
    void staysFailedAndLogsOnce();
    void largeFrameReleasesMemory();
    void readsLandInThePayload();
    void spaceTakesAnyChunking();
    void announcedSizeIsNotReservedAhead();
    void randomInput();
    void mutatedFrames();
};

void tst_FrameDecoder::headerLiteralBytes()
{
    FrameHeader h;
    h.kind = FrameKind::Control;
    h.itemType = ItemType::Long;
    h.communicator = 0x01020304;
    h.source = -1;
    h.destination = 0x11223344;
    h.root = 7;
    h.tag = -2;
    h.count = 0xA0B0C0D0;
    h.sequence = 0x0102030405060708ULL;
    h.payloadLength = 0x00000010;

    const QByteArray expected = bytes({
        0x4D, 0x4D, 0x50, 0x49,                         // magic "MMPI"
        0x01,                                           // version
        0x02,                                           // kind Control
        0x05,                                           // item type Long
        0x00,                                           // flags
        0x01, 0x02, 0x03, 0x04,                         // communicator
        0xFF, 0xFF, 0xFF, 0xFF,                         // source -1
        0x11, 0x22, 0x33, 0x44,                         // destination
        0x00, 0x00, 0x00, 0x07,                         // root
        0xFF, 0xFF, 0xFF, 0xFE,                         // tag -2
        0xA0, 0xB0, 0xC0, 0xD0,                         // count
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // sequence
        0x00, 0x00, 0x00, 0x10,                         // payload length
    });
    QCOMPARE(expected.size(), FrameHeaderSize);
    const QByteArray encoded = encodeHeader(h);
    QCOMPARE(encoded.toHex(' '), expected.toHex(' '));

    // The count does not match the length, so validate the fields with a
    // limit-free, type-consistent variant and compare every field back.
    h.count = 2;
    const auto decoded = FrameDecoder::decodeHeader(encodeHeader(h), DecoderLimits{});
    QVERIFY2(decoded.hasValue(), qPrintable(why(decoded)));
    QCOMPARE(*decoded, h);
    QCOMPARE(decoded->source, NoRank);
}

void tst_FrameDecoder::encodeFrameSetsPayloadLength()
{
    Frame f = makeFrame(FrameKind::Data, ItemType::UnsignedByte, 3, bytes({7, 8, 9}));
    QCOMPARE(f.header.payloadLength, 3u);
    f.header.payloadLength = 999; // encodeFrame takes the real size
    const QByteArray wire = encodeFrame(f);
    QCOMPARE(wire.size(), FrameHeaderSize + 3);
    QCOMPARE(wire.mid(40, 4), bytes({0, 0, 0, 3}));
    QCOMPARE(wire.mid(FrameHeaderSize), bytes({7, 8, 9}));
    QCOMPARE(wire.left(FrameHeaderSize).mid(0, 40), encodeHeader(f.header).mid(0, 40));
}

void tst_FrameDecoder::decodeHeaderNeedsWholeHeader()
{
    const QByteArray h = encodeHeader({});
    const auto r = FrameDecoder::decodeHeader(QByteArrayView(h).first(43), {});
    QVERIFY(!r.hasValue());
    QCOMPARE(r.error().code, ErrorCode::BadHeader);
    QVERIFY(FrameDecoder::decodeHeader(h, {}).hasValue());
}

// A Data frame (and each Fragment of one) may carry its items little-endian;
// the flag survives decoding and says the order, which the items then have.
void tst_FrameDecoder::littleEndianItemsFlag()
{
    const double values[] = {1.5, -0.0, 1e300};
    Frame data = makeFrame(FrameKind::Data, ItemType::Double, 3,
                           encodeItems<double>(values, ItemType::Double, QSysInfo::LittleEndian));
    data.header.flags = itemOrderFlag(QSysInfo::LittleEndian);
    QCOMPARE(data.header.flags, LittleEndianItems);
    QCOMPARE(data.payload.left(8), bytes({0, 0, 0, 0, 0, 0, 0xF8, 0x3F})); // 1.5, least significant byte first
    FrameDecoder decoder;
    QVERIFY(decoder.feed(encodeFrame(data)).hasValue());
    const auto decoded = decoder.next();
    QVERIFY2(decoded.hasValue() && decoded->has_value(), "a little-endian Data frame decodes");
    QCOMPARE((*decoded)->header.flags, LittleEndianItems);
    QCOMPARE(itemOrderOf((*decoded)->header), QSysInfo::LittleEndian);
    const auto items = decodeItems<double>(ItemType::Double, 3, (*decoded)->payload, itemOrderOf((*decoded)->header));
    QVERIFY(items.hasValue());
    QCOMPARE(*items, QList<double>(std::begin(values), std::end(values)));
    QVERIFY(std::signbit(items->at(1)));

    FrameHeader fragment;
    fragment.kind = FrameKind::Fragment;
    fragment.itemType = ItemType::Int;
    fragment.flags = FirstFragment | LittleEndianItems;
    fragment.payloadLength = FragmentLengthSize;
    const auto header = FrameDecoder::decodeHeader(encodeHeader(fragment), DecoderLimits{});
    QVERIFY2(header.hasValue(), qPrintable(why(header)));
    QCOMPARE(itemOrderOf(*header), QSysInfo::LittleEndian);
    QCOMPARE(itemOrderOf(FrameHeader{}), QSysInfo::BigEndian);
}

void tst_FrameDecoder::oneByteAtATime()
{
    const QList<Frame> frames = sampleFrames();
    FrameDecoder decoder;
    QList<Frame> out;
    for (const Frame &f : frames) {
        const QByteArray wire = encodeFrame(f);
        for (qsizetype i = 0; i < wire.size(); ++i) {
            QVERIFY(decoder.feed(QByteArrayView(wire).sliced(i, 1)).hasValue());
            auto next = decoder.next();
            QVERIFY2(next.hasValue(), qPrintable(why(next)));
            // A frame appears exactly when its last byte is in.
            QCOMPARE(next->has_value(), i == wire.size() - 1);
            if (next->has_value())
                out.append(**next);
        }
    }
    QCOMPARE(out, frames);
    QCOMPARE(decoder.bufferedBytes(), 0);
}

void tst_FrameDecoder::everySplitPoint()
{
    const QList<Frame> frames = sampleFrames();
    const QByteArray stream = encodeAll(frames);
    for (qsizetype split = 0; split <= stream.size(); ++split) {
        FrameDecoder decoder;
        QVERIFY(decoder.feed(QByteArrayView(stream).first(split)).hasValue());
        auto first = drain(decoder);
        QVERIFY(first.hasValue());
        QVERIFY(decoder.feed(QByteArrayView(stream).sliced(split)).hasValue());
        auto second = drain(decoder);
        QVERIFY(second.hasValue());
        QCOMPARE(*first + *second, frames);
        QCOMPARE(decoder.bufferedBytes(), 0);
    }
}

void tst_FrameDecoder::randomChunks()
{
    QList<Frame> frames;
    for (int round = 0; round < 30; ++round)
        frames += sampleFrames();
    const QByteArray stream = encodeAll(frames);

    QRandomGenerator rng(20240601);
    for (int trial = 0; trial < 20; ++trial) {
        FrameDecoder decoder;
        QList<Frame> out;
        qsizetype pos = 0;
        while (pos < stream.size()) {
            const qsizetype chunk = qMin<qsizetype>(stream.size() - pos, 1 + rng.bounded(trial * 40 + 2));
            QVERIFY(decoder.feed(QByteArrayView(stream).sliced(pos, chunk)).hasValue());
            pos += chunk;
            auto got = drain(decoder);
            QVERIFY2(got.hasValue(), qPrintable(why(got)));
            out += *got;
            // Never holds more than one incomplete frame's worth.
            QVERIFY(decoder.bufferedBytes() < 400 + FrameHeaderSize);
        }
        QCOMPARE(out, frames);
    }
}

void tst_FrameDecoder::manyFramesBackToBack()
{
    QList<Frame> frames;
    for (int i = 0; i < 10000; ++i) {
        const QList<qint64> v = {i, -i};
        Frame f = makeFrame(FrameKind::Data, ItemType::Long, 2, encodeItems<qint64>(v));
        f.header.sequence = quint64(i);
        f.header.tag = i % 17;
        frames.append(f);
    }
    FrameDecoder decoder;
    QVERIFY(decoder.feed(encodeAll(frames)).hasValue());
    const auto out = drain(decoder);
    QVERIFY(out.hasValue());
    QCOMPARE(out->size(), frames.size());
    QCOMPARE(*out, frames);
    QCOMPARE(decoder.bufferedBytes(), 0);
}

void tst_FrameDecoder::truncatedInputWaits()
{
    const QByteArray wire = encodeFrame(sampleFrames().first());
    for (qsizetype len : {qsizetype(0), qsizetype(3), qsizetype(FrameHeaderSize - 1),
                          qsizetype(FrameHeaderSize), wire.size() - 1}) {
        FrameDecoder decoder;
        QVERIFY(decoder.feed(QByteArrayView(wire).first(len)).hasValue());
        for (int repeat = 0; repeat < 3; ++repeat) {
            auto next = decoder.next();
            QVERIFY(next.hasValue());
            QVERIFY(!next->has_value());
        }
        QVERIFY(!decoder.hasFailed());
        QCOMPARE(decoder.bufferedBytes(), len);
    }
}

void tst_FrameDecoder::oversizedRefusedBeforePayload()
{
    FrameHeader h;
    h.itemType = ItemType::UnsignedByte;
    h.count = 1u << 30;
    h.payloadLength = 1u << 30; // claims 1 GiB
    FrameDecoder decoder; // default limit 256 MiB
    QVERIFY(decoder.feed(encodeHeader(h)).hasValue());
    auto next = decoder.next();
    QVERIFY(!next.hasValue());
    QCOMPARE(next.error().code, ErrorCode::FrameTooLarge);
    QCOMPARE(next.error().message,
             QStringLiteral("frame of 1073741868 bytes exceeds the limit of 268435456"));
    QCOMPARE(decoder.bufferedBytes(), FrameHeaderSize);

    // The largest frame that fits is accepted (header only, payload pending).
    DecoderLimits small;
    small.maxFrameSize = 100;
    h.count = h.payloadLength = 100 - FrameHeaderSize;
    FrameDecoder fits(small);
    QVERIFY(fits.feed(encodeHeader(h)).hasValue());
    QVERIFY(fits.next().hasValue());
    h.count = h.payloadLength = 101 - FrameHeaderSize;
    QCOMPARE(decodeError(encodeHeader(h), small).code, ErrorCode::FrameTooLarge);
}

void tst_FrameDecoder::headerErrors_data()
{
    QTest::addColumn<QByteArray>("header");
    QTest::addColumn<ErrorCode>("code");
    QTest::addColumn<QString>("message");

    QTest::newRow("bad magic") << headerWith(0, be32(0x12345678)) << ErrorCode::BadMagic
                               << QStringLiteral("bad magic 0x12345678 (expected 0x4D4D5049)");
    QTest::newRow("version 0") << headerWith(4, bytes({0})) << ErrorCode::BadVersion
                               << QStringLiteral("unsupported frame version 0 (expected 1)");
    QTest::newRow("version 2") << headerWith(4, bytes({2})) << ErrorCode::BadVersion
                               << QStringLiteral("unsupported frame version 2 (expected 1)");
    QTest::newRow("kind 0") << headerWith(5, bytes({0})) << ErrorCode::BadFrameKind
                            << QStringLiteral("unknown frame kind 0 (expected 1 to 7)");
    QTest::newRow("kind 8") << headerWith(5, bytes({8})) << ErrorCode::BadFrameKind
                            << QStringLiteral("unknown frame kind 8 (expected 1 to 7)");
    QTest::newRow("item type 14") << headerWith(6, bytes({14})) << ErrorCode::BadItemType
                                  << QStringLiteral("unknown item type code 14 (expected 0 to 13)");
    QTest::newRow("item type 255") << headerWith(6, bytes({255})) << ErrorCode::BadItemType
                                   << QStringLiteral("unknown item type code 255 (expected 0 to 13)");
    QTest::newRow("flags") << headerWith(7, bytes({0x80})) << ErrorCode::BadHeader
                           << QStringLiteral("reserved flags 0x80 are set (allowed: 0x04)");
    FrameHeader fragment;
    fragment.kind = FrameKind::Fragment;
    fragment.itemType = ItemType::Int;
    QTest::newRow("fragment flags") << headerWith(7, bytes({0x08}), fragment) << ErrorCode::BadHeader
                                    << QStringLiteral("reserved flags 0x08 are set (allowed: 0x07)");
    // Little-endian items: not on Object records (their lengths are
    // big-endian) nor on frames that carry no message.
    FrameHeader objects;
    objects.itemType = ItemType::Object;
    QTest::newRow("little-endian objects") << headerWith(7, bytes({LittleEndianItems}), objects)
                                           << ErrorCode::BadHeader
                                           << QStringLiteral("reserved flags 0x04 are set (allowed: 0x00)");
    FrameHeader control;
    control.kind = FrameKind::Control;
    QTest::newRow("little-endian control") << headerWith(7, bytes({LittleEndianItems}), control)
                                           << ErrorCode::BadHeader
                                           << QStringLiteral("reserved flags 0x04 are set (allowed: 0x00)");
    QTest::newRow("fragment without items")
        << headerWith(6, bytes({0}), fragment) << ErrorCode::BadItemType
        << QStringLiteral("a Fragment frame must carry items");
    QTest::newRow("first fragment without length")
        << headerWith(7, bytes({FirstFragment}), fragment) << ErrorCode::CountMismatch
        << QStringLiteral("a first Fragment needs 8 bytes of message length, it has 0");
}

void tst_FrameDecoder::headerErrors()
{
    QFETCH(QByteArray, header);
    QFETCH(ErrorCode, code);
    QFETCH(QString, message);

    const auto direct = FrameDecoder::decodeHeader(header, {});
    QVERIFY(!direct.hasValue());
    QCOMPARE(direct.error().code, code);
    QCOMPARE(direct.error().message, message);

    FrameDecoder decoder;
    QVERIFY(decoder.feed(header).hasValue());
    auto next = decoder.next();
    QVERIFY(!next.hasValue());
    QCOMPARE(next.error(), direct.error());
    QVERIFY(decoder.hasFailed());
    QCOMPARE(decoder.failure(), direct.error());
}

void tst_FrameDecoder::badMagicDetectedEarly()
{
    // A peer speaking something else is refused after 4 bytes, not left
    // waiting for a 44-byte header that may never come.
    FrameDecoder decoder;
    QVERIFY(decoder.feed("GET ").hasValue());
    auto next = decoder.next();
    QVERIFY(!next.hasValue());
    QCOMPARE(next.error().code, ErrorCode::BadMagic);
    QVERIFY(next.error().message.contains(QLatin1String("0x47455420")));

    // Version, kind and type are likewise checked as soon as their byte is in.
    FrameDecoder early;
    QVERIFY(early.feed(bytes({0x4D, 0x4D, 0x50, 0x49, 0x01, 0x09})).hasValue());
    QCOMPARE(early.next().error().code, ErrorCode::BadFrameKind);

    // But a correct prefix just waits.
    FrameDecoder prefix;
    QVERIFY(prefix.feed(encodeHeader({}).first(8)).hasValue());
    QVERIFY(prefix.next().hasValue());
    QVERIFY(!prefix.hasFailed());
}

void tst_FrameDecoder::countMismatchAtHeader()
{
    // Detected from the header alone, before any of the payload arrives.
    FrameHeader h;
    h.itemType = ItemType::Int;
    h.count = 3;
    h.payloadLength = 8;
    FrameDecoder decoder;
    QVERIFY(decoder.feed(encodeHeader(h)).hasValue());
    const auto next = decoder.next();
    QVERIFY(!next.hasValue());
    QCOMPARE(next.error().code, ErrorCode::CountMismatch);
    QCOMPARE(next.error().message, QStringLiteral("3 Int items need 12 bytes but the payload length is 8"));

    // 64-bit arithmetic: 0x20000001 Longs would wrap to 8 bytes in 32 bits.
    h.itemType = ItemType::Long;
    h.count = 0x20000001;
    QCOMPARE(decodeError(encodeHeader(h)).code, ErrorCode::CountMismatch);

    h.itemType = ItemType::None;
    h.count = 1;
    h.payloadLength = 0;
    QCOMPARE(decodeError(encodeHeader(h)).code, ErrorCode::CountMismatch);

    // Object records need at least their 4-byte lengths.
    h.itemType = ItemType::Object;
    h.count = 1000;
    h.payloadLength = 3999;
    QCOMPARE(decodeError(encodeHeader(h)).code, ErrorCode::CountMismatch);
}

void tst_FrameDecoder::payloadErrorsAtCompletion_data()
{
    QTest::addColumn<QByteArray>("wire");
    QTest::addColumn<QString>("messagePart");

    const QByteArray records = encodeObjects({QByteArray("abc"), QByteArray("de")});
    QTest::newRow("object count high")
        << encodeFrame(makeFrame(FrameKind::Data, ItemType::Object, 3, records + bytes({0, 0})))
        << QStringLiteral("object record 3 of 3");
    QTest::newRow("object record overlong")
        << encodeFrame(makeFrame(FrameKind::Data, ItemType::Object, 1, bytes({0, 0, 0, 9, 1, 2})))
        << QStringLiteral("claims 9 bytes but only 2 remain");
    QTest::newRow("object trailing")
        << encodeFrame(makeFrame(FrameKind::Data, ItemType::Object, 1, records))
        << QStringLiteral("end at byte 7 but the payload has 13");
    QTest::newRow("boolean 2")
        << encodeFrame(makeFrame(FrameKind::Data, ItemType::Boolean, 2, bytes({1, 2})))
        << QStringLiteral("Boolean item 2 of 2 has byte value 0x02");
}

void tst_FrameDecoder::payloadErrorsAtCompletion()
{
    QFETCH(QByteArray, wire);
    QFETCH(QString, messagePart);

    FrameDecoder decoder;
    QVERIFY(decoder.feed(QByteArrayView(wire).first(wire.size() - 1)).hasValue());
    QVERIFY(decoder.next().hasValue()); // still waiting: the header is fine
    QVERIFY(!decoder.hasFailed());
    QVERIFY(decoder.feed(QByteArrayView(wire).last(1)).hasValue());
    const auto next = decoder.next();
    QVERIFY(!next.hasValue());
    QCOMPARE(next.error().code, ErrorCode::CountMismatch);
    QVERIFY2(next.error().message.contains(messagePart), qPrintable(next.error().message));
}

void tst_FrameDecoder::bufferLimit()
{
    DecoderLimits limits;
    limits.maxFrameSize = 100;
    limits.maxBufferedBytes = 200;
    FrameDecoder decoder(limits);
    QCOMPARE(decoder.capacity(), 200);

    const QByteArray wire = encodeFrame(makeFrame(FrameKind::Data, ItemType::Byte, 6, QByteArray(6, 1)));
    QByteArray stream;
    while (stream.size() + wire.size() <= 150)
        stream += wire;
    QVERIFY(decoder.feed(stream).hasValue());
    QCOMPARE(decoder.capacity(), 200 - stream.size());
    QCOMPARE(decoder.bufferedBytes(), stream.size());

    // Draining frees capacity again.
    QVERIFY(drain(decoder).hasValue());
    QCOMPARE(decoder.capacity(), 200);

    QVERIFY(decoder.feed(QByteArray(150, '\0')).hasValue());
    const auto over = decoder.feed(QByteArray(51, '\0'));
    QVERIFY(!over.hasValue());
    QCOMPARE(over.error().code, ErrorCode::BufferLimitExceeded);
    QCOMPARE(over.error().message,
             QStringLiteral("receiving 51 more bytes would buffer 201, above the limit of 200"));
    QVERIFY(decoder.hasFailed());
    QCOMPARE(decoder.capacity(), 0);
    QCOMPARE(decoder.bufferedBytes(), 150); // the refused bytes were not taken
}

void tst_FrameDecoder::limitsAreMadeConsistent()
{
    DecoderLimits limits;
    limits.maxFrameSize = 1000;
    limits.maxBufferedBytes = 10;
    FrameDecoder decoder(limits);
    QCOMPARE(decoder.limits().maxFrameSize, 1000);
    QCOMPARE(decoder.limits().maxBufferedBytes, 1000);
    QCOMPARE(decoder.capacity(), 1000);
}

void tst_FrameDecoder::staysFailedAndLogsOnce()
{
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("BadVersion")));
    QTest::failOnWarning(QRegularExpression(QStringLiteral(".")));

    FrameDecoder decoder;
    const QByteArray good = encodeAll(sampleFrames());
    QVERIFY(decoder.feed(headerWith(4, bytes({7})) + good).hasValue());
    const auto first = decoder.next();
    QVERIFY(!first.hasValue());
    QCOMPARE(first.error().code, ErrorCode::BadVersion);

    for (int i = 0; i < 3; ++i) {
        const auto again = decoder.next();
        QVERIFY(!again.hasValue());
        QCOMPARE(again.error(), first.error());
        const auto fed = decoder.feed(encodeFrame(sampleFrames().first()));
        QVERIFY(!fed.hasValue());
        QCOMPARE(fed.error(), first.error());
    }
    QVERIFY(decoder.hasFailed());
    QCOMPARE(decoder.failure(), first.error());
}

void tst_FrameDecoder::largeFrameReleasesMemory()
{
    const QByteArray big(4 * 1024 * 1024, 'z');
    const Frame f = makeFrame(FrameKind::Data, ItemType::UnsignedByte, quint32(big.size()), big);
    const QByteArray wire = encodeFrame(f);
    FrameDecoder decoder;
    for (qsizetype pos = 0; pos < wire.size(); pos += 65536)
        QVERIFY(decoder.feed(QByteArrayView(wire).sliced(pos, qMin<qsizetype>(65536, wire.size() - pos))).hasValue());
    auto next = decoder.next();
    QVERIFY(next.hasValue() && next->has_value());
    QCOMPARE(**next, f);
    QCOMPARE(decoder.bufferedBytes(), 0);
    QCOMPARE(decoder.capacity(), decoder.limits().maxBufferedBytes);
}

// What a transport does: read into space(), commit what it read. The bytes
// of a payload are written where the delivered frame carries them.
void tst_FrameDecoder::readsLandInThePayload()
{
    const QByteArray items(100000, 'q');
    const Frame f = makeFrame(FrameKind::Data, ItemType::UnsignedByte, quint32(items.size()), items);
    const QByteArray wire = encodeFrame(f);
    FrameDecoder decoder;
    QCOMPARE(qsizetype(decoder.space().size()), FrameHeaderSize);
    std::memcpy(decoder.space().data(), wire.constData(), FrameHeaderSize);
    auto header = decoder.commit(FrameHeaderSize);
    QVERIFY(header.hasValue() && !header->has_value());
    const std::span<char> room = decoder.space();
    QCOMPARE(qsizetype(room.size()), items.size());
    std::memcpy(room.data(), wire.constData() + FrameHeaderSize, room.size());
    auto done = decoder.commit(qint64(room.size()));
    QVERIFY2(done.hasValue() && done->has_value(), qPrintable(why(done)));
    QCOMPARE(**done, f);
    QCOMPARE((*done)->payload.constData(), room.data());
    QCOMPARE(decoder.bufferedBytes(), 0);
}

void tst_FrameDecoder::spaceTakesAnyChunking()
{
    QList<Frame> frames = sampleFrames();
    frames.append(makeFrame(FrameKind::Data, ItemType::Long, 400000, QByteArray(3200000, 'L')));
    frames += sampleFrames();
    const QByteArray stream = encodeAll(frames);
    QRandomGenerator rng(4242);
    for (int trial = 0; trial < 10; ++trial) {
        FrameDecoder decoder;
        QList<Frame> out;
        qsizetype pos = 0;
        while (pos < stream.size()) {
            const std::span<char> room = decoder.space();
            QVERIFY(!room.empty());
            const qsizetype chunk = std::min({qsizetype(room.size()), stream.size() - pos,
                                              1 + qsizetype(rng.bounded(trial * 50000 + 10))});
            std::memcpy(room.data(), stream.constData() + pos, size_t(chunk));
            pos += chunk;
            auto got = decoder.commit(chunk);
            QVERIFY2(got.hasValue(), qPrintable(why(got)));
            if (got->has_value())
                out.append(**got);
        }
        QCOMPARE(out, frames);
        QCOMPARE(decoder.bufferedBytes(), 0);
    }
}

// A header that announces a payload of 200 MiB gets room for the first MiB
// only; more follows the bytes that actually come.
void tst_FrameDecoder::announcedSizeIsNotReservedAhead()
{
    FrameHeader h;
    h.kind = FrameKind::Data;
    h.itemType = ItemType::Byte;
    h.count = 200u << 20;
    h.payloadLength = h.count;
    const QByteArray head = encodeHeader(h);
    FrameDecoder decoder;
    std::memcpy(decoder.space().data(), head.constData(), FrameHeaderSize);
    QVERIFY(decoder.commit(FrameHeaderSize).hasValue());
    QCOMPARE(qsizetype(decoder.space().size()), 1 << 20);
    std::memset(decoder.space().data(), 1, 1 << 20);
    QVERIFY(decoder.commit(1 << 20).hasValue());
    QCOMPARE(qsizetype(decoder.space().size()), 1 << 20); // twice the room, half of it filled
    QCOMPARE(decoder.bufferedBytes(), FrameHeaderSize + (1 << 20));
    QVERIFY(!decoder.hasFailed());
}

void tst_FrameDecoder::randomInput()
{
    const QuietWire quiet;

    DecoderLimits limits;
    limits.maxFrameSize = 4096;
    limits.maxBufferedBytes = 8192;
    QRandomGenerator rng(7);
    const QByteArray validPrefix = encodeHeader({}).first(5); // magic + version
    int failures = 0;
    for (int i = 0; i < 10000; ++i) {
        QByteArray input(rng.bounded(300), Qt::Uninitialized);
        for (char &c : input)
            c = char(rng.bounded(256));
        // Half start like a real frame, so the later checks are reached too.
        if (i % 2 == 0 && input.size() >= 8) {
            input.replace(0, 5, validPrefix);
            input[5] = char(1 + rng.bounded(4));
            input[6] = char(rng.bounded(14));
            input[7] = 0;
        }
        FrameDecoder decoder(limits);
        qsizetype pos = 0;
        bool failed = false;
        while (pos < input.size() && !failed) {
            const qsizetype chunk = qMin<qsizetype>(input.size() - pos, 1 + rng.bounded(64));
            QVERIFY(decoder.feed(QByteArrayView(input).sliced(pos, chunk)).hasValue());
            pos += chunk;
            auto frames = drain(decoder);
            if (!frames) {
                QVERIFY(isWireError(frames.error().code));
                QVERIFY(!frames.error().message.isEmpty());
                failed = true;
                ++failures;
                break;
            }
            for (const Frame &f : *frames)
                QVERIFY(frameIsSound(f, limits));
        }
        QVERIFY(decoder.bufferedBytes() <= limits.maxBufferedBytes);
    }
    QVERIFY(failures > 5000); // random bytes are almost never a frame
}

void tst_FrameDecoder::mutatedFrames()
{
    const QuietWire quiet;

    DecoderLimits limits;
    limits.maxFrameSize = 4096;
    limits.maxBufferedBytes = 8192;
    const QByteArray stream = encodeAll(sampleFrames());
    QRandomGenerator rng(99);
    int decodedFrames = 0;
    int failures = 0;
    for (int i = 0; i < 5000; ++i) {
        QByteArray input = stream;
        const int mutations = 1 + rng.bounded(4);
        for (int m = 0; m < mutations; ++m) {
            const qsizetype at = rng.bounded(input.size());
            switch (rng.bounded(4)) {
            case 0: input[at] = char(rng.bounded(256)); break;
            case 1: input[at] = char(input[at] ^ (1 << rng.bounded(8))); break;
            case 2: input.remove(at, 1 + rng.bounded(8)); break;
            case 3: input.insert(at, char(rng.bounded(256))); break;
            }
            if (input.isEmpty())
                input = stream;
        }
        FrameDecoder decoder(limits);
        QVERIFY(decoder.feed(input).hasValue());
        auto frames = drain(decoder);
        if (!frames) {
            QVERIFY(isWireError(frames.error().code));
            ++failures;
            continue;
        }
        for (const Frame &f : *frames) {
            QVERIFY(frameIsSound(f, limits));
            ++decodedFrames;
        }
    }
    // Both outcomes must actually occur, or the test exercises nothing.
    QVERIFY(failures > 100);
    QVERIFY(decodedFrames > 100);
}

QTEST_GUILESS_MAIN(tst_FrameDecoder)
#include "tst_framedecoder.moc"
