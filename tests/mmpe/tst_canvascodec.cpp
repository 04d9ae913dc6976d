// The MMPE batch encoding: every command survives a round trip, state travels
// once, images compress only when it helps, and the decoder refuses every
// truncated, lying or mutated batch with an error instead of crashing.
#include "offscreenmain.h"
#include "canvassamples.h"
#include "why.h"

#include <mmpi/mmpe/canvasdecoder.h>
#include <mmpi/mmpe/canvasencoder.h>
#include <mmpi/mmpe/canvasrenderer.h>

#include <QLoggingCategory>
#include <QScopeGuard>
#include <QRandomGenerator>
#include <QTest>
#include <QtEndian>

using namespace mmpi;

namespace {

constexpr int HeaderSize = 14;
constexpr int EmptyBatchSize = HeaderSize + 1; // header + EndFrame

QByteArray encodeOne(const QList<CanvasCommand> &commands, quint32 frame = 0)
{
    CanvasEncoder encoder;
    encoder.setFrameNumber(frame);
    for (const CanvasCommand &c : commands) {
        auto ok = encoder.append(c);
        if (!ok)
            qFatal("cannot encode %s", qPrintable(test::why(ok)));
    }
    return encoder.endFrame();
}

QByteArray why(const Result<CanvasBatch> &r)
{
    return r.hasValue() ? QByteArray("decoded") : r.error().toString().toUtf8();
}

// A valid batch holding one of everything: the input of the truncation and
// mutation tests.
QByteArray fullBatch()
{
    return encodeOne(samples::everyCommand(), 42);
}

void put16(QByteArray &b, int at, quint16 v)
{
    qToBigEndian<quint16>(v, b.data() + at);
}

void put32(QByteArray &b, int at, quint32 v)
{
    qToBigEndian<quint32>(v, b.data() + at);
}

} // namespace

class TestCanvasCodec : public QObject
{
    Q_OBJECT

private slots:
    void roundTrip_data();
    void roundTrip();
    void roundTripWholeBatch();
    void stateSentOnce();
    void resendState();
    void imageCompression();
    void bytesPerPrimitive();
    void encoderRefuses();
    void headerRefused();
    void everyPrefixRefused();
    void trailingBytesRefused();
    void unknownOpcode();
    void misplacedEndFrame();
    void oversizeImage();
    void lyingLengths();
    void badValues();
    void mutations();
};

void TestCanvasCodec::roundTrip_data()
{
    QTest::addColumn<CanvasCommand>("command");
    for (const CanvasCommand &c : samples::everyCommand())
        QTest::newRow(qPrintable(canvasOpcodeName(c.opcode) + QString::number(c.image.width()))) << c;
    QTest::newRow("dashed hairline") << CanvasCommand::setPen({0x7F102030, 0, CanvasPenStyle::DashDot});
    QTest::newRow("no pen") << CanvasCommand::setPen({0xFF000000, 1, CanvasPenStyle::NoPen});
    QTest::newRow("extreme coordinates")
        << CanvasCommand::line({-32768, 32767}, {32767, -32768});
    QTest::newRow("biggest rect") << CanvasCommand::ellipse({-32768, -32768, 65535, 65535});
    QTest::newRow("empty text") << CanvasCommand::textAt({0, 0}, QString());
    QTest::newRow("1x1 image") << CanvasCommand::imageAt({-3, -4}, samples::noiseImage(1, 1, 3));
}

void TestCanvasCodec::roundTrip()
{
    QFETCH(CanvasCommand, command);
    const QByteArray bytes = encodeOne({command}, 7);
    auto batch = CanvasDecoder().decode(bytes);
    QVERIFY2(batch, why(batch));
    QCOMPARE(batch->frame, 7u);
    QCOMPARE(batch->commands.size(), 2);
    QVERIFY(batch->commands[0] == command);
    QCOMPARE(batch->commands[1].opcode, CanvasOpcode::EndFrame);
}

