// mmpi-game: light cycles for 2 to 8 players, one per device. Headless with
// bots (`mmpirun -n 4 mmpi-game --bots --ticks 600`), every device printing
// the state's hash so that anyone can see they agree; a player whose device
// goes out of range is frozen until it is back, one whose app ends is
// removed and the game goes on (docs/demos.md).
#include "gamesession.h"
#include "headless.h"

#include <mmpi/ft/faulttolerance.h>

#include <QCommandLineParser>
#include <QCoreApplication>

#include <cstdio>

using namespace mmpi;

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    app.setApplicationName(QStringLiteral("mmpi-game"));
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Light cycles across every node of an MMPI world."));
    parser.addHelpOption();
    parser.addOption({QStringLiteral("bots"), QStringLiteral("Every player steers itself (headless play).")});
    parser.addOption({QStringLiteral("ticks"), QStringLiteral("End after N ticks (0: endless)."), QStringLiteral("N"),
                      QStringLiteral("600")});
    parser.addOption({QStringLiteral("tick-ms"), QStringLiteral("Milliseconds per tick."), QStringLiteral("MS"),
                      QStringLiteral("50")});
    parser.addOption({QStringLiteral("hash-every"), QStringLiteral("Print the state's hash every N ticks."),
                      QStringLiteral("N"), QStringLiteral("50")});
    parser.process(app);
    bool ok = true;
    const qint64 ticks = parser.value(QStringLiteral("ticks")).toLongLong(&ok);
    const int tickMs = ok ? parser.value(QStringLiteral("tick-ms")).toInt(&ok) : 0;
    const qint64 hashEvery = ok ? parser.value(QStringLiteral("hash-every")).toLongLong(&ok) : 0;
    if (!ok || ticks < 0 || tickMs < 1 || hashEvery < 0) {
        std::fprintf(stderr, "mmpi-game: --ticks, --tick-ms and --hash-every take whole numbers (tick-ms >= 1)\n");
        return 2;
    }
    if (!parser.isSet(QStringLiteral("bots"))) {
        std::fprintf(stderr, "mmpi-game: this build plays headless only: add --bots\n");
        return 2;
    }
    if (!WorldConfig::isLaunched()) {
        std::fprintf(stderr, "mmpi-game: start it with mmpirun, e.g. mmpirun -n 4 mmpi-game --bots\n");
        return 2;
    }
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
    game::GameSession session(&world, &ft, {std::chrono::milliseconds(tickMs), ticks, true});
    game::reportHeadless(&session, hashEvery);
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
