// mmpi-game: light cycles for 2 to 8 players, one per device. By default a
// window per device (`mmpirun -n 3 mmpi-game`): a lobby until every player is
// here, then the arena, steered with the arrows, WASD, swipes or buttons.
// Headless with bots (`mmpirun -n 4 mmpi-game --bots --ticks 600`), every
// device printing the state's hash so that anyone can see they agree.
// Across devices without mmpirun, discovery: one device hosts
// (`mmpi-game --transport tcp --host --players 3`), the others list the games
// nearby in their lobby and join one (`mmpi-game --transport tcp --choose`). A
// player whose device goes out of range is frozen until it is back, one whose
// app ends is removed and the game goes on (docs/guide/demos.md).
#include "gamecontroller.h"
#include "gamesession.h"
#include "headless.h"

#include <mmpi/ft/faulttolerance.h>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QGuiApplication>
#include <QJsonDocument>
#include <QJsonObject>
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
    // The world: mmpirun's, or one found by discovery (--transport).
    WorldConfig world;
    bool choose = false;
};

// People gather round a lobby for minutes, not the 30 s a program's formation waits.
constexpr auto LobbyWait = std::chrono::minutes(5);

// The options that make sense with --transport only.
constexpr const char *DiscoveryOnly[] = {"host", "choose", "players", "transport-options", "game-name"};

void addDiscoveryOptions(QCommandLineParser &parser)
{
    parser.addOption({QStringLiteral("transport"), QStringLiteral("Without mmpirun: find the other players over this "
                                                                  "transport (tcp: the local network)."),
                      QStringLiteral("NAME")});
    parser.addOption({QStringLiteral("transport-options"), QStringLiteral("The transport's options, a JSON object."),
                      QStringLiteral("JSON")});
    parser.addOption({QStringLiteral("host"), QStringLiteral("This device hosts the game; the others join it.")});
    parser.addOption({QStringLiteral("choose"), QStringLiteral("The lobby lists the games nearby; pick one to join "
                                                               "(with --bots the first one listed).")});
    parser.addOption({QStringLiteral("players"), QStringLiteral("With --host: how many players the game waits for "
                                                                "(2..8)."),
                      QStringLiteral("N"), QStringLiteral("2")});
    parser.addOption({QStringLiteral("game-name"), QStringLiteral("The game's name: the host's, or the one to join "
                                                                  "without --choose."),
                      QStringLiteral("NAME"), QStringLiteral("light-cycles")});
    parser.addOption({QStringLiteral("key"), QStringLiteral("The secret every player of the game shares."),
                      QStringLiteral("TEXT"), QStringLiteral("mmpi-game")});
}

// The discovered world of --transport.
Result<WorldConfig> discoveryConfig(const QCommandLineParser &parser)
{
    WorldConfig config;
    config.mode = WorldConfig::Mode::Discovered;
    config.transport = parser.value(QStringLiteral("transport"));
    const QJsonDocument json = QJsonDocument::fromJson(parser.value(QStringLiteral("transport-options")).toUtf8());
    if (parser.isSet(QStringLiteral("transport-options")) && !json.isObject())
        return Error(ErrorCode::BadConfiguration, QStringLiteral("--transport-options takes a JSON object"));
    config.transportOptions = json.object().toVariantMap();
    config.worldName = parser.value(QStringLiteral("game-name"));
    config.worldKey = parser.value(QStringLiteral("key")).toUtf8();
    const bool host = parser.isSet(QStringLiteral("host"));
    bool ok = false;
    const int players = parser.value(QStringLiteral("players")).toInt(&ok);
    if (!ok || players < 2 || players > 8)
        return Error(ErrorCode::BadConfiguration, QStringLiteral("--players takes 2..8"));
    if (host && parser.isSet(QStringLiteral("choose")))
        return Error(ErrorCode::BadConfiguration, QStringLiteral("--choose is for a device that joins, not the --host"));
    if (!host && parser.isSet(QStringLiteral("players")))
        return Error(ErrorCode::BadConfiguration, QStringLiteral("--players is the host's to say: add --host"));
    config.size = players;
    config.rank = host ? 0 : NoRank;
    config.formationTimeout = LobbyWait;
    if (auto valid = config.validate(); !valid)
        return valid.error();
    return config;
}