void TestCanvasCodec::roundTripWholeBatch()
{
    const QList<CanvasCommand> commands = samples::everyCommand();
    CanvasEncoder encoder;
    encoder.setFrameNumber(0xFFFFFFF0);
    for (const CanvasCommand &c : commands)
        QVERIFY(encoder.append(c));
    const QByteArray bytes = encoder.endFrame();
    QCOMPARE(encoder.frameNumber(), 0xFFFFFFF1u);
    QCOMPARE(encoder.pendingCommands(), 0u);

    auto batch = CanvasDecoder().decode(bytes);
    QVERIFY2(batch, why(batch));
    CanvasBatch expected{0xFFFFFFF0, commands};
    expected.commands.append(CanvasCommand::endFrame());
    QVERIFY(*batch == expected);

    // And the whole batch through encode(): the same bytes.
    CanvasEncoder again;
    auto reencoded = again.encode(expected);
    QVERIFY2(reencoded, qPrintable(test::why(reencoded)));
    QCOMPARE(*reencoded, bytes);
}

void TestCanvasCodec::stateSentOnce()
{
    const auto pen = samples::redPen();
    const QByteArray once = encodeOne({CanvasCommand::setPen(pen), CanvasCommand::line({0, 0}, {9, 9}),
                                       CanvasCommand::line({1, 1}, {8, 8})});
    const QByteArray twice = encodeOne({CanvasCommand::setPen(pen), CanvasCommand::line({0, 0}, {9, 9}),
                                        CanvasCommand::setPen(pen), CanvasCommand::line({1, 1}, {8, 8})});
    QCOMPARE(twice.size(), once.size());
    QCOMPARE(twice, once);
    QCOMPARE(once.size(), EmptyBatchSize + 8 + 9 + 9);

    // The default state is never sent: both ends start from it.
    QCOMPARE(encodeOne({CanvasCommand::setPen(CanvasState::Pen()),
                        CanvasCommand::setBrush(CanvasState::Brush()),
                        CanvasCommand::setFont(CanvasState::Font())}).size(),
             EmptyBatchSize);

    // State lasts across frames.
    CanvasEncoder encoder;
    QVERIFY(encoder.append(CanvasCommand::setPen(pen)));
    QVERIFY(encoder.append(CanvasCommand::line({0, 0}, {1, 1})));
    const QByteArray first = encoder.endFrame();
    QVERIFY(encoder.append(CanvasCommand::setPen(pen)));
    QVERIFY(encoder.append(CanvasCommand::line({0, 0}, {1, 1})));
    const QByteArray second = encoder.endFrame();
    QCOMPARE(second.size(), first.size() - 8);
    auto decoded = CanvasDecoder().decode(second);
    QVERIFY2(decoded, why(decoded));
    QCOMPARE(decoded->commands.size(), 2);
    QCOMPARE(decoded->commands[0].opcode, CanvasOpcode::Line);

    // A changed pen is sent again, and so is going back to the default.
    QVERIFY(encoder.append(CanvasCommand::setPen(CanvasState::Pen())));
    QCOMPARE(encoder.pendingCommands(), 1u);
    QCOMPARE(encoder.sentState().pen, CanvasState::Pen());
}

void TestCanvasCodec::resendState()
{
    CanvasEncoder encoder;
    QVERIFY(encoder.append(CanvasCommand::setBrush(samples::blueBrush())));
    encoder.endFrame();
    QVERIFY(encoder.resendState());
    auto batch = CanvasDecoder().decode(encoder.endFrame());
    QVERIFY2(batch, why(batch));
    QCOMPARE(batch->commands.size(), 4);
    QCOMPARE(batch->commands[1].brush, samples::blueBrush());
    QCOMPARE(batch->commands[0].pen, CanvasState::Pen());

    encoder.resetState();
    QVERIFY(encoder.append(CanvasCommand::setBrush(samples::blueBrush())));
    QCOMPARE(encoder.pendingCommands(), 1u);
}

