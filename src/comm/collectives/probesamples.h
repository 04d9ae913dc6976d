// ProbeSamples: what one link probe measured (round trips, bursts) and the
// estimate it gives. Traffic queued ahead of a ping or its pong only ever adds
// time, so each quantity takes its best sample, and samples that disagree
// mark the probe as disturbed: its estimate may only improve an earlier one.
#pragma once

#include <QList>
#include <QtGlobal>

namespace mmpi::detail {

struct LinkEstimate
{
    double latencyUs = 0;
    double bytesPerUs = 0;
    double overheadUs = 0;
    qint64 measuredAtMs = 0;
    // The probe met other traffic: its numbers are upper bounds on the link's.
    bool disturbed = false;
};

class ProbeSamples
{
public:
    // Samples of one kind disagree (the probe met traffic) when the slowest
    // exceeds the fastest by more than this fraction of it plus SpreadSlackUs.
    static constexpr double SpreadFraction = 0.25;
    static constexpr double SpreadSlackUs = 1000;

    // One small ping's round trip.
    void addRoundTrip(double us) { m_roundTrips.append(us); }
    int roundTrips() const { return int(m_roundTrips.size()); }
    // The fastest round trip: one ping's own time, without queueing.
    double roundTripUs() const;
    // A burst of `pings` small pings, answered after `elapsedUs`.
    void addOverheadBurst(double elapsedUs, int pings);
    int overheadBursts() const { return int(m_overheadBursts.size()); }
    // A burst of `bytes` of large pings: its time beyond one round trip.
    void addRateBurst(double elapsedUs, qint64 bytes);
    int rateBursts() const { return int(m_rateExtras.size()); }

    bool disturbed() const;
    // Latency, per-frame cost beyond a frame's bytes and rate, each from its
    // best sample; `frameBytes` is what one small ping puts on the link.
    LinkEstimate estimate(double frameBytes, qint64 nowMs) const;

private:
    QList<double> m_roundTrips;
    QList<double> m_overheadBursts; // elapsed
    int m_overheadPings = 0;
    QList<double> m_rateExtras;     // elapsed minus the round trip
    QList<double> m_rates;          // bytes per microsecond
};

// What a node keeps after probing a peer it may have estimated before: a
// clean probe replaces the old estimate (the link may have changed); a
// disturbed one keeps the better of each quantity, since its samples can
// only err on the slow side.
LinkEstimate mergedEstimate(const LinkEstimate *old, const LinkEstimate &fresh);

} // namespace mmpi::detail
