// Switch: the user-space switch between the nodes' TUN devices. One thread
// reads every IPv4 packet a node's kernel sends, puts it on that node's Radio
// and writes it into the destination node's TUN device when the Radio says
// it arrives. A packet to the subnet's broadcast address (or a multicast one)
// is one transmission that every other node receives. Anything else (IPv6,
// addresses outside the subnet) is dropped before the radio and counted.
#pragma once

#include "radio.h"

#include <cstdint>
#include <memory>
#include <queue>
#include <string>
#include <vector>

namespace mmpi::linkemu {

struct SwitchStats
{
    std::uint64_t delivered = 0;  // packets written into a destination
    std::uint64_t unroutable = 0; // not IPv4, or not to a node of the subnet
    std::uint64_t writeErrors = 0;
};

class Switch
{
public:
    // tunFds[i]: node i's TUN device (non-blocking, IFF_TUN | IFF_NO_PI);
    // node i has the address subnet + i + 1 (host byte order).
    Switch(std::vector<int> tunFds, std::uint32_t subnet, const RadioConfig &radio);

    // Runs until `stopFd` (an eventfd) becomes readable. Returns an error
    // message, or an empty string when stopped.
    std::string run(int stopFd);

    const Radio &radio(int node) const { return m_radios[std::size_t(node)]; }
    const SwitchStats &stats() const { return m_stats; }

private:
    struct Pending
    {
        std::int64_t atNs;
        std::uint64_t order; // FIFO among equal times
        int node;
        std::shared_ptr<const std::vector<std::uint8_t>> packet;
        bool operator>(const Pending &other) const
        {
            return atNs != other.atNs ? atNs > other.atNs : order > other.order;
        }
    };

    void readAll(int node);
    void route(int from, std::vector<std::uint8_t> packet);
    void deliverDue(std::int64_t nowNs);
    std::vector<int> destinations(int from, const std::vector<std::uint8_t> &packet) const;
    std::int64_t timeoutNs(std::int64_t nowNs) const;

    std::vector<int> m_fds;
    std::uint32_t m_subnet;
    std::vector<Radio> m_radios;
    std::priority_queue<Pending, std::vector<Pending>, std::greater<>> m_pending;
    std::vector<std::uint8_t> m_buffer; // what read() fills
    std::uint64_t m_order = 0;
    SwitchStats m_stats;
};

// CLOCK_MONOTONIC in nanoseconds.
std::int64_t monotonicNs();

} // namespace mmpi::linkemu
