#include "pixelhelper.h"

#include "quickcanvas.h"

#include <QDir>
#include <QElapsedTimer>
#include <QPainter>
#include <QQuickItem>
#include <QQuickWindow>
#include <QTest>

namespace {

const QSize Logical(320, 240);

// The same calls the MMPE renderer makes for the QML scene in the tests
// (scenes.js, basic()): same state, hints and scale.
void drawBasic(QPainter &p)
{
    p.setCompositionMode(QPainter::CompositionMode_Source);
    p.fillRect(QRect(0, 0, p.device()->width(), p.device()->height()), QColor(0x20, 0x30, 0x40));
    p.setCompositionMode(QPainter::CompositionMode_SourceOver);
    p.scale(qreal(p.device()->width()) / Logical.width(), qreal(p.device()->height()) / Logical.height());
    p.setPen(QPen(QBrush(QColor(0xcc, 0x22, 0x11)), 3, Qt::SolidLine));
    p.drawLine(QPoint(10, 10), QPoint(300, 200));
    p.setBrush(QColor(0x40, 0xc0, 0x40, 0x80));
    p.fillRect(QRect(20, 150, 100, 60), p.brush());
    p.setPen(QPen(QBrush(Qt::white), 2, Qt::DashLine));
    const QBrush brush = p.brush();
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRect(200, 20, 100, 80));
    p.setBrush(brush);
    p.setPen(QPen(QBrush(QColor(0xff, 0xee, 0x00)), 4, Qt::SolidLine));
    p.setBrush(QColor(0x11, 0x55, 0xdd));
    p.drawEllipse(QRect(150, 100, 120, 70));
    const QPoint triangle[] = {{40, 30}, {110, 40}, {60, 110}};
    p.drawPolygon(triangle, 3);
    p.setPen(QPen(QBrush(QColor(0xff, 0xff, 0xff)), 1, Qt::SolidLine));
    const QPoint zigzag[] = {{10, 230}, {60, 180}, {110, 230}, {160, 180}};
    p.drawPolyline(zigzag, 4);
}

} // namespace

QImage PixelHelper::reference(const QString &scene, QSize size)
{
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter p(&image);
    p.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    if (scene == QLatin1String("basic") || scene == QLatin1String("basicPlus"))
        drawBasic(p);
    if (scene == QLatin1String("basicPlus")) {
        // A second frame without a clear, drawn on top (Scenes.plus).
        p.setPen(QPen(QBrush(QColor(0x00, 0xff, 0x00)), 5, Qt::SolidLine));
        p.drawLine(QPoint(0, 239), QPoint(319, 0));
        p.drawEllipse(QRect(5, 5, 30, 30));
    }
    return image;
}

QVariantMap PixelHelper::compare(const QImage &actualIn, const QImage &expectedIn)
{
    if (actualIn.size() != expectedIn.size())
        return {{QStringLiteral("ok"), false},
                {QStringLiteral("message"), QStringLiteral("size %1x%2, expected %3x%4")
                                                .arg(actualIn.width()).arg(actualIn.height())
                                                .arg(expectedIn.width()).arg(expectedIn.height())}};
    const QImage actual = actualIn.convertToFormat(QImage::Format_ARGB32);
    const QImage expected = expectedIn.convertToFormat(QImage::Format_ARGB32);
    int differing = 0; // beyond anti-aliasing rounding
    int maxDiff = 0;
    for (int y = 0; y < actual.height(); ++y) {
        const QRgb *a = reinterpret_cast<const QRgb *>(actual.constScanLine(y));
        const QRgb *e = reinterpret_cast<const QRgb *>(expected.constScanLine(y));
        for (int x = 0; x < actual.width(); ++x) {
            const int d = qMax(qMax(qAbs(qRed(a[x]) - qRed(e[x])), qAbs(qGreen(a[x]) - qGreen(e[x]))),
                               qMax(qAbs(qBlue(a[x]) - qBlue(e[x])), qAbs(qAlpha(a[x]) - qAlpha(e[x]))));
            maxDiff = qMax(maxDiff, d);
            if (d > 3)
                ++differing;
        }
    }
    // Edge pixels may blend differently by a few levels; a missing or moved
    // shape changes hundreds of pixels by far more.
    const int allowed = actual.width() * actual.height() / 500;
    const bool ok = differing <= allowed && maxDiff <= 64;
    return {{QStringLiteral("ok"), ok},
            {QStringLiteral("differing"), differing},
            {QStringLiteral("maxDifference"), maxDiff},
            {QStringLiteral("message"), QStringLiteral("%1 pixels differ by more than 3 levels (at most %2 allowed), "
                                                       "largest difference %3")
                                            .arg(differing).arg(allowed).arg(maxDiff)}};
}

