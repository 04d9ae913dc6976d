// canvasapp OUTDIR: joins the world mmpirun started, shows the root's
// picture in a ParallelCanvas and writes what the item shows to
// OUTDIR/canvas-<rank>.png; the exit status says whether that worked.
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQmlContext>
#include <QQuickWindow>

int main(int argc, char *argv[])
{
    QGuiApplication app(argc, argv);
    if (app.arguments().size() != 2) {
        qCritical("usage: canvasapp OUTDIR");
        return 2;
    }
    // Pixels that do not depend on a GPU: the software scene graph.
    QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
    QQmlApplicationEngine engine;
    engine.rootContext()->setContextProperty(QStringLiteral("outDir"), app.arguments().at(1));
    engine.load(QUrl(QStringLiteral("qrc:/CanvasApp/Main.qml")));
    if (engine.rootObjects().isEmpty())
        return 1;
    return app.exec();
}