void TestCanvasCodec::imageCompression()
{
    const QImage smooth = samples::gradientImage(256, 64, false);
    const QImage noise = samples::noiseImage(64, 64, 11);
    const int imageOffset = HeaderSize;
    const int flagsAt = imageOffset + 1 + 4 + 4;
    for (bool enabled : {true, false}) {
        CanvasEncoder encoder;
        encoder.setImageCompression(enabled);
        QVERIFY(encoder.append(CanvasCommand::imageAt({0, 0}, smooth)));
        const QByteArray a = encoder.endFrame();
        QVERIFY(encoder.append(CanvasCommand::imageAt({0, 0}, noise)));
        const QByteArray b = encoder.endFrame();
        const int raw = 256 * 64 * 3;
        if (enabled) {
            QCOMPARE(quint8(a[flagsAt]), quint8(0x03)); // compressed, opaque
            QVERIFY2(a.size() < raw * 3 / 4, qPrintable(QString::number(a.size())));
        } else {
            QCOMPARE(quint8(a[flagsAt]), quint8(0x02));
            QCOMPARE(a.size(), EmptyBatchSize + 14 + raw);
        }
        // Noise does not compress, so it goes raw either way.
        QCOMPARE(quint8(b[flagsAt]), quint8(0x00));
        QCOMPARE(b.size(), EmptyBatchSize + 14 + 64 * 64 * 4);
        for (int i = 0; i < 2; ++i) {
            auto batch = CanvasDecoder().decode(i == 0 ? a : b);
            QVERIFY2(batch, why(batch));
            QCOMPARE(batch->commands[0].image,
                     CanvasCommand::imageAt({0, 0}, i == 0 ? smooth : noise).image);
        }
    }
}

void TestCanvasCodec::bytesPerPrimitive()
{
    struct Row { const char *name; QList<CanvasCommand> commands; };
    const QList<QPoint> tenPoints = {{0, 0}, {1, 2}, {3, 4}, {5, 6}, {7, 8},
                                     {9, 10}, {11, 12}, {13, 14}, {15, 16}, {17, 18}};
    const QList<Row> rows = {
        {"SetPen", {CanvasCommand::setPen(samples::redPen())}},
        {"SetBrush", {CanvasCommand::setBrush(samples::blueBrush())}},
        {"SetFont (\"DejaVu Sans\")", {CanvasCommand::setFont({QStringLiteral("DejaVu Sans"), 14})}},
        {"Line", {CanvasCommand::line({0, 0}, {100, 100})}},
        {"Polyline (10 points)", {CanvasCommand::polyline(tenPoints)}},
        {"Rect", {CanvasCommand::outlineRect({1, 2, 3, 4})}},
        {"FilledRect", {CanvasCommand::filledRect({1, 2, 3, 4})}},
        {"Ellipse", {CanvasCommand::ellipse({1, 2, 3, 4})}},
        {"Polygon (10 points)", {CanvasCommand::polygon(tenPoints)}},
        {"Text (\"hello\")", {CanvasCommand::textAt({5, 5}, QStringLiteral("hello"))}},
        {"Image 64x64 RGB gradient", {CanvasCommand::imageAt({0, 0}, samples::gradientImage(64, 64, false))}},
        {"Image 64x64 ARGB noise", {CanvasCommand::imageAt({0, 0}, samples::noiseImage(64, 64, 5))}},
        {"Image 256x1 row, RGB gradient", {CanvasCommand::imageAt({0, 9}, samples::gradientImage(256, 1, false))}},
        {"Clear", {CanvasCommand::clear(0xFFFFFFFF)}},
    };
    qInfo("MMPE bytes per primitive (batch header %d bytes, EndFrame 1 byte)", HeaderSize);
    qInfo("%-32s %8s", "command", "bytes");
    for (const Row &row : rows) {
        const int bytes = int(encodeOne(row.commands).size()) - EmptyBatchSize;
        qInfo("%-32s %8d", row.name, bytes);
        QVERIFY(bytes > 0);
    }
    // Ten lines with one pen: the pen once, then 9 bytes a line.
    QList<CanvasCommand> tenLines = {CanvasCommand::setPen(samples::redPen())};
    for (int i = 0; i < 10; ++i)
        tenLines.append(CanvasCommand::line({i, 0}, {i, 50}));
    const int bytes = int(encodeOne(tenLines).size()) - EmptyBatchSize;
    qInfo("%-32s %8d", "SetPen + 10 Lines", bytes);
    QCOMPARE(bytes, 8 + 10 * 9);
    QCOMPARE(int(encodeOne({CanvasCommand::line({0, 0}, {1, 1})}).size()) - EmptyBatchSize, 9);
    QCOMPARE(int(encodeOne({CanvasCommand::ellipse({0, 0, 1, 1})}).size()) - EmptyBatchSize, 9);
    QCOMPARE(int(encodeOne({CanvasCommand::clear(0)}).size()) - EmptyBatchSize, 5);
    QCOMPARE(encodeOne({}).size(), EmptyBatchSize);
}