// Why this process cannot find its world, `isSet` telling which options it
// was given; "" if it can.
template<typename IsSet>
QString worldProblem(IsSet isSet)
{
    if (isSet("transport"))
        return {};
    for (const char *option : DiscoveryOnly)
        if (isSet(option))
            return QStringLiteral("--%1 is for discovery: add --transport NAME (tcp)").arg(QLatin1String(option));
    if (!WorldConfig::isLaunched())
        return QStringLiteral("start it with mmpirun (mmpirun -n 3 mmpi-game), or across devices with "
                              "--transport tcp and --host on one, --choose on the others");
    return {};
}

// mmpirun's world, or the discovered one of --transport; false after printing why.
bool worldOf(const QCommandLineParser &parser, Settings &s)
{
    const auto refuse = [](const QString &why) {
        std::fprintf(stderr, "mmpi-game: %s\n", qPrintable(why));
        return false;
    };
    if (const QString problem = worldProblem([&](const char *o) { return parser.isSet(QString::fromLatin1(o)); });
        !problem.isEmpty())
        return refuse(problem);
    if (!parser.isSet(QStringLiteral("transport"))) {
        auto launched = WorldConfig::fromEnvironment();
        if (!launched)
            return refuse(launched.error().toString());
        s.world = *launched;
        return true;
    }
    auto config = discoveryConfig(parser);
    if (!config)
        return refuse(config.error().message);
    s.world = *config;
    s.choose = parser.isSet(QStringLiteral("choose"));
    if (s.choose && !s.gui)
        return refuse(QStringLiteral("--choose lists the games in the lobby's window: add --gui or drop --bots"));
    return true;
}

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
    addDiscoveryOptions(parser);
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
    if (!worldOf(parser, s)) {
        status = 2;
        return std::nullopt;
    }
    return s;
}

// Headless play: unchanged since the first version, tests/demos/tst_game.cpp
// reads its output.
int runHeadless(QCoreApplication &app, const Settings &s)
{
    World world;
    auto comm = Communicator::world(world);
    if (!comm) {
        std::fprintf(stderr, "mmpi-game: %s\n", qPrintable(comm.error().toString()));
        return 1;
    }
    world.form(s.world);
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

// Bots choose as a test would: the first game listed, saying which.
void joinFirstGameListed(game::GameController *controller)
{
    QObject::connect(controller->gamesNearby(), &QAbstractItemModel::rowsInserted, controller, [controller] {
        if (controller->phase() != game::GameController::Phase::Choosing)
            return;
        const QVariantMap game = controller->gamesNearby()->get(0);
        std::printf("event=joining game=%s players=%d\n", qPrintable(game.value(QStringLiteral("name")).toString()),
                    game.value(QStringLiteral("wanted")).toInt());
        std::fflush(stdout);
        controller->join(0);
    });
}

int runWindow(QGuiApplication &app, const Settings &s)
{
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
    const int cascade = std::max(0, s.world.rank);
    window->setPosition(40 + 48 * cascade, 40 + 48 * cascade);
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
    const game::GameSession::Options options{std::chrono::milliseconds(s.tickMs), s.ticks, s.bots};
    if (s.choose) {
        if (s.bots)
            joinFirstGameListed(&controller);
        controller.choose(s.world, options);
    } else {
        controller.start(s.world, options);
    }
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

bool hasOption(int argc, char *argv[], const char *name)
{
    const std::size_t length = std::strlen(name);
    for (int i = 1; i < argc; ++i)
        if (!std::strncmp(argv[i], "--", 2) && !std::strncmp(argv[i] + 2, name, length)
            && (argv[i][2 + length] == '\0' || argv[i][2 + length] == '='))
            return true;
    return false;
}

} // namespace

int main(int argc, char *argv[])
{
    std::unique_ptr<QCoreApplication> app;
    const bool window = wantsWindow(argc, argv);
    // Before a display is opened: a clear word rather than a platform error.
    const auto given = [&](const char *option) { return hasOption(argc, argv, option); };
    if (const QString problem = window ? worldProblem(given) : QString(); !problem.isEmpty()) {
        std::fprintf(stderr, "mmpi-game: %s\n", qPrintable(problem));
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
