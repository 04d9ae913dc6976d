// The headless renderer and the retained scene: decoded commands draw exactly
// the pixels QPainter draws for the same shapes, and a late joiner's replay
// (from the last clear) renders the same picture as the whole history.
// Viewports: a region renders as that part of the whole picture, every
// primitive's bounds hold all the pixels it paints, and a stream cut to a
// viewport draws the same tile as the whole stream.
#include "offscreenmain.h"
#include "canvassamples.h"
#include "why.h"

#include <mmpi/mmpe/canvasdecoder.h>
#include <mmpi/mmpe/canvasencoder.h>
#include <mmpi/mmpe/canvasrenderer.h>
#include <mmpi/mmpe/canvasscene.h>
#include <mmpi/mmpe/canvasviewport.h>

#include <QPainter>
#include <QTest>

using namespace mmpi;
using mmpi::test::why;

Q_DECLARE_METATYPE(mmpi::CanvasState)
Q_DECLARE_METATYPE(mmpi::CanvasCommand)

namespace {

const QSize Canvas(240, 220);

// Through the wire: encode, decode, append; the scene renders what arrived.
CanvasScene sceneFrom(const QList<QList<CanvasCommand>> &frames)
{
    CanvasEncoder encoder;
    CanvasScene scene(Canvas);
    for (const auto &frame : frames) {
        for (const CanvasCommand &c : frame)
            if (auto ok = encoder.append(c); !ok)
                qFatal("%s", qPrintable(why(ok)));
        if (auto ok = scene.appendBytes(encoder.endFrame()); !ok)
            qFatal("%s", qPrintable(why(ok)));
    }
    return scene;
}

QImage blank(QSize size = Canvas)
{
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    return image;
}

// The reference starts as the renderer does: hints, default pen, no brush,
// default font; each test then draws with plain QPainter calls.
void prepare(QPainter &p)
{
    p.setRenderHints(CanvasRenderer::renderHints());
    p.setPen(QPen(Qt::black, 1, Qt::SolidLine));
    p.setBrush(Qt::NoBrush);
    QFont font;
    font.setPointSize(12);
    p.setFont(font);
}

int differingPixels(const QImage &a, const QImage &b)
{
    if (a.size() != b.size())
        return -1;
    const QImage x = a.convertToFormat(QImage::Format_ARGB32_Premultiplied);
    const QImage y = b.convertToFormat(QImage::Format_ARGB32_Premultiplied);
    int n = 0;
    for (int row = 0; row < x.height(); ++row)
        for (int col = 0; col < x.width(); ++col)
            n += x.pixel(col, row) != y.pixel(col, row);
    return n;
}

int paintedPixels(const QImage &image)
{
    int n = 0;
    for (int row = 0; row < image.height(); ++row)
        for (int col = 0; col < image.width(); ++col)
            n += qAlpha(image.pixel(col, row)) != 0;
    return n;
}

// The smallest rect holding every pixel that differs between the images.
QRect changedArea(const QImage &a, const QImage &b)
{
    QRect area;
    for (int row = 0; row < a.height(); ++row)
        for (int col = 0; col < a.width(); ++col)
            if (a.pixel(col, row) != b.pixel(col, row))
                area |= QRect(col, row, 1, 1);
    return area;
}

// Many primitives of every kind from a fixed seed, with state changes.
QList<QList<CanvasCommand>> randomFrames(quint32 seed, int frames, int perFrame)
{
    QRandomGenerator rng(seed);
    auto point = [&] { return QPoint(rng.bounded(-20, Canvas.width() + 20), rng.bounded(-20, Canvas.height() + 20)); };
    auto rect = [&] { return QRect(point(), QSize(rng.bounded(0, 60), rng.bounded(0, 50))); };
    const CanvasPenStyle styles[] = {CanvasPenStyle::Solid, CanvasPenStyle::Dash, CanvasPenStyle::Dot,
                                     CanvasPenStyle::DashDot, CanvasPenStyle::NoPen};
    QList<QList<CanvasCommand>> out;
    for (int f = 0; f < frames; ++f) {
        QList<CanvasCommand> frame;
        for (int i = 0; i < perFrame; ++i) {
            switch (rng.bounded(12)) {
            case 0:
                frame << CanvasCommand::setPen({rng.generate() | 0xFF000000, quint16(rng.bounded(0, 9)),
                                                styles[rng.bounded(5)]});
                break;
            case 1:
                frame << CanvasCommand::setBrush({rng.bounded(2) ? CanvasBrushStyle::Solid : CanvasBrushStyle::NoBrush,
                                                  rng.generate()});
                break;
            case 2: frame << CanvasCommand::setFont({QString(), quint16(rng.bounded(6, 30))}); break;
            case 3: frame << CanvasCommand::line(point(), point()); break;
            case 4: frame << CanvasCommand::polyline({point(), point(), point()}); break;
            case 5: frame << CanvasCommand::outlineRect(rect()); break;
            case 6: frame << CanvasCommand::filledRect(rect()); break;
            case 7: frame << CanvasCommand::ellipse(rect()); break;
            case 8: frame << CanvasCommand::polygon({point(), point(), point(), point()}); break;
            case 9: frame << CanvasCommand::textAt(point(), QStringLiteral("Tile %1 ÄÖ").arg(i)); break;
            case 10:
                frame << CanvasCommand::imageAt(point(), samples::gradientImage(rng.bounded(1, 30), rng.bounded(1, 20),
                                                                                rng.bounded(2)));
                break;
            default:
                if (rng.bounded(8) == 0)
                    frame << CanvasCommand::clear(rng.generate());
                else
                    frame << CanvasCommand::line(point(), point());
                break;
            }
        }
        out << frame;
    }
    return out;
}

} // namespace

