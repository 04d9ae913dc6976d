// LinkEstimator: this node's estimates of its links, measured by the comm
// layer itself (the world layer keeps none yet). A probe sends pings that the
// peer's router answers at once on its progress thread: half the median round
// trip of single small pings is the latency; a burst of small pings, how much
// each further frame costs; a burst of large pings, the rate at which bytes
// leave. Peers are probed one at a time, on demand, when a broadcast needs a
// model of links it has not measured yet. ProbeSamples turns the samples into
// an estimate that traffic met on the way cannot make worse than it was.
#pragma once

#include "probesamples.h"

#include <mmpi/comm/bcastplan.h>
#include <mmpi/wire/frame.h>

#include <QElapsedTimer>
#include <QHash>
#include <QMutex>
#include <QSet>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include <memory>
#include <optional>

namespace mmpi {
class World;
}

namespace mmpi::detail {

class LinkEstimator : public std::enable_shared_from_this<LinkEstimator>
{
public:
    using Estimate = LinkEstimate;

    explicit LinkEstimator(World *world);
    ~LinkEstimator();

    // The model for a node that sends to `peers` (world ranks): the median of
    // their estimates, else of any, else the defaults. Starts a probe of one
    // unmeasured (or stale) peer among them if none is running.
    LinkModel model(const QList<int> &peers);
    std::optional<Estimate> estimate(int peer) const;
    // Overrides what is measured (an app that knows its medium; tests).
    void setFixedModel(std::optional<LinkModel> model);
    // Probes every one of `peers` (again), one after the other; `done` runs,
    // on the thread that finished the last probe, once none is left to probe.
    void measure(const QList<int> &peers, std::function<void()> done);

    void handleFrame(const Frame &frame);
    void handlePeerGone(int rank);
    void handlePeerRejoined(int rank);

    static constexpr int LatencyPings = 4;
    // Peers probed on demand, without measure(): a node's links share its
    // radio, so a few tell most of the story and probing all would load it.
    static constexpr int MaxAutoProbes = 3;
    static constexpr int OverheadBurst = 8;
    static constexpr int OverheadRounds = 2;
    static constexpr int RateBurst = 4;
    static constexpr int RateRounds = 2;
    // Rate pings grow from this until the burst's time is measurable.
    static constexpr qint64 FirstBulkBytes = 4096;
    static constexpr qint64 MaxBulkBytes = 256 * 1024;
    // When an estimate is measured again, a disturbed one too: probing those
    // sooner put the probes' own bursts into the broadcasts that disturbed
    // them (16 ranks, 4 KiB on the bluetooth profile: 224 -> 404 ms).
    static constexpr qint64 StaleAfterMs = 300000;
    static constexpr qint64 GiveUpAfterMs = 20000;
    // A pong waits this many milliseconds at most for this node's World to
    // say it is formed.
    static constexpr int MaxAnswerRetries = 20000;

private:
    enum class Phase { Latency, Overhead, Rate };
    struct Probe
    {
        int peer = -1;
        Phase phase = Phase::Latency;
        ProbeSamples samples;
        qint64 bulkBytes = FirstBulkBytes;
        bool bulkGrown = false;    // rate pings are as large as they need to be
        // The burst in flight: pings with nonces [firstNonce, firstNonce + sent).
        quint64 firstNonce = 0;
        int sent = 0;
        int answered = 0;
        double sentAtUs = 0;
        qint64 sentAtMs = 0;       // the watchdog waits from here
    };

    struct Next
    {
        int peer = -1;
        QList<Frame> pings;
        QList<std::function<void()>> finished; // measure() callers whose peers are all probed
    };
    Next nextProbe();                          // m_mutex held: start the next queued probe
    void run(Next next);                       // without m_mutex
    void startProbe(int peer);                 // m_mutex held
    QList<Frame> burst(int count, qint64 bytes); // m_mutex held
    QList<Frame> burstDone(double elapsedUs);  // m_mutex held: the next burst, or none when finished
    void finishProbe();                        // m_mutex held
    void sendPings(int peer, QList<Frame> pings); // without m_mutex
    void answer(int peer, quint64 nonce, int attempt); // on the progress thread
    // Gives up on a probe that has gone unanswered for GiveUpAfterMs (a peer
    // without MMPI's comm layer never answers), so measure() never hangs.
    void watch();
    double nowUs() const { return double(m_clock.nsecsElapsed()) / 1000.0; }

    World *m_world;
    QElapsedTimer m_clock;
    mutable QMutex m_mutex;
    QHash<int, Estimate> m_estimates;
    std::optional<Probe> m_probe;
    QList<int> m_queue;                         // peers to probe next
    QList<std::function<void()>> m_waiters;     // measure() callers
    QSet<int> m_gone;
    QSet<int> m_autoProbed;
    std::thread m_watchdog;
    std::condition_variable_any m_probeStarted;
    bool m_stopping = false;
    std::optional<LinkModel> m_fixed;
    // The last model() answer, valid while nothing it rests on changed
    // (m_generation counts changes of estimates and departures) for MemoMs.
    struct Memo
    {
        QList<int> peers;
        LinkModel model;
        quint64 generation = 0;
        qint64 atMs = -1;
    };
    static constexpr qint64 MemoMs = 1000;
    Memo m_memo;
    quint64 m_generation = 1;
    quint64 m_nextNonce = 1;
};

} // namespace mmpi::detail
