// The GUI mode: a QML window per node over the shared render, plus the bits
// of scripting tests and the docs' screenshot need (a wheel turned on one
// node, saving and quitting after N renders).
#include "options.h"
#include "pictureitem.h"

#include <QCoreApplication>
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQmlContext>
#include <QQuickWindow>
#include <QWheelEvent>
#include <QtQml/qqml.h>

#include <cstdio>

namespace mmpi::demo {

namespace {

// The wheel goes through the window like a user's, so the QML handlers and
// the item's mapping are what is tested.
void turnWheel(QQuickWindow *window, PictureItem *picture, QPointF at, int steps)
{
    const QRectF r = picture->pictureRect();
    const QPointF local(r.x() + at.x() * r.width(), r.y() + at.y() * r.height());
    const QPointF scene = picture->mapToScene(local);
    QWheelEvent event(scene, window->mapToGlobal(scene.toPoint()), QPoint(), QPoint(0, 120 * steps), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(window, &event);
}

bool save(const QImage &image, const QString &pattern, int rank)
{
    if (pattern.isEmpty())
        return true;
    const QString path = perNodePath(pattern, rank);
    if (image.save(path, "PNG"))
        return true;
    std::fprintf(stderr, "mmpi-mandelbrot: cannot write %s\n", qPrintable(path));
    return false;
}

} // namespace

int runGui(const Options &o)
{
    // Offscreen pictures must not depend on a GPU: the software scene graph
    // draws the same pixels everywhere.
    if (QGuiApplication::platformName() == QLatin1String("offscreen"))
        QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
    SharedWorld shared;
    if (!shared.form())
        return 1;
    SharedRender render(o.view, o.band, o.tint, shared.network());
    qmlRegisterType<PictureItem>("Mandelbrot", 1, 0, "MandelbrotPicture");
    qmlRegisterUncreatableType<SharedRender>("Mandelbrot", 1, 0, "SharedRender",
                                             QStringLiteral("the app makes the render"));
    QQmlApplicationEngine engine;
    engine.rootContext()->setContextProperty(QStringLiteral("mandelbrot"), &render);
    engine.load(QUrl(QStringLiteral("qrc:/mandelbrot/Main.qml")));
    auto *window = engine.rootObjects().isEmpty() ? nullptr : qobject_cast<QQuickWindow *>(engine.rootObjects().first());
    auto *picture = window ? window->findChild<PictureItem *>(QStringLiteral("picture")) : nullptr;
    if (!picture) {
        std::fprintf(stderr, "mmpi-mandelbrot: the window's QML did not load\n");
        return 1;
    }
    int status = 0;
    int completed = 0;
    const auto saveAll = [&] {
        if (!save(picture->image(), o.canvasOut, render.rank()))
            status = 1;
        if (!o.screenshot.isEmpty() && !save(window->grabWindow(), o.screenshot, render.rank()))
            status = 1;
    };
    QObject::connect(&render, &SharedRender::renderComplete, [&](quint32 generation) {
        ++completed;
        if (render.isRoot())
            std::printf("render %u complete: view %.17g %.17g %.17g\n", generation, render.view().centerX,
                        render.view().centerY, render.view().spanX);
        std::fflush(stdout);
        if (completed == 1 && o.scriptWheelSteps != 0 && render.rank() == o.scriptRank % render.nodes())
            turnWheel(window, picture, o.scriptWheelAt, o.scriptWheelSteps);
        if (render.isRoot() && o.exitAfter > 0 && completed == o.exitAfter)
            render.finishTogether();
    });
    QObject::connect(&render, &SharedRender::failed, [&](const QString &reason) {
        std::fprintf(stderr, "mmpi-mandelbrot: %s\n", qPrintable(reason));
    });
    QObject::connect(&render, &SharedRender::finishing, saveAll);
    QObject::connect(&render, &SharedRender::finishedTogether, [&] {
        if (render.isRoot())
            saveAll();
        QCoreApplication::quit();
    });
    render.start();
    QCoreApplication::exec();
    return status;
}

} // namespace mmpi::demo