class TestCanvasScene : public QObject
{
    Q_OBJECT

private slots:
    void shapesMatchQPainter();
    void textMatchesQPainter();
    void imagesAndClearMatchQPainter();
    void scaledRendering();
    void replayFromLastClear();
    void replayWithoutClear();
    void discardBeforeLastClear();
    void framesInOrder();
    void regionIsThatPartOfThePicture();
    void boundsHoldEveryPaintedPixel_data();
    void boundsHoldEveryPaintedPixel();
    void streamCutToViewportDrawsTheTile();
    void viewportWireForm();
};

// Exact comparison: the renderer issues the same QPainter calls with the same
// state, so the raster engine produces the same pixels; any difference means
// a field was lost or a state applied wrongly, not rounding.
void TestCanvasScene::shapesMatchQPainter()
{
    const CanvasScene scene = sceneFrom({{
        CanvasCommand::setPen(samples::redPen()),
        CanvasCommand::line({5, 6}, {120, 80}),
        CanvasCommand::polyline({{10, 10}, {40, 70}, {90, 20}, {-5, 300}}),
        CanvasCommand::setBrush(samples::blueBrush()),
        CanvasCommand::outlineRect({20, 30, 60, 40}),
        CanvasCommand::filledRect({100, 20, 50, 25}),
        CanvasCommand::ellipse({30, 90, 80, 50}),
        CanvasCommand::setPen({0xFF00A000, 0, CanvasPenStyle::Dash}),
        CanvasCommand::polygon({{150, 150}, {190, 120}, {200, 180}, {160, 190}}),
        CanvasCommand::setPen({0xFF202020, 2, CanvasPenStyle::DashDot}),
        CanvasCommand::line({0, 210}, {239, 200}),
        CanvasCommand::setPen({0xFF202020, 4, CanvasPenStyle::Dot}),
        CanvasCommand::line({0, 215}, {239, 215}),
        CanvasCommand::setPen({0, 1, CanvasPenStyle::NoPen}),
        CanvasCommand::ellipse({180, 20, 40, 40}),
    }});
    const QImage rendered = scene.toImage();

    QImage reference = blank();
    {
        QPainter p(&reference);
        prepare(p);
        p.setPen(QPen(QColor::fromRgba(0xFFCC2211), 3, Qt::SolidLine));
        p.drawLine(QPoint(5, 6), QPoint(120, 80));
        const QPoint poly[] = {{10, 10}, {40, 70}, {90, 20}, {-5, 300}};
        p.drawPolyline(poly, 4);
        p.setBrush(QColor::fromRgba(0xC01040E0));
        p.save();
        p.setBrush(Qt::NoBrush);
        p.drawRect(QRect(20, 30, 60, 40));
        p.restore();
        p.fillRect(QRect(100, 20, 50, 25), QColor::fromRgba(0xC01040E0));
        p.drawEllipse(QRect(30, 90, 80, 50));
        p.setPen(QPen(QColor::fromRgba(0xFF00A000), 0, Qt::DashLine));
        const QPoint gon[] = {{150, 150}, {190, 120}, {200, 180}, {160, 190}};
        p.drawPolygon(gon, 4);
        p.setPen(QPen(QColor::fromRgba(0xFF202020), 2, Qt::DashDotLine));
        p.drawLine(QPoint(0, 210), QPoint(239, 200));
        p.setPen(QPen(QColor::fromRgba(0xFF202020), 4, Qt::DotLine));
        p.drawLine(QPoint(0, 215), QPoint(239, 215));
        p.setPen(Qt::NoPen);
        p.drawEllipse(QRect(180, 20, 40, 40));
    }
    QVERIFY(paintedPixels(reference) > 3000);
    QCOMPARE(differingPixels(rendered, reference), 0);
}

