#include "probesamples.h"

#include <algorithm>

namespace mmpi::detail {

namespace {

bool spread(const QList<double> &samples)
{
    if (samples.size() < 2)
        return false;
    const auto [low, high] = std::minmax_element(samples.cbegin(), samples.cend());
    return *high - *low > ProbeSamples::SpreadFraction * *low + ProbeSamples::SpreadSlackUs;
}

double lowest(const QList<double> &samples)
{
    return samples.isEmpty() ? 0 : *std::min_element(samples.cbegin(), samples.cend());
}

} // namespace

double ProbeSamples::roundTripUs() const
{
    return lowest(m_roundTrips);
}

void ProbeSamples::addOverheadBurst(double elapsedUs, int pings)
{
    m_overheadBursts.append(elapsedUs);
    m_overheadPings = pings;
}

void ProbeSamples::addRateBurst(double elapsedUs, qint64 bytes)
{
    const double extraUs = elapsedUs - roundTripUs();
    m_rateExtras.append(extraUs);
    // Too fast to see even with the largest pings: call it 100 GB/s.
    m_rates.append(extraUs > 0 ? double(bytes) / extraUs : 1e5);
}

bool ProbeSamples::disturbed() const
{
    return spread(m_roundTrips) || spread(m_overheadBursts) || spread(m_rateExtras);
}

LinkEstimate ProbeSamples::estimate(double frameBytes, qint64 nowMs) const
{
    LinkEstimate e;
    const double bestRate = m_rates.isEmpty() ? 0 : *std::max_element(m_rates.cbegin(), m_rates.cend());
    e.bytesPerUs = std::min(bestRate, 1e5);
    // The model adds each frame's bytes at the rate by itself: what the small
    // pings measured beyond that is the per-frame cost.
    const double smallFrameUs = e.bytesPerUs > 0 ? frameBytes / e.bytesPerUs : 0;
    const double rtt = roundTripUs();
    if (m_overheadPings > 1 && !m_overheadBursts.isEmpty()) {
        const double perPing = std::max(0.0, (lowest(m_overheadBursts) - rtt) / (m_overheadPings - 1));
        e.overheadUs = std::max(0.0, perPing - smallFrameUs);
    }
    e.latencyUs = std::max(0.0, rtt / 2 - smallFrameUs);
    e.measuredAtMs = nowMs;
    e.disturbed = disturbed();
    return e;
}

LinkEstimate mergedEstimate(const LinkEstimate *old, const LinkEstimate &fresh)
{
    if (!fresh.disturbed || !old)
        return fresh;
    LinkEstimate e = fresh;
    e.latencyUs = std::min(old->latencyUs, fresh.latencyUs);
    e.overheadUs = std::min(old->overheadUs, fresh.overheadUs);
    e.bytesPerUs = std::max(old->bytesPerUs, fresh.bytesPerUs);
    return e;
}

} // namespace mmpi::detail
