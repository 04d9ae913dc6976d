#include "options.h"

#include <mmpi/world/worldconfig.h>

#include <QCoroTask>

#include <cstdio>

namespace mmpi::demo {

QString perNodePath(const QString &pattern, int rank)
{
    QString path = pattern;
    return path.replace(QStringLiteral("{rank}"), QString::number(rank));
}

namespace {

// A struct, not a Result: QCoro::waitFor needs a default-constructible value.
struct Duplicate
{
    Communicator comm;
    Error error;
};

QCoro::Task<Duplicate> duplicate(Communicator comm)
{
    auto made = co_await comm.dup();
    if (!made)
        co_return Duplicate{{}, made.error()};
    co_return Duplicate{*made, {}};
}

} // namespace

SharedWorld::SharedWorld() = default;

SharedWorld::~SharedWorld()
{
    if (m_world)
        m_world->closeAndWait();
}

bool SharedWorld::form()
{
    if (!WorldConfig::isLaunched())
        return true;
    const auto config = WorldConfig::fromEnvironment();
    if (!config) {
        std::fprintf(stderr, "mmpi-mandelbrot: %s\n", qPrintable(config.error().message));
        return false;
    }
    m_world = std::make_unique<World>();
    const auto comm = Communicator::world(*m_world);
    m_world->form(*config);
    if (auto formed = m_world->waitForFormed(); !formed) {
        std::fprintf(stderr, "mmpi-mandelbrot: %s\n", qPrintable(formed.error().toString()));
        return false;
    }
    if (!comm) {
        std::fprintf(stderr, "mmpi-mandelbrot: %s\n", qPrintable(comm.error().toString()));
        return false;
    }
    // Same order on every node: the ids of dup() are agreed collectively.
    SharedRender::Network network;
    network.world = m_world.get();
    for (Communicator *target : {&network.control, &network.pool, &network.canvas}) {
        // Awaited in a local event loop: wait() would block a GUI thread.
        const Duplicate made = QCoro::waitFor(duplicate(*comm));
        if (made.error.isError()) {
            std::fprintf(stderr, "mmpi-mandelbrot: %s\n", qPrintable(made.error.toString()));
            return false;
        }
        *target = made.comm;
    }
    m_network = network;
    return true;
}

} // namespace mmpi::demo