// Glyphs depend on the fonts installed, so the reference is drawn in this
// process with the same QFont: equal whatever fonts the machine has.
void TestCanvasScene::textMatchesQPainter()
{
    const QString words = QStringLiteral("MMPE ÄÖ ✓ 123");
    const CanvasScene scene = sceneFrom({{
        CanvasCommand::textAt({10, 40}, words),
        CanvasCommand::setPen({0xFF1030C0, 1, CanvasPenStyle::Solid}),
        CanvasCommand::setFont(samples::bigFont()),
        CanvasCommand::textAt({10, 100}, words),
        CanvasCommand::setFont({QStringLiteral("DejaVu Sans Mono"), 9}),
        CanvasCommand::textAt({-20, 150}, QStringLiteral("clipped at the left")),
    }});
    QImage reference = blank();
    {
        QPainter p(&reference);
        prepare(p);
        p.drawText(QPoint(10, 40), words);
        p.setPen(QPen(QColor::fromRgba(0xFF1030C0), 1));
        QFont big;
        big.setPointSize(20);
        p.setFont(big);
        p.drawText(QPoint(10, 100), words);
        QFont mono;
        mono.setFamily(QStringLiteral("DejaVu Sans Mono"));
        mono.setPointSize(9);
        p.setFont(mono);
        p.drawText(QPoint(-20, 150), QStringLiteral("clipped at the left"));
    }
    const int painted = paintedPixels(reference);
    if (painted == 0)
        qWarning("no glyphs were drawn (no fonts installed?): comparing empty pictures");
    QCOMPARE(differingPixels(scene.toImage(), reference), 0);
}

void TestCanvasScene::imagesAndClearMatchQPainter()
{
    const QImage rows = samples::gradientImage(200, 12, false);
    const QImage sprite = samples::gradientImage(30, 30, true);
    const CanvasScene scene = sceneFrom({
        {CanvasCommand::clear(0xFF336699), CanvasCommand::imageAt({10, 10}, rows)},
        {CanvasCommand::imageAt({20, 22}, rows), CanvasCommand::imageAt({100, 100}, sprite),
         CanvasCommand::imageAt({-10, 200}, sprite)},
    });
    QImage reference = blank();
    {
        QPainter p(&reference);
        prepare(p);
        p.setCompositionMode(QPainter::CompositionMode_Source);
        p.fillRect(reference.rect(), QColor::fromRgba(0xFF336699));
        p.setCompositionMode(QPainter::CompositionMode_SourceOver);
        p.drawImage(QPoint(10, 10), rows);
        p.drawImage(QPoint(20, 22), rows);
        p.drawImage(QPoint(100, 100), sprite.convertToFormat(QImage::Format_ARGB32));
        p.drawImage(QPoint(-10, 200), sprite.convertToFormat(QImage::Format_ARGB32));
    }
    QCOMPARE(differingPixels(scene.toImage(), reference), 0);

    // A translucent clear replaces, it does not blend.
    const CanvasScene cleared = sceneFrom({{CanvasCommand::filledRect({0, 0, 50, 50}),
                                            CanvasCommand::clear(0x40FF0000)}});
    const QImage image = cleared.toImage();
    QCOMPARE(image.pixelColor(5, 5).rgba(), image.pixelColor(200, 200).rgba());
}