QVariantMap PixelHelper::compareItem(QQuickItem *item, const QString &scene)
{
    if (!item || !item->window())
        return {{QStringLiteral("ok"), false}, {QStringLiteral("message"), QStringLiteral("no item in a window")}};
    const QImage window = item->window()->grabWindow();
    const qreal dpr = item->window()->effectiveDevicePixelRatio();
    const QRectF area = item->mapRectToScene(item->boundingRect());
    const QRect pixels(qRound(area.x() * dpr), qRound(area.y() * dpr), qRound(area.width() * dpr),
                       qRound(area.height() * dpr));
    const QImage shown = window.copy(pixels);
    QVariantMap result = compare(shown, reference(scene, pixels.size()));
    if (!result.value(QStringLiteral("ok")).toBool()) {
        shown.save(tempPath(QStringLiteral("shown-%1.png").arg(scene)));
        reference(scene, pixels.size()).save(tempPath(QStringLiteral("expected-%1.png").arg(scene)));
    }
    return result;
}

QVariantMap PixelHelper::compareFile(const QString &path, const QString &scene)
{
    const QImage saved(path);
    if (saved.isNull())
        return {{QStringLiteral("ok"), false}, {QStringLiteral("message"), QStringLiteral("cannot read ") + path}};
    return compare(saved, reference(scene, saved.size()));
}

QString PixelHelper::tempPath(const QString &name) const
{
    return QDir::temp().filePath(QStringLiteral("mmpi-tst-qml-%1-%2").arg(QCoreApplication::applicationPid()).arg(name));
}

QVariantMap PixelHelper::measureFrameRate(QQuickItem *item, int frames, int primitives)
{
    auto *canvas = qobject_cast<mmpi::QuickCanvas *>(item);
    if (!canvas)
        return {{QStringLiteral("allShown"), false}};
    bool allShown = true;
    QElapsedTimer timer;
    timer.start();
    for (int f = 0; f < frames && allShown; ++f) {
        const int shownBefore = canvas->framesShown();
        canvas->clear(QColor(0x10, 0x10, 0x18));
        canvas->setBrush(QColor(0x30, 0x90, 0xd0));
        for (int i = 0; i < primitives; ++i) {
            const int x = (i * 37 + f * 5) % 600;
            const int y = (i * 53 + f * 3) % 440;
            switch (i % 3) {
            case 0:
                canvas->setPen(QColor::fromHsv((i * 7) % 360, 200, 240), 2);
                canvas->line(x, y, x + 30, y + 20);
                break;
            case 1: canvas->fillRect(x, y, 16, 12); break;
            default: canvas->ellipse(x, y, 14, 14); break;
            }
        }
        canvas->endFrame();
        allShown = QTest::qWaitFor([&] { return canvas->framesShown() > shownBefore; }, 5000);
    }
    const double seconds = timer.nsecsElapsed() / 1e9;
    return {{QStringLiteral("frames"), frames},
            {QStringLiteral("allShown"), allShown},
            {QStringLiteral("seconds"), seconds},
            {QStringLiteral("fps"), frames / seconds}};
}
