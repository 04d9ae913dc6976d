// Radio: one node's transmitter in the link emulator, as a pure model on
// times the caller passes in (nanoseconds of CLOCK_MONOTONIC), so that its
// arithmetic does not depend on when the switch gets to run.
//
// A frame handed over at `now` waits for the frames ahead of it (one queue
// per node: every destination shares the radio), takes bytes / rate on the
// air, and arrives latency (+ jitter) after its last byte left. A frame that
// would make the queue hold more than `queueBytes` is dropped, as a device
// queue drops; a lost frame still takes its time on the air. Arrivals keep the
// order of sending, whatever the jitter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>

namespace mmpi::linkemu {

struct RadioConfig
{
    double latencyMs = 0;
    double rateBytesPerSecond = 0;
    double jitterMs = 0;
    double loss = 0;
    std::size_t queueBytes = 0;
    std::uint64_t seed = 1;
};

struct RadioStats
{
    std::uint64_t frames = 0; // put on the air (lost ones included)
    std::uint64_t bytes = 0;
    std::uint64_t droppedQueueFull = 0;
    std::uint64_t lost = 0;
    std::size_t mostQueued = 0; // bytes waiting, at most
};

class Radio
{
public:
    enum class Outcome { Deliver, QueueFull, Lost };
    struct Verdict
    {
        Outcome outcome;
        std::int64_t arrivalNs; // for Deliver
    };

    explicit Radio(const RadioConfig &config);

    Verdict transmit(std::int64_t nowNs, std::size_t bytes);
    // Bytes handed over and not yet on the air at `nowNs`.
    std::size_t queuedBytes(std::int64_t nowNs) const;
    const RadioStats &stats() const { return m_stats; }

private:
    std::int64_t airtimeNs(std::size_t bytes) const;
    std::int64_t latencyNs();

    RadioConfig m_config;
    std::mt19937_64 m_random;
    std::int64_t m_freeAtNs = 0;      // when the last frame queued leaves the air
    std::int64_t m_lastArrivalNs = 0; // keeps arrivals in order under jitter
    RadioStats m_stats;
};

} // namespace mmpi::linkemu
