// The headless renderer and the retained scene: decoded commands draw exactly
// the pixels QPainter draws for the same shapes, and a late joiner's replay
// (from the last clear) renders the same picture as the whole history.
#include "canvassamples.h"

#include <mmpi/mmpe/canvasdecoder.h>
#include <mmpi/mmpe/canvasencoder.h>
#include <mmpi/mmpe/canvasrenderer.h>
#include <mmpi/mmpe/canvasscene.h>

#include <QGuiApplication>
#include <QPainter>
#include <QTest>

using namespace mmpi;

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
                qFatal("%s", samples::whyNot(ok).constData());
        if (auto ok = scene.appendBytes(encoder.endFrame()); !ok)
            qFatal("%s", samples::whyNot(ok).constData());
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
        QVERIFY2(bytes, samples::whyNot(bytes).constData());
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

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QGuiApplication app(argc, argv);
    TestCanvasScene test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_canvasscene.moc"
