// FailureDetector: this node's view of whether each peer is still there
// (docs/guide/fault-tolerance.md#heartbeats). It decides when a peer needs a heartbeat, when a
// silent peer becomes suspect and when it is lost, checks the heartbeats that
// arrive and measures round trips from their echoes (docs/guide/fault-tolerance.md#heartbeats).
// The engine drives it on the progress thread with explicit times, so its
// rules can be tested without waiting; quality() may be called from any thread.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/wire/frame.h>
#include <mmpi/world/world.h>

#include <QHash>
#include <QMutex>

#include <array>
#include <chrono>
#include <deque>
#include <functional>
#include <optional>

namespace mmpi::detail {

class FailureDetector
{
public:
    using Clock = std::chrono::steady_clock;
    using TimePoint = Clock::time_point;

    // Heartbeat payload (docs/design/protocol.md): a type byte, then a u64
    // nonce, or for a rate report the rate in bytes per second; a rate probe
    // adds RateProbePadding zero bytes, and its u64 is their number.
    static constexpr qsizetype PayloadSize = 9;
    enum class HeartbeatType : quint8 { Request = 1, Echo = 2, RateReport = 3, RateProbe = 4 };
    // A rate probe is the one frame a fresh world sends to learn its radio's
    // rate before the app sends anything long enough to time (a 1 KiB
    // message is one packet: neither end can time it). The peer times its
    // arrival (ArrivalTiming) and reports the rate. Its size: the first
    // wake-up's bytes do not count and the rest must make MinSampleBytes, so
    // 8 KiB (six packets of 1448 bytes) is timed even when that wake-up came
    // late and read three; on the slowest radio (Bluetooth's 90 kB/s) it is
    // 91 ms of airtime, once per node, sent on one link only since all of a
    // node's links share its radio.
    static constexpr qsizetype RateProbePadding = 8192;
    // A peer hears of the rate its frames arrive at when this node's
    // estimate has moved by more than this fraction since the last report
    // (the smoothing's own step: one sample moves it by 1/8 of its error)...
    static constexpr double ReportChange = 1.0 / 8;
    // ...and not more often than this: a report per large message would
    // be a frame in the other direction on every broadcast.
    static constexpr std::chrono::milliseconds ReportEvery{250};
    // Requests whose echo has not come yet, per peer; beyond this the oldest
    // is forgotten (its echo then gives no round trip, but is still valid).
    static constexpr qsizetype MaxOutstanding = 16;

    // An interval of 0 turns heartbeats and failure detection off.
    FailureDetector(std::chrono::milliseconds interval, std::chrono::milliseconds timeout);

    bool isEnabled() const { return m_interval.count() > 0; }
    // How often check() should run: a quarter of the interval, so a heartbeat
    // follows the last frame after at most 1.25 intervals.
    std::chrono::milliseconds checkPeriod() const;
    // Silence after which a peer is suspect: half the timeout.
    std::chrono::milliseconds suspectAfter() const { return m_timeout / 2; }

    // The world is formed: this node has `ownRank` and starts timing.
    void start(int ownRank, TimePoint now);
    // Watch `rank` over a link whose counters read `framesSent` now.
    void watch(int rank, TimePoint now, quint64 framesSent);
    // A heartbeat request to send `rank` at once, on a link just watched:
    // its echo is the link's first round trip, so a fresh world's first
    // broadcasts plan with the link's latency, not the medium's, even when
    // heartbeats come seldom. Nothing when disabled or not watched.
    // With RoundTripThenRate, the echo of that request brings a rate probe
    // to send (Reply::rateProbe): after the echo, so that its airtime delays
    // neither this round trip nor the echoes this node gives its peers'
    // first requests, which come in meanwhile.
    enum class Probe { RoundTrip, RoundTripThenRate };
    std::optional<Frame> probe(int rank, TimePoint now, Probe kind = Probe::RoundTrip);
    // Reading from `rank` paused by this node (flow control): its silence is
    // this node's doing, so it is not timed until reading resumes.
    void setReading(int rank, bool reading, TimePoint now);
    // The peer left (goodbye: no longer timed, but still sent heartbeats
    // while its link is open, as it times us until our own goodbye) or is
    // lost (neither). False if it was not Alive or Suspect (nothing changes).
    bool release(int rank, World::NodeStatus status);
    // The peer's link is gone and the world reconnects: not timed, no
    // heartbeats, until watch() on the new link. From Alive or Suspect.
    bool markUnreachable(int rank);
    // An unreachable peer is given up: Lost. False if it was not Unreachable.
    bool giveUp(int rank);
    // This node said goodbye: from now on it sends no heartbeats or echoes,
    // so the goodbye stays its last frame on every link.
    void stopSending() { m_sending = false; }

    // Any frame from `rank` arrived. True when it was suspect and is not any more.
    bool heard(int rank, TimePoint now);