// A scene's logical canvas maps onto any image size.
void TestCanvasScene::scaledRendering()
{
    const QList<CanvasCommand> frame = {CanvasCommand::setBrush(samples::blueBrush()),
                                        CanvasCommand::ellipse({20, 20, 100, 60}),
                                        CanvasCommand::line({0, 0}, {239, 219})};
    const CanvasScene scene = sceneFrom({frame});
    const QImage doubled = scene.toImage(Canvas * 2);
    QCOMPARE(doubled.size(), Canvas * 2);
    QImage reference = blank(Canvas * 2);
    {
        QPainter p(&reference);
        prepare(p);
        p.scale(2.0, 2.0);
        p.setBrush(QColor::fromRgba(0xC01040E0));
        p.drawEllipse(QRect(20, 20, 100, 60));
        p.drawLine(QPoint(0, 0), QPoint(239, 219));
    }
    QCOMPARE(differingPixels(doubled, reference), 0);
}

void TestCanvasScene::replayFromLastClear()
{
    const QList<QList<CanvasCommand>> frames = {
        {CanvasCommand::setPen(samples::redPen()), CanvasCommand::line({0, 0}, {200, 200}),
         CanvasCommand::setBrush(samples::blueBrush())},
        {CanvasCommand::ellipse({10, 10, 100, 100}), CanvasCommand::clear(0xFFF0F0F0)},
        {CanvasCommand::clear(0xFFFFFFFF), CanvasCommand::setFont(samples::bigFont()),
         CanvasCommand::ellipse({50, 50, 60, 40}), CanvasCommand::textAt({20, 180}, QStringLiteral("late"))},
        {CanvasCommand::setPen({0xFF008000, 2, CanvasPenStyle::Dash}),
         CanvasCommand::polyline({{0, 100}, {100, 0}, {200, 100}})},
    };
    const CanvasScene full = sceneFrom(frames);
    QCOMPARE(full.frameCount(), 4);
    QCOMPARE(full.currentFrame(), std::optional<quint32>(3));

    const QList<CanvasBatch> replay = full.replay();
    QCOMPARE(replay.size(), 2); // from frame 2, where the last clear is
    QCOMPARE(replay[0].frame, 2u);
    QCOMPARE(replay[1].frame, 3u);
    // The state in effect at the clear, then the clear and what follows.
    QCOMPARE(replay[0].commands[0], CanvasCommand::setPen(samples::redPen()));
    QCOMPARE(replay[0].commands[1], CanvasCommand::setBrush(samples::blueBrush()));
    QCOMPARE(replay[0].commands[2], CanvasCommand::setFont(CanvasState::Font()));
    QCOMPARE(replay[0].commands[3], CanvasCommand::clear(0xFFFFFFFF));
    QCOMPARE(replay[0].commands.size(), 4 + 3 + 1);
    for (const CanvasBatch &b : replay)
        for (const CanvasCommand &c : b.commands)
            QVERIFY(c.opcode != CanvasOpcode::Line); // frame 0's line is gone

    // A late joiner: the replay sent over the wire by a fresh encoder.
    CanvasEncoder encoder;
    CanvasScene joiner(Canvas);
    for (const CanvasBatch &b : replay) {
        auto bytes = encoder.encode(b);
        QVERIFY2(bytes, qPrintable(why(bytes)));
        QVERIFY(joiner.appendBytes(*bytes));
    }
    QCOMPARE(joiner.state(), full.state());
    QCOMPARE(joiner.currentFrame(), full.currentFrame());
    const QImage expected = full.toImage();
    QVERIFY(paintedPixels(expected) == Canvas.width() * Canvas.height());
    QCOMPARE(differingPixels(joiner.toImage(), expected), 0);

    // The replayed scene's own replay is itself.
    CanvasScene direct(Canvas);
    for (const CanvasBatch &b : replay)
        QVERIFY(direct.appendBatch(b));
    QCOMPARE(direct.replay(), replay);
}

