// What the test apps that run under mmpirun share: a line on stdout at once,
// joining the world mmpirun launched, and leaving it cleanly.
#pragma once

#include <mmpi/comm/communicator.h>
#include <mmpi/world/world.h>

#include <QEventLoop>
#include <QTimer>

#include <cstdio>

namespace mmpi::test {

inline void say(const QString &line)
{
    std::printf("%s\n", qPrintable(line));
    std::fflush(stdout);
}

// Forms `world` from mmpirun's environment; its world communicator.
inline Result<Communicator> joinLaunchedWorld(World &world)
{
    const auto config = WorldConfig::fromEnvironment();
    if (!config)
        return config.error();
    auto comm = Communicator::world(world);
    if (!comm)
        return comm.error();
    world.form(*config);
    if (auto formed = world.waitForFormed(); !formed)
        return formed.error();
    return *comm;
}

// Says goodbye and waits (at most 5 s) until the world is closed.
inline void leaveWorld(World &world)
{
    world.close();
    QEventLoop closing;
    QObject::connect(&world, &World::stateChanged, &closing, [&](World::State s) {
        if (s == World::State::Closed)
            closing.quit();
    });
    QTimer::singleShot(5000, &closing, &QEventLoop::quit);
    if (world.state() != World::State::Closed)
        closing.exec();
}

} // namespace mmpi::test
