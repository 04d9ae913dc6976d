// LinkTable: the link model this node decides its broadcasts with. It starts
// from the medium the transport names (World::expectedLink()) and takes what
// the world measured of its own traffic (World::linkQuality()): the latency
// from heartbeats (half the smallest recent round trip: a heartbeat queued
// behind a broadcast on a busy radio measures the queue, which the model
// adds itself), the rate from large messages draining from their links
// (LinkQuality::sendRate) or, before any has, from what the peers report of
// frames arriving (peerArrivalRate), each the median over the peers a
// broadcast sends to. The per-frame cost stays the medium's.
// No thread and no traffic of its own (no probes on a busy radio);
// setFixedModel() overrides it all. Thread-safe.
#pragma once

#include <mmpi/comm/bcastplan.h>

#include <QElapsedTimer>
#include <QList>
#include <QMutex>

#include <optional>

namespace mmpi {
class World;
}

namespace mmpi::detail {

class LinkTable
{
public:
    explicit LinkTable(World *world);

    // The model for a node that sends to `peers` (world ranks; this node's
    // own rank is skipped): the medium's, with the median measured latency
    // of those peers that have one.
    LinkModel model(const QList<int> &peers) const;
    // The medium's model alone, or the fixed one: what every node of a
    // world sees alike, for decisions all ranks must agree on.
    LinkModel mediumModel() const;
    // Overrides what is measured (an app that knows its medium; tests);
    // nullopt goes back to the medium and the heartbeats.
    void setFixedModel(std::optional<LinkModel> model);

    // A measure rounded to two significant digits: round trips and rates
    // jitter, and a model that changed with every sample would give every
    // broadcast a new plan (Router caches plans per model).
    static double rounded(double measure);

    // A model is worked out again after this long: heartbeats come once a
    // second by default (WorldConfig::heartbeatInterval), so a model this
    // much younger is current, and every broadcast asking for it again does
    // not read every peer's link quality under the world's locks.
    static constexpr qint64 MemoMs = 100;

private:
    World *m_world;
    mutable QMutex m_mutex;
    std::optional<LinkModel> m_fixed;
    struct Memo
    {
        QList<int> peers;
        LinkModel model;
        qint64 atMs = -1;
    };
    mutable Memo m_memo;
    QElapsedTimer m_clock;
};

} // namespace mmpi::detail