void TestCanvasCodec::encoderRefuses()
{
    CanvasEncoder encoder;
    auto expectRefused = [&](const CanvasCommand &c, ErrorCode code) {
        auto ok = encoder.append(c);
        if (ok)
            return false;
        return ok.error().code == code;
    };
    QVERIFY(expectRefused(CanvasCommand::line({0, 0}, {40000, 0}), ErrorCode::ProtocolViolation));
    QVERIFY(expectRefused(CanvasCommand::outlineRect({0, 0, 70000, 1}), ErrorCode::ProtocolViolation));
    QVERIFY(expectRefused(CanvasCommand::polyline({{0, 0}}), ErrorCode::CountMismatch));
    QVERIFY(expectRefused(CanvasCommand::polygon({{0, 0}, {1, 1}}), ErrorCode::CountMismatch));
    QVERIFY(expectRefused(CanvasCommand::polyline(QList<QPoint>(20000)), ErrorCode::FrameTooLarge));
    QVERIFY(expectRefused(CanvasCommand::textAt({0, 0}, QString(5000, u'x')), ErrorCode::FrameTooLarge));
    QVERIFY(expectRefused(CanvasCommand::setFont({QString(300, u'f'), 10}), ErrorCode::FrameTooLarge));
    QVERIFY(expectRefused(CanvasCommand::setFont({QString(), 0}), ErrorCode::ProtocolViolation));
    QVERIFY(expectRefused(CanvasCommand::setPen({0, 5000, CanvasPenStyle::Solid}), ErrorCode::ProtocolViolation));
    QVERIFY(expectRefused(CanvasCommand::imageAt({0, 0}, QImage()), ErrorCode::ProtocolViolation));
    QVERIFY(expectRefused(CanvasCommand::imageAt({0, 0}, QImage(8193, 1, QImage::Format_RGB32)),
                          ErrorCode::FrameTooLarge));
    QVERIFY(expectRefused(CanvasCommand::endFrame(), ErrorCode::ProtocolViolation));
    QCOMPARE(encoder.pendingCommands(), 0u);

    CanvasLimits small;
    small.maxImageBytesPerBatch = 64 * 64 * 4;
    CanvasEncoder limited(small);
    QVERIFY(limited.append(CanvasCommand::imageAt({0, 0}, samples::gradientImage(64, 64, true))));
    auto second = limited.append(CanvasCommand::imageAt({0, 0}, samples::gradientImage(1, 1, true)));
    QVERIFY(!second);
    QCOMPARE(second.error().code, ErrorCode::FrameTooLarge);
    limited.endFrame();
    QVERIFY(limited.append(CanvasCommand::imageAt({0, 0}, samples::gradientImage(1, 1, true))));
}

void TestCanvasCodec::headerRefused()
{
    const QByteArray good = encodeOne({CanvasCommand::line({0, 0}, {1, 1})});
    auto expect = [](QByteArray bytes, ErrorCode code) {
        auto r = CanvasDecoder().decode(bytes);
        if (r)
            return false;
        return r.error().code == code;
    };
    QByteArray b = good; b[0] = 'X';
    QVERIFY(expect(b, ErrorCode::BadMagic));
    QVERIFY(expect(QByteArray("HTTP/1.1 200 OK"), ErrorCode::BadMagic));
    b = good; b[4] = 2;
    QVERIFY(expect(b, ErrorCode::BadVersion));
    b = good; b[5] = 1;
    QVERIFY(expect(b, ErrorCode::BadHeader));
    b = good; put32(b, 10, 0);
    QVERIFY(expect(b, ErrorCode::CountMismatch));
    b = good; put32(b, 10, 1000); // more commands than bytes left
    QVERIFY(expect(b, ErrorCode::TruncatedPayload));
    b = good; put32(b, 10, 0xFFFFFFFF);
    QVERIFY(expect(b, ErrorCode::CountMismatch));
    QVERIFY(expect(QByteArray(), ErrorCode::TruncatedPayload));

    CanvasLimits tiny;
    tiny.maxBatchBytes = 10;
    auto r = CanvasDecoder(tiny).decode(good);
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::FrameTooLarge);
}

