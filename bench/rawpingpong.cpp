// raw-pingpong: what TCP gives without any library, the reference for mmpi-bench
// pingpong over tcp. Two processes (the second made by fork()) bounce messages
// over one blocking POSIX socket on 127.0.0.1 with TCP_NODELAY; with --oneway,
// rank 0 sends bursts that rank 1 answers with a byte (the bandwidth baseline).
// With --spin they run on two CPUs of their own and read without blocking,
// again and again, as MPI libraries poll with cores to spare. docs/guide/benchmarks.md
#include "pingpong.h"

#include <sched.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

[[noreturn]] void fail(const std::string &what)
{
    throw std::runtime_error(what + ": " + std::strerror(errno));
}

sockaddr_in loopback(in_port_t port)
{
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    return address;
}

// A listening socket on 127.0.0.1 and an ephemeral port, stored in `port`.
int listenOnLoopback(in_port_t &port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = loopback(0);
    socklen_t length = sizeof address;
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr *>(&address), length) != 0 || listen(fd, 1) != 0
        || getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length) != 0)
        fail("listen on 127.0.0.1");
    port = ntohs(address.sin_port);
    return fd;
}

int withNoDelay(int fd)
{
    int on = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) != 0)
        fail("TCP_NODELAY");
    return fd;
}

int acceptOne(int listener)
{
    int fd = accept(listener, nullptr, nullptr);
    if (fd < 0)
        fail("accept");
    return withNoDelay(fd);
}

int connectTo(in_port_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = loopback(port);
    if (fd < 0 || connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0)
        fail("connect to 127.0.0.1");
    return withNoDelay(fd);
}

void sendAll(int fd, const char *data, size_t size)
{
    for (size_t sent = 0; sent < size;) {
        ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
        if (n < 0 && errno != EINTR)
            fail("send");
        sent += n > 0 ? size_t(n) : 0;
    }
}

bool g_spin = false; // --spin

void receiveAll(int fd, char *data, size_t size)
{
    for (size_t received = 0; received < size;) {
        ssize_t n = recv(fd, data + received, size - received, g_spin ? MSG_DONTWAIT : 0);
        if (n == 0)
            throw std::runtime_error("peer closed the connection");
        if (n < 0 && errno != EINTR && errno != EAGAIN)
            fail("recv");
        received += n > 0 ? size_t(n) : 0;
    }
}

// --spin: the first two CPUs this process may use, one for each side, so
// that neither spins on the CPU the other needs. Found before fork(): a
// child that failed here would leave its parent waiting to accept forever.
std::pair<int, int> twoCpus()
{
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        fail("sched_getaffinity");
    int found[2] = {-1, -1};
    for (int cpu = 0, n = 0; cpu < CPU_SETSIZE && n < 2; ++cpu)
        if (CPU_ISSET(cpu, &allowed))
            found[n++] = cpu;
    if (found[1] < 0)
        throw std::runtime_error("--spin needs two CPUs, and this process may use only one");
    return {found[0], found[1]};
}

void bindTo(int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        fail("sched_setaffinity");
}

int sendMessage(void *fd, const char *data, size_t size)
{
    sendAll(*static_cast<int *>(fd), data, size);
    return 0;
}

int receiveMessage(void *fd, char *data, size_t size)
{
    receiveAll(*static_cast<int *>(fd), data, size);
    return 0;
}

// Runs rank 0's side (timing) or rank 1's over the connected socket `fd`.
void exchange(int fd, const pp_options &options, bool timing)
{
    pp_schedule schedule;
    if (!pp_schedule_start(&schedule, &options))
        throw std::runtime_error("out of memory");
    std::vector<char> out(pp_largest_size(&options), 'x'), in(out.size());
    const pp_link link{&fd, sendMessage, receiveMessage};
    pp_link_run(&link, &schedule, timing, out.data(), in.data());
    close(fd);
    if (timing)
        pp_print(&schedule, g_spin ? "raw-tcp spin" : "raw-tcp");
    pp_schedule_free(&schedule);
}

int run(const pp_options &options)
{
    const std::pair<int, int> cpus = g_spin ? twoCpus() : std::pair<int, int>(-1, -1);
    in_port_t port = 0;
    int listener = listenOnLoopback(port);
    pid_t child = fork();
    if (child < 0)
        fail("fork");
    if (child == 0) {
        close(listener);
        if (g_spin)
            bindTo(cpus.second);
        exchange(connectTo(port), options, false);
        return 0;
    }
    if (g_spin)
        bindTo(cpus.first);
    const int fd = acceptOne(listener);
    close(listener);
    exchange(fd, options, true);
    return pp_wait_child(child, 0);
}

} // namespace

int main(int argc, char *argv[])
{
    // --spin and --oneway are ours; the rest are the options every ping-pong shares.
    g_spin = pp_take_flag(&argc, argv, "--spin");
    const bool oneway = pp_take_flag(&argc, argv, "--oneway");
    pp_options options;
    int status = pp_parse_options(argc, argv, &options);
    if (status != PP_RUN)
        return status;
    options.oneway = oneway;
    try {
        return run(options);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "raw-pingpong: %s\n", e.what());
        return 1;
    }
}
