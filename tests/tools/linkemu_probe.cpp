// linkemu_probe: the measuring ends tst_linkemu runs inside the emulator's
// namespaces (no ping or iperf is assumed on the machine). Plain POSIX, one
// mode per run, every wait bounded:
//   linkemu_probe udp-echo --port P --seconds S
//   linkemu_probe udp-ping --to A --port P --count N --size B     -> rtt_us median=... min=... max=...
//   linkemu_probe tcp-sink --port P --connections K --seconds S   -> flow i: bytes=... first_ns=... last_ns=...
//   linkemu_probe tcp-send --to A --port P --bytes N              -> unsent_after_write=..., sent bytes=...
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace {

long long nowNs()
{
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000 + t.tv_nsec;
}

[[noreturn]] void fail(const std::string &what)
{
    std::fprintf(stderr, "linkemu_probe: %s: %s\n", what.c_str(), std::strerror(errno));
    std::exit(1);
}

sockaddr_in address(const std::string &host, int port)
{
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(std::uint16_t(port));
    if (host.empty())
        a.sin_addr.s_addr = htonl(INADDR_ANY);
    else if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
        fail("bad address " + host);
    return a;
}

int boundSocket(int type, int port)
{
    const int fd = socket(AF_INET, type, 0);
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const sockaddr_in a = address({}, port);
    if (fd < 0 || bind(fd, reinterpret_cast<const sockaddr *>(&a), sizeof a) < 0)
        fail("bind port " + std::to_string(port));
    return fd;
}

int udpEcho(int port, double seconds)
{
    const int fd = boundSocket(SOCK_DGRAM, port);
    const long long end = nowNs() + (long long)(seconds * 1e9);
    std::vector<char> buffer(65536);
    while (nowNs() < end) {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 100) <= 0)
            continue;
        sockaddr_in from{};
        socklen_t length = sizeof from;
        const ssize_t got = recvfrom(fd, buffer.data(), buffer.size(), 0, reinterpret_cast<sockaddr *>(&from), &length);
        if (got > 0)
            sendto(fd, buffer.data(), size_t(got), 0, reinterpret_cast<sockaddr *>(&from), length);
    }
    return 0;
}

// One round trip, at most 1 s; its time in ns, or -1.
long long roundTrip(int fd, const std::vector<char> &datagram)
{
    std::vector<char> reply(datagram.size() + 1);
    const long long start = nowNs();
    if (send(fd, datagram.data(), datagram.size(), 0) < 0)
        return -1; // e.g. refused: the echo is not up yet
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 1000) <= 0 || recv(fd, reply.data(), reply.size(), 0) != ssize_t(datagram.size()))
        return -1;
    return nowNs() - start;
}

int udpPing(const std::string &to, int port, int count, int size)
{
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    const sockaddr_in a = address(to, port);
    if (fd < 0 || connect(fd, reinterpret_cast<const sockaddr *>(&a), sizeof a) < 0)
        fail("connect " + to);
    const std::vector<char> datagram(size_t(size), 'p');
    // The echo may still be starting: a few tries before the measured ones.
    int warm = 0;
    while (warm < 50 && roundTrip(fd, datagram) < 0) {
        ++warm;
        usleep(100000);
    }
    std::vector<long long> rtts;
    int lost = 0;
    for (int i = 0; i < count; ++i) {
        const long long rtt = roundTrip(fd, datagram);
        rtt < 0 ? ++lost : (rtts.push_back(rtt), 0);
    }
    if (rtts.empty()) {
        std::printf("rtt_us lost=%d\n", lost);
        return 1;
    }
    std::sort(rtts.begin(), rtts.end());
    std::printf("rtt_us median=%lld min=%lld max=%lld lost=%d\n", rtts[rtts.size() / 2] / 1000, rtts.front() / 1000,
                rtts.back() / 1000, lost);
    return 0;
}

struct Flow
{
    long long bytes = 0, firstNs = 0, lastNs = 0;
    bool done = false;
};

