// mmpi-game: light cycles for 2 to 8 players, one per device. By default a
// window per device (`mmpirun -n 3 mmpi-game`): a lobby until every player is
// here, then the arena, steered with the arrows, WASD, swipes or buttons.
// Headless with bots (`mmpirun -n 4 mmpi-game --bots --ticks 600`), every
// device printing the state's hash so that anyone can see they agree; a
// player whose device goes out of range is frozen until it is back, one whose
// app ends is removed and the game goes on (docs/guide/demos.md).
#include "gamecontroller.h"
#include "gamesession.h"
#include "headless.h"

#include <mmpi/ft/faulttolerance.h>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQuickWindow>

#include <cstdio>
#include <cstring>
#include <memory>

using namespace mmpi;

namespace {

struct Settings
{
    bool bots = false;
    bool gui = false;
    bool ticksSet = false;
    qint64 ticks = 600;
    int tickMs = 50;
    qint64 hashEvery = 50;
    QString screenshot;
};

// Reads the command line; nullopt after printing why (exit code in `status`).
std::optional<Settings> parse(const QCoreApplication &app, int &status)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Light cycles across every node of an MMPI world."));
    parser.addHelpOption();
    parser.addOption({QStringLiteral("bots"), QStringLiteral("Every player steers itself (headless unless --gui).")});
    parser.addOption({QStringLiteral("gui"), QStringLiteral("With --bots: show the bots playing in a window.")});
    parser.addOption({QStringLiteral("ticks"), QStringLiteral("End after N ticks (0: endless; default 600 with --bots, "
                                                              "else endless)."),
                      QStringLiteral("N"), QStringLiteral("600")});
    parser.addOption({QStringLiteral("tick-ms"), QStringLiteral("Milliseconds per tick."), QStringLiteral("MS"),
                      QStringLiteral("50")});
    parser.addOption({QStringLiteral("hash-every"), QStringLiteral("Print the state's hash every N ticks."),
                      QStringLiteral("N"), QStringLiteral("50")});
    parser.addOption({QStringLiteral("screenshot"), QStringLiteral("Window mode: rank 0 saves its window as FILE "
                                                                   "just before the last tick, and every node ends."),
                      QStringLiteral("FILE")});
    parser.process(app);
    Settings s;
    bool ok = true;
    s.bots = parser.isSet(QStringLiteral("bots"));
    s.gui = !s.bots || parser.isSet(QStringLiteral("gui"));
    s.ticksSet = parser.isSet(QStringLiteral("ticks"));
    s.ticks = parser.value(QStringLiteral("ticks")).toLongLong(&ok);
    s.tickMs = ok ? parser.value(QStringLiteral("tick-ms")).toInt(&ok) : 0;
    s.hashEvery = ok ? parser.value(QStringLiteral("hash-every")).toLongLong(&ok) : 0;
    s.screenshot = parser.value(QStringLiteral("screenshot"));
    if (!ok || s.ticks < 0 || s.tickMs < 1 || s.hashEvery < 0) {
        std::fprintf(stderr, "mmpi-game: --ticks, --tick-ms and --hash-every take whole numbers (tick-ms >= 1)\n");
        status = 2;
        return std::nullopt;
    }
    if (!s.screenshot.isEmpty() && (!s.gui || s.ticks == 0 || (!s.ticksSet && !s.bots))) {
        std::fprintf(stderr, "mmpi-game: --screenshot needs a window and --ticks N (N > 0)\n");
        status = 2;
        return std::nullopt;
    }
    if (s.gui && !s.ticksSet && !s.bots)
        s.ticks = 0; // people play until they close the window
    if (!WorldConfig::isLaunched()) {
        std::fprintf(stderr, "mmpi-game: start it with mmpirun, e.g. mmpirun -n 3 mmpi-game (or --bots)\n");
        status = 2;
        return std::nullopt;
    }
    return s;
}

// Headless play: unchanged since the first version, tests/demos/tst_game.cpp
// reads its output.
int runHeadless(QCoreApplication &app, const Settings &s)
{
    auto config = WorldConfig::fromEnvironment();
    World world;
    auto comm = Communicator::world(world);
    if (!config || !comm) {
        std::fprintf(stderr, "mmpi-game: %s\n", qPrintable((config ? comm.error() : config.error()).toString()));
        return 1;
    }
    world.form(*config);
    if (auto formed = world.waitForFormed(); !formed) {
        std::fprintf(stderr, "mmpi-game: %s\n", qPrintable(formed.error().toString()));
        return 1;
    }
    FaultTolerance ft(&world);
    for (auto failureClass : {World::FailureClass::Normal, World::FailureClass::Range, World::FailureClass::NodeTerm})
        ft.setPolicy(failureClass, Policy::Shrink);
    if (auto protectedOk = ft.protect(*comm).wait(); !protectedOk) {
        std::fprintf(stderr, "mmpi-game: %s\n", qPrintable(protectedOk.error().toString()));
        return 1;
    }
    game::GameSession session(&world, &ft, {std::chrono::milliseconds(s.tickMs), s.ticks, true});
    game::reportHeadless(&session, s.hashEvery);
    int status = 0;
    QObject::connect(&session, &game::GameSession::finished, &app, [&] {
        world.closeAndWait();
        app.quit();
    });
    QObject::connect(&session, &game::GameSession::failed, &app, [&](const Error &error) {
        std::fprintf(stderr, "mmpi-game: %s\n", qPrintable(error.toString()));
        status = 1;
        app.quit();
    });
    std::printf("event=ready player=%d players=%d\n", world.rank(), world.size());
    std::fflush(stdout);
    session.start();
    const int code = app.exec();
    return status != 0 ? status : code;
}