void TestCanvasScene::replayWithoutClear()
{
    const CanvasScene full = sceneFrom({{CanvasCommand::line({0, 0}, {10, 10})},
                                        {CanvasCommand::ellipse({5, 5, 30, 30})}});
    const QList<CanvasBatch> replay = full.replay();
    QCOMPARE(replay.size(), 2);
    QCOMPARE(replay[0].commands.size(), 3 + 2);
    CanvasScene joiner(Canvas);
    for (const CanvasBatch &b : replay)
        QVERIFY(joiner.appendBatch(b));
    QCOMPARE(differingPixels(joiner.toImage(), full.toImage()), 0);
    QVERIFY(CanvasScene().replay().isEmpty());
}

void TestCanvasScene::discardBeforeLastClear()
{
    CanvasScene scene = sceneFrom({
        {CanvasCommand::setPen(samples::redPen()), CanvasCommand::line({0, 0}, {200, 200})},
        {CanvasCommand::clear(0xFF000000), CanvasCommand::ellipse({50, 50, 60, 40})},
        {CanvasCommand::line({0, 100}, {100, 0})},
    });
    const QImage before = scene.toImage();
    const QList<CanvasBatch> replay = scene.replay();
    scene.discardBeforeLastClear();
    QCOMPARE(scene.frameCount(), 2);
    QCOMPARE(scene.replay(), replay);
    QCOMPARE(differingPixels(scene.toImage(), before), 0);

    // Again with nothing new to drop: the same scene.
    scene.discardBeforeLastClear();
    QCOMPARE(scene.frameCount(), 2);
    QCOMPARE(scene.replay(), replay);

    // A later clear lets go of everything before it.
    QVERIFY(scene.appendBatch({10, {CanvasCommand::outlineRect({5, 5, 20, 20}), CanvasCommand::endFrame()}}));
    QVERIFY(scene.appendBatch({11, {CanvasCommand::clear(0xFF00FF00), CanvasCommand::endFrame()}}));
    scene.discardBeforeLastClear();
    QCOMPARE(scene.frameCount(), 1);
    QCOMPARE(scene.currentFrame(), 11u);
    QCOMPARE(scene.toImage().pixel(100, 100), 0xFF00FF00u);
}

void TestCanvasScene::framesInOrder()
{
    CanvasScene scene(Canvas);
    QCOMPARE(scene.currentFrame(), std::nullopt);
    QVERIFY(scene.appendBatch({5, {CanvasCommand::endFrame()}}));
    QCOMPARE(scene.currentFrame(), std::optional<quint32>(5));
    auto again = scene.appendBatch({5, {CanvasCommand::endFrame()}});
    QVERIFY(!again);
    QCOMPARE(again.error().code, ErrorCode::ProtocolViolation);
    QVERIFY(!scene.appendBatch({6, {}}));
    QVERIFY(!scene.appendBatch({6, {CanvasCommand::clear(0)}}));
    QVERIFY(!scene.appendBatch({6, {CanvasCommand::endFrame(), CanvasCommand::clear(0)}}));
    QCOMPARE(scene.frameCount(), 1);
    QVERIFY(scene.appendBatch({9, {CanvasCommand::clear(0), CanvasCommand::endFrame()}}));
    QCOMPARE(scene.currentFrame(), std::optional<quint32>(9));
    QVERIFY(!scene.appendBytes(QByteArray("junk")));
    QCOMPARE(scene.frameCount(), 2);
}

// toImage(region) crops the whole picture drawn at the same scale, so a line
// across a tile edge is not clipped differently.
void TestCanvasScene::regionIsThatPartOfThePicture()
{
    QList<CanvasCommand> frame = samples::everyCommand();
    frame.removeLast(); // the clear
    frame << CanvasCommand::setPen({0xFF102030, 2, CanvasPenStyle::Dash}) << CanvasCommand::line({3, 2}, {237, 211});
    const CanvasScene scene = sceneFrom({frame});
    const QImage whole = scene.toImage();
    for (const QRect &region : {QRect(0, 0, 120, 110), QRect(120, 0, 120, 110), QRect(37, 51, 93, 77),
                                QRect(200, 200, 40, 20), QRect(-10, -10, 50, 50)}) {
        const QImage part = scene.toImage(region, QSize());
        QCOMPARE(part.size(), region.size());
        QCOMPARE(part, whole.copy(region));
    }
    const QImage doubled = scene.toImage(Canvas * 2);
    const QRect region(60, 40, 100, 90);
    QCOMPARE(scene.toImage(region, region.size() * 2),
             doubled.copy(QRect(region.topLeft() * 2, region.size() * 2)));
    QVERIFY(scene.toImage(QRect(), QSize(10, 10)).isNull());
}

