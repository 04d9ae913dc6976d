#include "radio.h"

#include <algorithm>
#include <cmath>

namespace mmpi::linkemu {

Radio::Radio(const RadioConfig &config) : m_config(config), m_random(config.seed) {}

std::int64_t Radio::airtimeNs(std::size_t bytes) const
{
    if (m_config.rateBytesPerSecond <= 0)
        return 0;
    return std::llround(double(bytes) * 1e9 / m_config.rateBytesPerSecond);
}

std::int64_t Radio::latencyNs()
{
    double ms = m_config.latencyMs;
    if (m_config.jitterMs > 0)
        ms += std::uniform_real_distribution<double>(0.0, m_config.jitterMs)(m_random);
    return std::llround(ms * 1e6);
}

std::size_t Radio::queuedBytes(std::int64_t nowNs) const
{
    if (m_freeAtNs <= nowNs || m_config.rateBytesPerSecond <= 0)
        return 0;
    return std::size_t(std::ceil(double(m_freeAtNs - nowNs) * m_config.rateBytesPerSecond / 1e9));
}

Radio::Verdict Radio::transmit(std::int64_t nowNs, std::size_t bytes)
{
    const std::size_t queued = queuedBytes(nowNs);
    // An empty queue always takes a frame, however small the limit.
    if (queued > 0 && queued + bytes > m_config.queueBytes) {
        ++m_stats.droppedQueueFull;
        return {Outcome::QueueFull, 0};
    }
    m_stats.mostQueued = std::max(m_stats.mostQueued, queued + bytes);
    m_freeAtNs = std::max(m_freeAtNs, nowNs) + airtimeNs(bytes);
    ++m_stats.frames;
    m_stats.bytes += bytes;
    // Drawn for every frame, so that a seed gives the same losses whatever
    // the jitter setting.
    const bool lost = std::uniform_real_distribution<double>(0.0, 1.0)(m_random) < m_config.loss;
    const std::int64_t arrival = std::max(m_freeAtNs + latencyNs(), m_lastArrivalNs);
    if (lost) {
        ++m_stats.lost;
        return {Outcome::Lost, 0};
    }
    m_lastArrivalNs = arrival;
    return {Outcome::Deliver, arrival};
}

} // namespace mmpi::linkemu