    // What a link to a peer has done, from its counters.
    struct Activity
    {
        quint64 framesSent = 0; // frames queued on the link so far, every sender included
        qint64 bytesToWrite = 0;
    };
    // What check() decided for one peer. The engine sends `heartbeat` on the
    // peer's link (the detector counts it as sent) and closes the link when `lost`.
    struct Verdict
    {
        int rank = NoRank;
        std::optional<Frame> heartbeat;
        bool becameSuspect = false;
        std::optional<Error> lost;
    };
    // Run every checkPeriod(). `activity` gives a peer's link activity, or
    // nothing when it has no link. Only peers with something to do are returned.
    QList<Verdict> check(TimePoint now, const std::function<std::optional<Activity>(int rank)> &activity);

    // What receive() decided: an echo to send back, and whether a round trip
    // was measured (the link quality changed).
    struct Reply
    {
        std::optional<Frame> echo;
        std::optional<Frame> rateProbe; // to send the peer (probe()), counted as a heartbeat
        bool measured = false;
    };
    // A Heartbeat frame from `rank`. An error is a protocol violation by the
    // peer: the engine closes the link with it.
    Result<Reply> receive(int rank, const Frame &frame, TimePoint now);

    // Bytes per second left for `rank` while its link drained (DepartureWatch).
    void noteSendRate(int rank, double bytesPerSecond);
    // Frames from `rank` arrived at `bytesPerSecond` (Link::arrivalRateMeasured):
    // the report to send it, when it is due (counted as a heartbeat frame).
    std::optional<Frame> noteArrivalRate(int rank, double bytesPerSecond, TimePoint now);

    // Thread-safe. Rank must be a peer it watched at some point (else nullopt).
    std::optional<LinkQuality> quality(int rank, TimePoint now) const;

    static Frame makeHeartbeat(int source, int destination, HeartbeatType type, quint64 nonce);
    static Frame makeRateProbe(int source, int destination);

private:
    struct Peer
    {
        World::NodeStatus status = World::NodeStatus::Alive;
        bool reading = true; // false while this node does not read from it
        TimePoint lastHeard;
        TimePoint lastSent;          // when traffic to it was last seen, or a heartbeat went
        quint64 dataFramesSeen = 0;  // the link's frames, less our heartbeats, at the last check
        quint64 heartbeatFrames = 0; // requests and echoes this node queued on the link
        quint64 nextNonce = 1;
        quint64 lastEchoed = 0;
        quint64 lastRequestReceived = 0;
        quint64 rateProbeAfter = 0; // the request whose echo brings a rate probe, 0 for none
        std::deque<std::pair<quint64, TimePoint>> outstanding;
        std::chrono::microseconds roundTrip{-1};
        std::chrono::microseconds smoothedRoundTrip{-1};
        quint64 roundTripSamples = 0;
        // The last RecentRoundTrips samples (LinkQuality::minRoundTrip):
        // at the default heartbeat interval, the last 8 seconds of idle link.
        std::array<std::chrono::microseconds, 8> recentRoundTrips{};
        std::chrono::microseconds minRoundTrip() const;
        double sendRate = 0;
        quint64 sendRateSamples = 0;
        // Of the peer's frames here: the highest of the last 8 samples. A
        // frame that shared the peer's radio with its copies to other nodes
        // (a broadcast's next child, interleaved by the radio's per-flow
        // queues) arrives at its share, never faster than the radio: as a
        // round trip's queueing only adds to it (minRoundTrip), sharing
        // only takes from a rate, so the window keeps its extreme (BBR's
        // bottleneck-bandwidth filter; Cardwell et al., 2016).
        std::array<double, 8> recentArrivalRates{};
        double arrivalRate = 0;
        quint64 arrivalRateSamples = 0;
        double reportedToPeer = 0; // arrivalRate when the peer last heard it
        TimePoint reportedAt;
        double peerArrivalRate = 0; // of this node's frames there, as the peer reported
        quint64 peerArrivalRateReports = 0;
        quint64 requestsSent = 0;
        quint64 requestsReceived = 0;
    };

    // Alive or Suspect: its silence counts and its heartbeats are answered.
    static bool isTimed(const Peer &peer)
    {
        return peer.status == World::NodeStatus::Alive || peer.status == World::NodeStatus::Suspect;
    }
    Error violation(int rank, const QString &what) const;
    std::optional<Error> malformed(int rank, const Frame &frame) const;
    static Frame heartbeatFrame(int source, int destination, HeartbeatType type, quint64 nonce, qsizetype padding);
    void checkPeer(int rank, Peer &peer, TimePoint now, const std::optional<Activity> &activity,
                   Verdict &verdict);
    Frame request(int rank, Peer &peer, TimePoint now);
    void measure(Peer &peer, quint64 nonce, TimePoint now);
    static bool reportDue(const Peer &peer, TimePoint now);
    void takeTurns(QList<Verdict> &verdicts);

    const std::chrono::milliseconds m_interval;
    const std::chrono::milliseconds m_timeout;
    int m_ownRank = NoRank;
    bool m_sending = true;
    std::optional<TimePoint> m_lastCheck;
    quint64 m_bursts = 0; // check() results of two or more peers so far
    mutable QMutex m_mutex; // guards m_peers: quality() comes from other threads
    QHash<int, Peer> m_peers;
};

} // namespace mmpi::detail
