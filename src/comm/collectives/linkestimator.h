// LinkEstimator: this node's estimates of its links, measured by the comm
// layer itself (the world layer keeps none yet). A probe sends pings that the
// peer's router answers at once on its progress thread: half the median round
// trip of single small pings is the latency; a burst of small pings, how much
// each further frame costs; a burst of large pings, the rate at which bytes
// leave. Peers are probed one at a time, on demand, when a broadcast needs a
// model of links it has not measured yet.
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
        double overheadUs = 0;
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

    static constexpr int LatencyPings = 5;
    static constexpr int OverheadBurst = 8;
    static constexpr int RateBurst = 4;
    static constexpr int RateRounds = 2;
    // Rate pings grow from this until the burst's time is measurable.
    static constexpr qint64 FirstBulkBytes = 4096;
    static constexpr qint64 MaxBulkBytes = 256 * 1024;
    static constexpr qint64 StaleAfterMs = 60000;
    static constexpr qint64 GiveUpAfterMs = 20000;

private:
    enum class Phase { Latency, Overhead, Rate };
    struct Probe
    {
        int peer = -1;
        Phase phase = Phase::Latency;
        QList<double> roundTrips;
        double latencyRttUs = 0;  // median of the single pings
        double overheadUs = 0;
        qint64 bulkBytes = FirstBulkBytes;
        double bestRate = 0;       // bytes/us
        int rateRounds = 0;
        // The burst in flight: pings with nonces [firstNonce, firstNonce + sent).
        quint64 firstNonce = 0;
        int sent = 0;
        int answered = 0;
        double sentAtUs = 0;
        qint64 startedAtMs = 0;
    };

    void startProbe(int peer);                 // m_mutex held
    QList<Frame> burst(int count, qint64 bytes); // m_mutex held
    QList<Frame> burstDone(double elapsedUs);  // m_mutex held: the next burst, or none when finished
    void finishProbe();                        // m_mutex held
    void sendPings(int peer, QList<Frame> pings); // without m_mutex
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