int tcpSink(int port, int connections, double seconds)
{
    const int listener = boundSocket(SOCK_STREAM, port);
    listen(listener, 16);
    const long long end = nowNs() + (long long)(seconds * 1e9);
    std::map<int, Flow> flows; // by descriptor, in accept order below
    std::vector<int> order;
    std::vector<char> buffer(1 << 16);
    int finished = 0;
    while (finished < connections && nowNs() < end) {
        std::vector<pollfd> fds{{listener, POLLIN, 0}};
        for (int fd : order)
            if (!flows[fd].done)
                fds.push_back({fd, POLLIN, 0});
        if (poll(fds.data(), fds.size(), 100) <= 0)
            continue;
        if (fds[0].revents & POLLIN) {
            const int fd = accept(listener, nullptr, nullptr);
            if (fd >= 0)
                order.push_back(fd), flows[fd] = Flow{};
        }
        for (size_t i = 1; i < fds.size(); ++i) {
            if (!(fds[i].revents & (POLLIN | POLLHUP)))
                continue;
            Flow &flow = flows[fds[i].fd];
            const ssize_t got = recv(fds[i].fd, buffer.data(), buffer.size(), 0);
            if (got > 0) {
                flow.lastNs = nowNs();
                flow.firstNs = flow.firstNs ? flow.firstNs : flow.lastNs;
                flow.bytes += got;
            } else {
                flow.done = true, ++finished;
                close(fds[i].fd); // the sender waits for this
            }
        }
    }
    for (size_t i = 0; i < order.size(); ++i) {
        const Flow &f = flows[order[i]];
        std::printf("flow %zu: bytes=%lld first_ns=%lld last_ns=%lld\n", i, f.bytes, f.firstNs, f.lastNs);
    }
    return finished == connections ? 0 : 1;
}

int connectWithRetry(const std::string &to, int port)
{
    const sockaddr_in a = address(to, port);
    for (int attempt = 0; attempt < 100; ++attempt) { // 5 s for the sink to listen
        const int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, reinterpret_cast<const sockaddr *>(&a), sizeof a) == 0)
            return fd;
        close(fd);
        usleep(50000);
    }
    fail("connect " + to);
}

int tcpSend(const std::string &to, int port, long long bytes)
{
    const int fd = connectWithRetry(to, port);
    const std::vector<char> block(1 << 16, 's');
    for (long long left = bytes; left > 0;) {
        const ssize_t put = send(fd, block.data(), size_t(std::min<long long>(left, (long long)block.size())), 0);
        if (put < 0)
            fail("send");
        left -= put;
    }
    // What the kernel took but has not sent yet: on an emulated radio most of it.
    int unsent = -1;
    ioctl(fd, SIOCOUTQNSD, &unsent);
    std::printf("unsent_after_write=%d\n", unsent);
    shutdown(fd, SHUT_WR);
    char byte;
    pollfd p{fd, POLLIN, 0};
    poll(&p, 1, 60000); // the sink closes once it has read everything
    recv(fd, &byte, 1, 0);
    std::printf("sent bytes=%lld\n", bytes);
    return 0;
}

std::string option(int argc, char **argv, const std::string &name, const char *fallback)
{
    for (int i = 2; i + 1 < argc; ++i)
        if (argv[i] == name)
            return argv[i + 1];
    if (!fallback) {
        std::fprintf(stderr, "linkemu_probe: %s needs %s\n", argv[1], name.c_str());
        std::exit(2);
    }
    return fallback;
}

} // namespace

int main(int argc, char **argv)
{
    const std::string mode = argc > 1 ? argv[1] : "";
    const auto num = [&](const char *name, const char *fallback) { return std::atof(option(argc, argv, name, fallback).c_str()); };
    if (mode == "udp-echo")
        return udpEcho(int(num("--port", nullptr)), num("--seconds", "10"));
    if (mode == "udp-ping")
        return udpPing(option(argc, argv, "--to", nullptr), int(num("--port", nullptr)), int(num("--count", "20")),
                       int(num("--size", "64")));
    if (mode == "tcp-sink")
        return tcpSink(int(num("--port", nullptr)), int(num("--connections", "1")), num("--seconds", "20"));
    if (mode == "tcp-send")
        return tcpSend(option(argc, argv, "--to", nullptr), int(num("--port", nullptr)),
                       (long long)num("--bytes", nullptr));
    std::fprintf(stderr, "usage: linkemu_probe udp-echo|udp-ping|tcp-sink|tcp-send [options] (see its source)\n");
    return 2;
}
