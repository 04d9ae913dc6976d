// Test fixture: a formed world of `size` ranks in this process (one World,
// with its progress thread, per rank) and the world communicator of each.
#pragma once

#include "worldharness.h"

#include <mmpi/comm/communicator.h>
#include <mmpi/world/world.h>

#include <QDeadlineTimer>
#include <QTest>

#include <functional>
#include <memory>
#include <vector>

namespace mmpi::test {

class CommWorld
{
public:
    // `tweak` adjusts each rank's configuration before it forms.
    CommWorld(const QString &transport, int size, const std::function<void(WorldConfig &)> &tweak = {})
        : m_harness(transport, WorldConfig::Mode::Launched), m_tweak(tweak)
    {
        for (int r = 0; r < size; ++r) {
            auto world = std::make_unique<World>();
            m_comms.push_back(*Communicator::world(*world));
            WorldConfig config = m_harness.config(r, size);
            if (tweak)
                tweak(config);
            world->form(config);
            m_worlds.push_back(std::move(world));
        }
        for (auto &w : m_worlds)
            m_formed = m_formed && w->waitForFormed().hasValue();
    }
    ~CommWorld()
    {
        for (auto &w : m_worlds)
            if (w)
                w->close();
        QDeadlineTimer deadline(10000);
        for (auto &w : m_worlds)
            while (w && w->state() != World::State::Closed && !deadline.hasExpired())
                QTest::qWait(5);
    }
    bool formed() const { return m_formed; }
    const Communicator &operator[](int rank) const { return m_comms.at(size_t(rank)); }
    World *world(int rank) const { return m_worlds.at(size_t(rank)).get(); }
    int size() const { return int(m_comms.size()); }
    // Destroy a world without a goodbye: its peers see it lost.
    void kill(int rank) { m_worlds.at(size_t(rank)).reset(); }
    // A new node takes `rank` (killed before) in the formed world, as
    // REBUILD's replacements do (WorldConfig::rejoin). True once it formed.
    bool replace(int rank)
    {
        return startIn(rank, [this, rank](WorldConfig &config) {
            config.rejoin = true;
            if (rank == 0) // no root to join through: any survivor will do
                for (const auto &member : m_worlds)
                    if (member)
                        config.rootAddress = member->nodes().at(member->rank()).address;
        });
    }

    // A spare (a Discovered node no root took) starts advertising; the
    // survivors' FaultTolerance invites it to `rank` (killed before). True
    // once it formed in that rank.
    bool takeSpare(int rank)
    {
        return startIn(rank, [](WorldConfig &config) {
            config.mode = WorldConfig::Mode::Discovered;
            config.rank = NoRank;
            config.rootAddress.clear();
        });
    }

private:
    // A new World in `rank`'s place, with `adjust`ed configuration; true once
    // it formed in that rank.
    bool startIn(int rank, const std::function<void(WorldConfig &)> &adjust)
    {
        auto world = std::make_unique<World>();
        m_comms.at(size_t(rank)) = *Communicator::world(*world);
        WorldConfig config = m_harness.config(rank, size());
        if (m_tweak)
            m_tweak(config);
        adjust(config);
        world->form(config);
        m_worlds.at(size_t(rank)) = std::move(world);
        const World &started = *m_worlds.at(size_t(rank));
        return m_worlds.at(size_t(rank))->waitForFormed().hasValue() && started.rank() == rank;
    }

    WorldHarness m_harness;
    std::function<void(WorldConfig &)> m_tweak;
    std::vector<std::unique_ptr<World>> m_worlds;
    std::vector<Communicator> m_comms;
    bool m_formed = true;
};

} // namespace mmpi::test