void TestCanvasScene::boundsHoldEveryPaintedPixel_data()
{
    QTest::addColumn<CanvasState>("state");
    QTest::addColumn<CanvasCommand>("command");
    const CanvasState::Brush fill{CanvasBrushStyle::Solid, 0xFF2050C0};
    const QList<std::pair<const char *, CanvasState::Pen>> pens{
        {"hairline", {0xFF000000, 0, CanvasPenStyle::Solid}},
        {"1px", {0xFF000000, 1, CanvasPenStyle::Solid}},
        {"9px dash", {0xFFAA0000, 9, CanvasPenStyle::Dash}},
        {"14px", {0xFF00AA00, 14, CanvasPenStyle::Solid}},
        {"no pen", {0xFF000000, 3, CanvasPenStyle::NoPen}},
    };
    for (const auto &[name, pen] : pens) {
        CanvasState state;
        state.pen = pen;
        state.brush = fill;
        const QList<std::pair<const char *, CanvasCommand>> shapes{
            {"line", CanvasCommand::line({60, 50}, {170, 160})},
            {"steep line", CanvasCommand::line({100, 40}, {104, 180})},
            {"polyline", CanvasCommand::polyline({{50, 100}, {120, 60}, {130, 170}, {190, 90}})},
            {"rect", CanvasCommand::outlineRect({70, 60, 80, 70})},
            {"filled rect", CanvasCommand::filledRect({70, 60, 80, 70})},
            {"ellipse", CanvasCommand::ellipse({70, 60, 80, 70})},
            {"polygon", CanvasCommand::polygon({{120, 40}, {180, 170}, {60, 150}, {110, 110}})},
            {"thin polygon", CanvasCommand::polygon({{60, 60}, {180, 62}, {60, 64}})},
            {"image", CanvasCommand::imageAt({80, 70}, samples::noiseImage(30, 20, 3))},
        };
        for (const auto &[shape, command] : shapes)
            QTest::addRow("%s, %s", shape, name) << state << command;
    }
    for (int size : {6, 12, 24, 48}) {
        CanvasState state;
        state.font.pointSize = quint16(size);
        for (const QString &text : {QStringLiteral("Wide WWW MMM"), QStringLiteral("gjpqy ÅÉ ✓"),
                                    QStringLiteral("漢字かな"), QStringLiteral("|")})
            QTest::addRow("text %dpt %s", size, qPrintable(text)) << state << CanvasCommand::textAt({40, 120}, text);
    }
}

// The viewport filter drops a primitive whose bounds miss the viewport, so
// the bounds must hold every pixel it changes (and no pixel of a tile can
// be lost).
void TestCanvasScene::boundsHoldEveryPaintedPixel()
{
    QFETCH(CanvasState, state);
    QFETCH(CanvasCommand, command);
    const QList<CanvasCommand> setup{CanvasCommand::setPen(state.pen), CanvasCommand::setBrush(state.brush),
                                     CanvasCommand::setFont(state.font)};
    const QImage before = sceneFrom({setup}).toImage();
    const QImage after = sceneFrom({setup + QList<CanvasCommand>{command}}).toImage();
    const QRect painted = changedArea(before, after);
    QVERIFY(!painted.isEmpty() || state.pen.style == CanvasPenStyle::NoPen);
    const auto bounds = CanvasViewport::bounds(command, state);
    QVERIFY(bounds.has_value());
    QVERIFY2(painted.isEmpty() || bounds->contains(painted),
             qPrintable(QStringLiteral("painted (%1, %2) %3x%4 outside the bounds (%5, %6) %7x%8")
                            .arg(painted.x()).arg(painted.y()).arg(painted.width()).arg(painted.height())
                            .arg(bounds->x()).arg(bounds->y()).arg(bounds->width()).arg(bounds->height())));
    // ... and shapes' bounds are tight: the pen and a few pixels more.
    if (command.opcode != CanvasOpcode::Text && !painted.isEmpty()) {
        const int slack = 2 * (qMax<int>(state.pen.width, 1) + 3);
        QVERIFY(bounds->width() <= painted.width() + slack && bounds->height() <= painted.height() + slack);
    }
}

