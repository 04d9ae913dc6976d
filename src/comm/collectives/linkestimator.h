// LinkEstimator: this node's estimates of its links, measured by the comm
// layer itself (the world layer keeps none yet). A probe is a small ping that
// the peer's router answers at once on its progress thread: half the round
// trip is the latency; a larger ping's extra round-trip time gives the rate at
// which this node's link carries bytes. Peers are probed one at a time, on
// demand, when a broadcast needs a model of links it has not measured yet.
#pragma once

#include <mmpi/comm/bcastplan.h>
#include <mmpi/wire/frame.h>

#include <QElapsedTimer>
#include <QHash>
#include <QMutex>

#include <memory>
#include <optional>

namespace mmpi {
class World;
}

namespace mmpi::detail {

class LinkEstimator : public std::enable_shared_from_this<LinkEstimator>
{
public:
    struct Estimate
    {
        double latencyUs = 0;
        double bytesPerUs = 0;
        qint64 measuredAtMs = 0;
    };

    explicit LinkEstimator(World *world);

    // The model for a node that sends to `peers` (world ranks): the median of
    // their estimates, else of any, else the defaults. Starts a probe of one
    // unmeasured (or stale) peer among them if none is running.
    LinkModel model(const QList<int> &peers);
    std::optional<Estimate> estimate(int peer) const;
    // Overrides what is measured (an app that knows its medium; tests).
    void setFixedModel(std::optional<LinkModel> model);

    void handleFrame(const Frame &frame);
    void handlePeerGone(int rank);

    // Ping payloads grow from this until their extra time is measurable.
    static constexpr qint64 FirstBulkBytes = 4096;
    static constexpr qint64 MaxBulkBytes = 1 << 20;
    static constexpr qint64 StaleAfterMs = 60000;
    static constexpr qint64 GiveUpAfterMs = 20000;

private:
    struct Probe
    {
        int peer = -1;
        int step = 0;          // pings answered so far
        qint64 bulkBytes = 0;  // 0 while measuring latency
        double smallRttUs = 1e300;
        double bulkRttUs = 1e300;
        int bulkRepeats = 0;
        quint64 nonce = 0;
        double sentAtUs = 0;
        qint64 startedAtMs = 0;
    };

    void startProbe(int peer);          // m_mutex held
    Frame nextPing();                   // m_mutex held
    void finishProbe();                 // m_mutex held
    void sendPing(int peer, Frame ping); // without m_mutex
    double nowUs() const { return double(m_clock.nsecsElapsed()) / 1000.0; }

    World *m_world;
    QElapsedTimer m_clock;
    mutable QMutex m_mutex;
    QHash<int, Estimate> m_estimates;
    std::optional<Probe> m_probe;
    std::optional<LinkModel> m_fixed;
    quint64 m_nextNonce = 1;
};

} // namespace mmpi::detail