// Rank 0 saves its window just before the last tick (the game-over overlay
// is not in the picture).
void takeScreenshot(game::GameController *controller, QQuickWindow *window, const Settings &s, int &status)
{
    const qint64 at = std::max<qint64>(1, s.ticks - 1);
    QObject::connect(controller, &game::GameController::ticked, window, [=, &status](qint64 tick) {
        if (tick != at || controller->player() != 0)
            return;
        const QImage image = window->grabWindow();
        if (image.isNull() || !image.save(s.screenshot)) {
            std::fprintf(stderr, "mmpi-game: could not save the screenshot as %s\n", qPrintable(s.screenshot));
            status = 1;
            return;
        }
        std::printf("event=screenshot tick=%lld file=%s\n", tick, qPrintable(s.screenshot));
        std::fflush(stdout);
    });
}

int runWindow(QGuiApplication &app, const Settings &s)
{
    auto config = WorldConfig::fromEnvironment();
    if (!config) {
        std::fprintf(stderr, "mmpi-game: %s\n", qPrintable(config.error().toString()));
        return 1;
    }
    game::registerQmlTypes();
    game::GameController controller;
    QQmlApplicationEngine engine;
    engine.setInitialProperties({{QStringLiteral("controller"), QVariant::fromValue(&controller)}});
    engine.load(QUrl(QStringLiteral("qrc:/mmpi-game/Main.qml")));
    auto *window = engine.rootObjects().isEmpty() ? nullptr : qobject_cast<QQuickWindow *>(engine.rootObjects().first());
    if (!window) {
        std::fprintf(stderr, "mmpi-game: the window could not be made (see the QML messages above)\n");
        return 1;
    }
    // Several windows on one screen (mmpirun -n 3): cascade them by rank.
    window->setPosition(40 + 48 * config->rank, 40 + 48 * config->rank);
    int status = 0;
    app.setQuitOnLastWindowClosed(false);
    // Closing the window ends this player's game (see GameController::leave).
    QObject::connect(&app, &QGuiApplication::lastWindowClosed, &controller, &game::GameController::leave);
    QObject::connect(&controller, &game::GameController::left, &app, &QCoreApplication::quit);
    QObject::connect(&controller, &game::GameController::phaseChanged, &app, [&] {
        if (controller.phase() == game::GameController::Phase::Failed) {
            std::fprintf(stderr, "mmpi-game: %s\n", qPrintable(controller.error().toString()));
            status = 1;
            if (!s.screenshot.isEmpty())
                app.quit(); // unattended: nobody will close the window
        }
    });
    // Bots in windows print what headless bots print, for a test to compare.
    if (s.bots) {
        QObject::connect(&controller, &game::GameController::phaseChanged, &controller, [&] {
            if (controller.phase() == game::GameController::Phase::Playing)
                game::reportHeadless(controller.session(), s.hashEvery);
        });
    }
    if (!s.screenshot.isEmpty()) {
        takeScreenshot(&controller, window, s, status);
        QObject::connect(&controller, &game::GameController::phaseChanged, &controller, [&] {
            if (controller.phase() == game::GameController::Phase::Finished)
                controller.leave();
        });
    }
    controller.start(*config, {std::chrono::milliseconds(s.tickMs), s.ticks, s.bots});
    const int code = app.exec();
    return status != 0 ? status : code;
}

// Headless needs no display: the kind of application is chosen before the
// command line is parsed.
bool wantsWindow(int argc, char *argv[])
{
    bool bots = false, gui = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--bots"))
            bots = true;
        else if (!std::strcmp(argv[i], "--gui"))
            gui = true;
        else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help-all"))
            return false;
    }
    return !bots || gui;
}

} // namespace

int main(int argc, char *argv[])
{
    std::unique_ptr<QCoreApplication> app;
    const bool window = wantsWindow(argc, argv);
    if (window && !WorldConfig::isLaunched()) {
        // Before a display is opened: a clear word rather than a platform error.
        std::fprintf(stderr, "mmpi-game: start it with mmpirun, e.g. mmpirun -n 3 mmpi-game (or --bots)\n");
        return 2;
    }
    if (window)
        app = std::make_unique<QGuiApplication>(argc, argv);
    else
        app = std::make_unique<QCoreApplication>(argc, argv);
    app->setApplicationName(QStringLiteral("mmpi-game"));
    int status = 0;
    const auto settings = parse(*app, status);
    if (!settings)
        return status;
    if (!settings->gui)
        return runHeadless(*app, *settings);
    return runWindow(static_cast<QGuiApplication &>(*app), *settings);
}