// A batch is all or nothing: no strict prefix of a valid batch is a valid
// batch (the header's count and the final EndFrame both say so), so a cut
// stream is never mistaken for a shorter picture.
void TestCanvasCodec::everyPrefixRefused()
{
    const QByteArray good = fullBatch();
    QVERIFY(CanvasDecoder().decode(good));
    int truncated = 0;
    for (qsizetype n = 0; n < good.size(); ++n) {
        auto r = CanvasDecoder().decode(QByteArrayView(good).first(n));
        QVERIFY2(!r, qPrintable(QStringLiteral("prefix of %1 of %2 bytes decoded").arg(n).arg(good.size())));
        QVERIFY(!r.error().message.isEmpty());
        if (r.error().code == ErrorCode::TruncatedPayload)
            ++truncated;
    }
    // A few prefixes end inside the image header where a length no longer
    // fits what is left (CountMismatch); the rest are named as truncated.
    QVERIFY2(truncated > good.size() * 9 / 10, qPrintable(QString::number(truncated)));
    const auto last = CanvasDecoder().decode(QByteArrayView(good).first(good.size() - 1));
    QVERIFY(last.error().message.contains(QStringLiteral("EndFrame")) || last.error().message.contains(QStringLiteral("byte")));
    qInfo("%lld prefixes refused, %d as TruncatedPayload; e.g. %s", qint64(good.size()), truncated,
          qPrintable(CanvasDecoder().decode(QByteArrayView(good).first(HeaderSize + 20)).error().toString()));
}

void TestCanvasCodec::trailingBytesRefused()
{
    QByteArray b = fullBatch();
    b.append('\0');
    auto r = CanvasDecoder().decode(b);
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::CountMismatch);
}

void TestCanvasCodec::unknownOpcode()
{
    for (int code : {0x00, 0x04, 0x0F, 0x18, 0x22, 0x7F, 0xFF}) {
        QByteArray b = encodeOne({CanvasCommand::clear(0)});
        b[HeaderSize] = char(code);
        auto r = CanvasDecoder().decode(b);
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::ProtocolViolation);
        QVERIFY2(r.error().message.contains(QStringLiteral("unknown opcode")), qPrintable(r.error().message));
    }
}

void TestCanvasCodec::misplacedEndFrame()
{
    // EndFrame first of two commands.
    QByteArray b = encodeOne({CanvasCommand::clear(0)});
    b[HeaderSize] = char(CanvasOpcode::EndFrame);
    auto r = CanvasDecoder().decode(b);
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::ProtocolViolation);
    // A last command that is not EndFrame.
    b = encodeOne({CanvasCommand::clear(0)});
    b.chop(1);
    put32(b, 10, 1);
    r = CanvasDecoder().decode(b);
    QVERIFY(!r);
    QVERIFY2(r.error().message.contains(QStringLiteral("must be EndFrame")), qPrintable(r.error().message));
}

