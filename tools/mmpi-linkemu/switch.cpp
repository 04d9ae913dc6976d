#include "switch.h"

#include <cerrno>
#include <cstring>
#include <ctime>

#include <poll.h>
#include <unistd.h>

namespace mmpi::linkemu {

namespace {

// Larger than any MTU the emulator accepts, so that no packet is cut.
constexpr std::size_t MaxPacket = 65536;

std::uint32_t readAddress(const std::vector<std::uint8_t> &packet, std::size_t at)
{
    return std::uint32_t(packet[at]) << 24 | std::uint32_t(packet[at + 1]) << 16 | std::uint32_t(packet[at + 2]) << 8
        | std::uint32_t(packet[at + 3]);
}

} // namespace

std::int64_t monotonicNs()
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return std::int64_t(now.tv_sec) * 1000000000 + now.tv_nsec;
}

Switch::Switch(std::vector<int> tunFds, std::uint32_t subnet, const RadioConfig &radio)
    : m_fds(std::move(tunFds)), m_subnet(subnet), m_buffer(MaxPacket)
{
    for (std::size_t i = 0; i < m_fds.size(); ++i) {
        RadioConfig own = radio;
        own.seed = radio.seed + i; // a stream of its own per node, still reproducible
        m_radios.emplace_back(own);
    }
}

std::vector<int> Switch::destinations(int from, const std::vector<std::uint8_t> &packet) const
{
    if (packet.size() < 20 || (packet[0] >> 4) != 4)
        return {};
    const std::uint32_t to = readAddress(packet, 16);
    const bool flood = to == 0xffffffffu || (to >> 28) == 0xe || to == (m_subnet | 0xffu);
    std::vector<int> nodes;
    for (int node = 0; node < int(m_fds.size()); ++node) {
        if (node != from && (flood || to == m_subnet + std::uint32_t(node) + 1))
            nodes.push_back(node);
    }
    return nodes;
}

void Switch::route(int from, std::vector<std::uint8_t> packet)
{
    const std::vector<int> nodes = destinations(from, packet);
    if (nodes.empty()) {
        ++m_stats.unroutable;
        return;
    }
    const Radio::Verdict verdict = m_radios[std::size_t(from)].transmit(monotonicNs(), packet.size());
    if (verdict.outcome != Radio::Outcome::Deliver)
        return;
    auto shared = std::make_shared<const std::vector<std::uint8_t>>(std::move(packet));
    for (int node : nodes)
        m_pending.push({verdict.arrivalNs, m_order++, node, shared});
}

void Switch::readAll(int node)
{
    // Bounded: a node cannot keep the switch from the others' packets.
    for (int i = 0; i < 64; ++i) {
        const ssize_t got = ::read(m_fds[std::size_t(node)], m_buffer.data(), m_buffer.size());
        if (got <= 0)
            return; // EAGAIN: read everything there was
        // A copy of the packet's own size: queued packets hold no spare room.
        route(node, std::vector<std::uint8_t>(m_buffer.begin(), m_buffer.begin() + got));
    }
}

void Switch::deliverDue(std::int64_t nowNs)
{
    while (!m_pending.empty() && m_pending.top().atNs <= nowNs) {
        const Pending &due = m_pending.top();
        const auto &packet = *due.packet;
        if (::write(m_fds[std::size_t(due.node)], packet.data(), packet.size()) == ssize_t(packet.size()))
            ++m_stats.delivered;
        else
            ++m_stats.writeErrors; // the node's device was full or gone: the packet is lost, as on the air
        m_pending.pop();
    }
}

std::int64_t Switch::timeoutNs(std::int64_t nowNs) const
{
    if (m_pending.empty())
        return -1;
    return std::max<std::int64_t>(0, m_pending.top().atNs - nowNs);
}

std::string Switch::run(int stopFd)
{
    std::vector<pollfd> fds;
    for (int fd : m_fds)
        fds.push_back({fd, POLLIN, 0});
    fds.push_back({stopFd, POLLIN, 0});
    for (;;) {
        deliverDue(monotonicNs());
        const std::int64_t wait = timeoutNs(monotonicNs());
        timespec timeout{wait / 1000000000, wait % 1000000000};
        const int ready = ::ppoll(fds.data(), fds.size(), wait < 0 ? nullptr : &timeout, nullptr);
        if (ready < 0 && errno != EINTR)
            return std::string("poll: ") + std::strerror(errno);
        if (fds.back().revents != 0)
            return {};
        for (std::size_t node = 0; node < m_fds.size(); ++node) {
            if (fds[node].revents & POLLIN)
                readAll(int(node));
            else if (fds[node].revents & (POLLERR | POLLHUP | POLLNVAL))
                return "node " + std::to_string(node) + "'s TUN device failed";
        }
    }
}

} // namespace mmpi::linkemu
