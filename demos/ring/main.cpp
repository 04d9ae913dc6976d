// mmpi-ring: a token passed around every rank of a world, with a table of who
// got it and when. Run it with mmpirun: `mmpirun -n 4 mmpi-ring`.
#include "tokenring.h"

#include <mmpi/world/world.h>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>

#include <cstdio>

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    app.setApplicationName(QStringLiteral("mmpi-ring"));
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Passes a token around every rank of an MMPI world and prints who got it when.\n"
        "Start it with mmpirun, e.g.: mmpirun -n 4 --transport tcp mmpi-ring --rounds 3"));
    parser.addHelpOption();
    QCommandLineOption roundsOption(QStringLiteral("rounds"), QStringLiteral("Rounds of the ring (default 3)."),
                                    QStringLiteral("n"), QStringLiteral("3"));
    parser.addOption(roundsOption);
    parser.process(app);

    QTextStream out(stdout);
    QTextStream err(stderr);
    bool ok = false;
    const int rounds = parser.value(roundsOption).toInt(&ok);
    if (!ok || rounds < 1 || rounds > 1000) {
        err << "mmpi-ring: --rounds must be 1..1000\n";
        return 2;
    }
    const auto config = mmpi::WorldConfig::fromEnvironment();
    if (!config) {
        err << "mmpi-ring: " << config.error().message << "\n"
            << "Start it with mmpirun, e.g.: mmpirun -n 4 mmpi-ring\n";
        return 2;
    }

    mmpi::World world;
    mmpi::TokenRing ring(&world, rounds, out);
    QElapsedTimer clock;
    clock.start();
    int status = 0;
    QObject::connect(&world, &mmpi::World::formed, &ring, [&] {
        if (world.rank() == 0)
            out << QStringLiteral("World of %1 node(s) over %2 formed in %3 ms\n")
                       .arg(world.size())
                       .arg(config->transport)
                       .arg(clock.elapsed());
        out.flush();
        ring.start();
    });
    QObject::connect(&world, &mmpi::World::errorOccurred, &app, [&](const mmpi::Error &error) {
        err << "mmpi-ring: " << error.toString() << "\n";
        err.flush();
        app.exit(1);
    });
    QObject::connect(&world, &mmpi::World::nodeLost, &app, [&](int rank, mmpi::World::FailureClass, const mmpi::Error &reason) {
        err << "mmpi-ring: lost rank " << rank << ": " << reason.message << "\n";
        err.flush();
        app.exit(3);
    });
    QObject::connect(&ring, &mmpi::TokenRing::failed, &app, [&](const QString &reason) {
        err << "mmpi-ring: " << reason << "\n";
        status = 1;
        world.close();
    });
    QObject::connect(&ring, &mmpi::TokenRing::finished, &world, &mmpi::World::close);
    QObject::connect(&world, &mmpi::World::stateChanged, &app, [&](mmpi::World::State state) {
        if (state == mmpi::World::State::Closed)
            app.exit(status);
    });
    world.form(*config);
    return app.exec();
}
