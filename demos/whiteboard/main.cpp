// mmpi-whiteboard: a board every device of a world draws on together — each
// stroke goes out as MMPE frames while the finger moves and shows on every
// device; a device that opens the board late gets it replayed. Headless, it
// plays a script and saves the board, so tests can compare the devices'
// boards (docs/guide/demos.md).
#include "whiteboardhost.h"
#include "whiteboardoptions.h"

#include <mmpi/world/worldconfig.h>

#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQmlContext>
#include <QQuickWindow>

#include <cstdio>

using namespace mmpi::whiteboard;

int main(int argc, char *argv[])
{
    QGuiApplication app(argc, argv);
    app.setApplicationName(QStringLiteral("mmpi-whiteboard"));
    app.setApplicationVersion(QStringLiteral(MMPI_VERSION));
    const QStringList args = app.arguments();
    if (args.contains(QStringLiteral("--help")) || args.contains(QStringLiteral("-h"))) {
        std::fprintf(stdout, "%s", qPrintable(WhiteboardOptions::helpText()));
        return 0;
    }
    if (args.contains(QStringLiteral("--version")) || args.contains(QStringLiteral("-v"))) {
        std::fprintf(stdout, "mmpi-whiteboard %s\n", MMPI_VERSION);
        return 0;
    }
    auto options = WhiteboardOptions::parse(args);
    if (!options) {
        std::fprintf(stderr, "mmpi-whiteboard: %s (see --help)\n", qPrintable(options.error().message));
        return 2;
    }
    // Headless pictures must not depend on a GPU (or need one): the software
    // scene graph draws the same pixels everywhere.
    if (QGuiApplication::platformName() == QLatin1String("offscreen"))
        QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);

    WhiteboardHost host(*options, mmpi::WorldConfig::isLaunched());
    QQmlApplicationEngine engine;
    engine.rootContext()->setContextProperty(QStringLiteral("host"), &host);
    engine.load(QUrl(QStringLiteral("qrc:/Whiteboard/Main.qml")));
    if (engine.rootObjects().isEmpty()) {
        std::fprintf(stderr, "mmpi-whiteboard: the board's QML did not load\n");
        return 1;
    }
    return app.exec();
}