// Random scenes, cut to each of several viewports frame by frame as the root
// does, through the encoder: each tile equals its region of the whole picture,
// from fewer commands, with the state of the whole stream at every frame end.
void TestCanvasScene::streamCutToViewportDrawsTheTile()
{
    const auto frames = randomFrames(20240601, 12, 40);
    const CanvasScene wholeScene = sceneFrom(frames);
    const QImage whole = wholeScene.toImage();
    QVERIFY(paintedPixels(whole) > 0);
    qsizetype wholeCommands = 0;
    for (const CanvasBatch &b : wholeScene.batches())
        wholeCommands += b.commands.size();
    for (const QRect &area : {QRect(0, 0, 120, 110), QRect(120, 110, 120, 110), QRect(50, 30, 41, 67),
                              QRect(0, 0, 240, 20)}) {
        const CanvasViewport viewport(area);
        CanvasEncoder encoder;
        CanvasScene tile(Canvas);
        CanvasState state;
        qsizetype commands = 0;
        for (const CanvasBatch &b : wholeScene.batches()) {
            for (const CanvasCommand &c : viewport.filter(b.commands, state))
                QVERIFY(encoder.append(c));
            QVERIFY(tile.appendBytes(encoder.endFrame()));
            commands += tile.batches().constLast().commands.size();
            QCOMPARE(tile.state(), state);
        }
        QCOMPARE(tile.state(), wholeScene.state());
        QCOMPARE(tile.toImage(area, QSize()), whole.copy(area));
        QVERIFY2(commands < wholeCommands * 2 / 3,
                 qPrintable(QStringLiteral("%1 of %2 commands").arg(commands).arg(wholeCommands)));
    }
    // A clear reaches everyone; a shape far away does not; a state change
    // with nothing kept after it comes at the end, once.
    const CanvasViewport corner(QRect(0, 0, 50, 50));
    CanvasState state;
    const auto cut = corner.filter({CanvasCommand::setPen(samples::redPen()), CanvasCommand::line({200, 200}, {220, 210}),
                                    CanvasCommand::clear(0xFF000000), CanvasCommand::setPen({0xFF00FF00, 2, CanvasPenStyle::Dot}),
                                    CanvasCommand::endFrame()},
                                   state);
    QCOMPARE(cut, (QList<CanvasCommand>{CanvasCommand::clear(0xFF000000),
                                        CanvasCommand::setPen({0xFF00FF00, 2, CanvasPenStyle::Dot})}));
    QCOMPARE(state.pen, (CanvasState::Pen{0xFF00FF00, 2, CanvasPenStyle::Dot}));
    // The whole canvas keeps everything.
    QVERIFY(CanvasViewport().needs(CanvasCommand::line({30000, 30000}, {30001, 30001}), CanvasState()));
}

void TestCanvasScene::viewportWireForm()
{
    const CanvasViewport viewport(QRect(-5, 7, 300, 65535));
    const QByteArray bytes = viewport.encode();
    QCOMPARE(bytes.size(), 8);
    QCOMPARE(CanvasViewport::decode(bytes).value(), viewport);
    QVERIFY(CanvasViewport().encode().isEmpty());
    QVERIFY(CanvasViewport::decode(QByteArray())->isWhole());
    QCOMPARE(CanvasViewport::decode(QByteArray(7, '\1')).error().code, ErrorCode::CountMismatch);
    QCOMPARE(CanvasViewport::decode(QByteArray::fromHex("0000000000000005")).error().code,
             ErrorCode::ProtocolViolation);
    QVERIFY(CanvasViewport::validate(QRect()));
    QVERIFY(CanvasViewport::validate(QRect(-32768, 32767, 65535, 1)));
    QVERIFY(!CanvasViewport::validate(QRect(0, 0, 65536, 1)));
    QVERIFY(!CanvasViewport::validate(QRect(-32769, 0, 5, 5)));
    QVERIFY(!CanvasViewport::validate(QRect(0, 0, 0, 5)));
}

MMPI_OFFSCREEN_TEST_MAIN(TestCanvasScene)

#include "tst_canvasscene.moc"
