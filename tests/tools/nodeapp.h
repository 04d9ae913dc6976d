// What the test apps that run under mmpirun share: a line on stdout at once,
// and joining the world mmpirun launched.
#pragma once

#include <mmpi/comm/communicator.h>
#include <mmpi/world/world.h>

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

} // namespace mmpi::test