void TestCanvasCodec::oversizeImage()
{
    // Headers that claim huge images, with a few bytes of data: refused before
    // any allocation (the test would take gigabytes otherwise).
    auto imageBatch = [](int w, int h, quint8 flags, quint32 length, QByteArray data) {
        QByteArray b = encodeOne({CanvasCommand::imageAt({0, 0}, samples::gradientImage(2, 2, true))});
        b.truncate(HeaderSize + 1 + 4);
        QByteArray tail(9, '\0');
        qToBigEndian<quint16>(quint16(w), tail.data());
        qToBigEndian<quint16>(quint16(h), tail.data() + 2);
        tail[4] = char(flags);
        qToBigEndian<quint32>(length, tail.data() + 5);
        return b + tail + data + char(CanvasOpcode::EndFrame);
    };
    auto code = [](const QByteArray &b) {
        auto r = CanvasDecoder().decode(b);
        return r ? ErrorCode::NoError : r.error().code;
    };
    QCOMPARE(code(imageBatch(9000, 10, 0, 9000 * 40, {})), ErrorCode::FrameTooLarge);
    QCOMPARE(code(imageBatch(10, 65535, 0, 0, {})), ErrorCode::FrameTooLarge);
    // 8192 x 8192 x 4 = 256 MiB: within the side limit, above the byte limit.
    QCOMPARE(code(imageBatch(8192, 8192, 1, 100, QByteArray(100, 'z'))), ErrorCode::FrameTooLarge);
    QCOMPARE(code(imageBatch(0, 10, 0, 0, {})), ErrorCode::ProtocolViolation);
    QCOMPARE(code(imageBatch(2, 2, 0x04, 16, QByteArray(16, 'a'))), ErrorCode::BadHeader);

    // A compressed block whose qCompress prefix lies about the raw size: would
    // make qUncompress allocate 1 GiB.
    QByteArray lying = qCompress(QByteArray(64, 'a'));
    qToBigEndian<quint32>(0x40000000, lying.data());
    QCOMPARE(code(imageBatch(4, 4, 1, quint32(lying.size()), lying)), ErrorCode::CountMismatch);
    // Right prefix, corrupt stream.
    QByteArray corrupt = qCompress(QByteArray(64, 'a'));
    corrupt[corrupt.size() - 3] = char(corrupt[corrupt.size() - 3] ^ 0x55);
    corrupt[6] = char(corrupt[6] ^ 0x5A);
    QCOMPARE(code(imageBatch(4, 4, 1, quint32(corrupt.size()), corrupt)), ErrorCode::ProtocolViolation);

    // Many images that are each allowed but together too much.
    CanvasLimits limits;
    limits.maxImageBytesPerBatch = 3 * 16 * 16 * 4;
    CanvasEncoder encoder;
    for (int i = 0; i < 4; ++i)
        QVERIFY(encoder.append(CanvasCommand::imageAt({i, 0}, samples::noiseImage(16, 16, i))));
    auto r = CanvasDecoder(limits).decode(encoder.endFrame());
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::FrameTooLarge);
}

void TestCanvasCodec::lyingLengths()
{
    auto code = [](const QByteArray &b) {
        auto r = CanvasDecoder().decode(b);
        return r ? ErrorCode::NoError : r.error().code;
    };
    const int body = HeaderSize + 1; // first field after the opcode
    // Text length beyond the batch, and beyond the limit.
    QByteArray b = encodeOne({CanvasCommand::textAt({1, 1}, QStringLiteral("abc"))});
    put16(b, body + 4, 200);
    QCOMPARE(code(b), ErrorCode::TruncatedPayload);
    put16(b, body + 4, 60000);
    QCOMPARE(code(b), ErrorCode::FrameTooLarge);
    put16(b, body + 4, 2); // shorter than the text: the rest is read as opcodes
    QVERIFY(code(b) != ErrorCode::NoError);
    // Point count beyond the batch, beyond the limit, below the minimum.
    b = encodeOne({CanvasCommand::polygon({{0, 0}, {5, 0}, {5, 5}})});
    put16(b, body, 1000);
    QCOMPARE(code(b), ErrorCode::TruncatedPayload);
    put16(b, body, 65535);
    QCOMPARE(code(b), ErrorCode::FrameTooLarge);
    put16(b, body, 2);
    QCOMPARE(code(b), ErrorCode::CountMismatch);
    // Font family length beyond the batch.
    b = encodeOne({CanvasCommand::setFont({QStringLiteral("Serif"), 9})});
    b[body + 2] = char(250);
    QCOMPARE(code(b), ErrorCode::TruncatedPayload);
    // Raw image length that does not match its dimensions.
    b = encodeOne({CanvasCommand::imageAt({0, 0}, samples::noiseImage(3, 3, 1))});
    put32(b, body + 9, 3 * 3 * 4 + 1);
    QCOMPARE(code(b), ErrorCode::CountMismatch);
    put32(b, body + 9, 0xFFFFFFFF);
    QCOMPARE(code(b), ErrorCode::CountMismatch);
    // Compressed length not smaller than raw.
    b = encodeOne({CanvasCommand::imageAt({0, 0}, samples::gradientImage(64, 4, false))});
    QCOMPARE(quint8(b[body + 8]), quint8(0x03));
    put32(b, body + 9, 64 * 4 * 3);
    QCOMPARE(code(b), ErrorCode::CountMismatch);
}

