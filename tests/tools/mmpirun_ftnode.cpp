// mmpirun_ftnode: a node for fault tests under mmpirun. It forms the world
// from the launch environment and then only listens, printing each
// failure-detector event with the time on the machine's monotonic clock
// (shared by every network namespace), so a test can relate them to when it
// cut a link:
//   event=formed rank=R size=N mono_ms=T
//   event=suspect peer=P mono_ms=T
//   event=alive peer=P mono_ms=T
//   event=lost peer=P mono_ms=T code=NodeLost reason=...
// Once every peer is gone (lost or left) it closes the world and exits 0;
// --max-ms M makes it exit 3 if that has not happened M ms after starting.
#include <mmpi/world/world.h>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QTimer>

#include <chrono>
#include <cstdio>

namespace {

qint64 monotonicMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch()).count();
}

void say(const QString &line)
{
    std::printf("%s\n", qPrintable(line));
    std::fflush(stdout);
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    const QCommandLineOption maxMs(QStringLiteral("max-ms"), QStringLiteral("Give up after M ms."),
                                   QStringLiteral("M"), QStringLiteral("30000"));
    parser.addOption(maxMs);
    parser.process(app);

    const auto config = mmpi::WorldConfig::fromEnvironment();
    if (!config) {
        std::fprintf(stderr, "%s\n", qPrintable(config.error().toString()));
        return 2;
    }
    mmpi::World world;
    int gone = 0;
    const auto peerGone = [&] {
        if (++gone == world.size() - 1)
            world.close();
    };
    QObject::connect(&world, &mmpi::World::formed, [&] {
        say(QStringLiteral("event=formed rank=%1 size=%2 mono_ms=%3").arg(world.rank()).arg(world.size()).arg(monotonicMs()));
    });
    QObject::connect(&world, &mmpi::World::nodeSuspect, [&](int rank) {
        say(QStringLiteral("event=suspect peer=%1 mono_ms=%2").arg(rank).arg(monotonicMs()));
    });
    QObject::connect(&world, &mmpi::World::nodeAlive, [&](int rank) {
        say(QStringLiteral("event=alive peer=%1 mono_ms=%2").arg(rank).arg(monotonicMs()));
    });
    QObject::connect(&world, &mmpi::World::nodeUnreachable, [&](int rank, mmpi::World::FailureClass failureClass) {
        say(QStringLiteral("event=unreachable peer=%1 mono_ms=%2 class=%3")
                .arg(rank).arg(monotonicMs()).arg(QVariant::fromValue(failureClass).toString()));
    });
    QObject::connect(&world, &mmpi::World::nodeReturned, [&](int rank) {
        say(QStringLiteral("event=returned peer=%1 mono_ms=%2").arg(rank).arg(monotonicMs()));
    });
    QObject::connect(&world, &mmpi::World::nodeLost, [&](int rank, mmpi::World::FailureClass failureClass,
                                                         const mmpi::Error &reason) {
        say(QStringLiteral("event=lost peer=%1 mono_ms=%2 class=%3 code=%4 reason=%5")
                .arg(rank).arg(monotonicMs()).arg(QVariant::fromValue(failureClass).toString(),
                                                  mmpi::errorCodeName(reason.code), reason.message));
        peerGone();
    });
    QObject::connect(&world, &mmpi::World::nodeLeft, [&](int) { peerGone(); });
    QObject::connect(&world, &mmpi::World::errorOccurred, [&](const mmpi::Error &error) {
        std::fprintf(stderr, "%s\n", qPrintable(error.toString()));
        app.exit(1);
    });
    QObject::connect(&world, &mmpi::World::stateChanged, [&](mmpi::World::State state) {
        if (state == mmpi::World::State::Closed)
            app.exit(0);
    });
    QTimer::singleShot(parser.value(maxMs).toInt(), &app, [&] {
        std::fprintf(stderr, "gave up after %s ms\n", qPrintable(parser.value(maxMs)));
        app.exit(3);
    });
    world.form(*config);
    return app.exec();
}