void TestCanvasCodec::badValues()
{
    auto code = [](const QByteArray &b) {
        auto r = CanvasDecoder().decode(b);
        return r ? ErrorCode::NoError : r.error().code;
    };
    const int body = HeaderSize + 1;
    QByteArray b = encodeOne({CanvasCommand::setPen(samples::redPen())});
    b[body + 6] = 9; // pen style
    QCOMPARE(code(b), ErrorCode::ProtocolViolation);
    b = encodeOne({CanvasCommand::setBrush(samples::blueBrush())});
    b[body] = 2; // brush style
    QCOMPARE(code(b), ErrorCode::ProtocolViolation);
    b = encodeOne({CanvasCommand::setFont({QStringLiteral("Serif"), 9})});
    put16(b, body, 0); // point size
    QCOMPARE(code(b), ErrorCode::ProtocolViolation);
    b = encodeOne({CanvasCommand::textAt({1, 1}, QStringLiteral("abc"))});
    b[body + 6] = char(0xC3); // a lead byte followed by 'b'
    QCOMPARE(code(b), ErrorCode::ProtocolViolation);
}

// Random damage to a valid batch: flipped bytes, overwritten lengths, cuts and
// insertions. Each result must either decode (then it re-encodes and renders
// without trouble) or be refused with a message; nothing may crash or hang.
void TestCanvasCodec::mutations()
{
    const QByteArray good = fullBatch();
    QRandomGenerator rng(20240607);
    int decoded = 0;
    int refused = 0;
    QHash<ErrorCode, int> codes;
    QImage canvas(48, 48, QImage::Format_ARGB32_Premultiplied);
    // qUncompress warns about each corrupt block it is given; hundreds of
    // those lines would bury the result.
    QLoggingCategory::setFilterRules(QStringLiteral("default.warning=false"));
    auto restore = qScopeGuard([] { QLoggingCategory::setFilterRules(QString()); });
    for (int round = 0; round < 4000; ++round) {
        QByteArray b = good;
        const int edits = 1 + int(rng.bounded(4));
        for (int e = 0; e < edits; ++e) {
            const int at = int(rng.bounded(quint32(qMax<qsizetype>(1, b.size()))));
            switch (rng.bounded(6)) {
            case 0: b[at] = char(b[at] ^ (1 << rng.bounded(8))); break;
            case 1: b[at] = char(rng.bounded(256)); break;
            case 2: b[at] = char(0xFF); break;
            case 3: b.truncate(at); break;
            case 4: b.insert(at, char(rng.bounded(256))); break;
            case 5: b.remove(at, 1 + int(rng.bounded(8))); break;
            }
            if (b.isEmpty())
                break;
        }
        auto r = CanvasDecoder().decode(b);
        if (r) {
            ++decoded;
            // A decoded batch is valid: it encodes again, and draws.
            CanvasEncoder encoder;
            auto again = encoder.encode(*r);
            QVERIFY2(again, qPrintable(test::why(again)));
            canvas.fill(Qt::transparent);
            QPainter painter(&canvas);
            CanvasRenderer(painter, canvas.size()).draw(r->commands);
        } else {
            ++refused;
            ++codes[r.error().code];
            QVERIFY(r.error().isError());
            QVERIFY(!r.error().message.isEmpty());
        }
    }
    QString summary;
    for (auto it = codes.cbegin(); it != codes.cend(); ++it)
        summary += QStringLiteral(" %1=%2").arg(errorCodeName(it.key())).arg(it.value());
    qInfo("4000 mutated batches: %d decoded, %d refused (%s )", decoded, refused, qPrintable(summary));
    QCOMPARE(decoded + refused, 4000);
    QVERIFY(refused > 0);
}

// The mutation test renders what it decodes, text included.
MMPI_OFFSCREEN_TEST_MAIN(TestCanvasCodec)

#include "tst_canvascodec.moc"
