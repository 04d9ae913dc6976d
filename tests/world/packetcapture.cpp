// packetcapture: records every frame on one interface, both ways, for
// tst_capture_netns, which runs it inside a network namespace. A raw
// AF_PACKET socket of its own, so the test needs neither tcpdump nor libpcap.
//   packetcapture <interface> <file> <most seconds>
// Prints "READY" once it listens and "CAPTURED <frames> <bytes>" when it
// stops: at SIGTERM, or after the given seconds so that it never outlives a
// test that died. Each record of <file>: the frame's length (u32,
// big-endian), then its bytes from the Ethernet header on.
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

volatile std::sig_atomic_t stopping = 0;

void stop(int)
{
    stopping = 1;
}

// Without SA_RESTART: the signal ends the poll() it interrupts.
void stopOn(int signal)
{
    struct sigaction action = {};
    action.sa_handler = stop;
    sigaction(signal, &action, nullptr);
}

int openCapture(const char *interface)
{
    const unsigned index = if_nametoindex(interface);
    if (index == 0)
        return -1;
    const int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (fd < 0)
        return -1;
    sockaddr_ll where = {};
    where.sll_family = AF_PACKET;
    where.sll_protocol = htons(ETH_P_ALL);
    where.sll_ifindex = int(index);
    if (bind(fd, reinterpret_cast<sockaddr *>(&where), sizeof where) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

bool record(std::FILE *out, const unsigned char *frame, ssize_t size)
{
    const uint32_t length = htonl(uint32_t(size));
    return std::fwrite(&length, sizeof length, 1, out) == 1 && std::fwrite(frame, size_t(size), 1, out) == 1
        && std::fflush(out) == 0;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s <interface> <file> <most seconds>\n", argv[0]);
        return 2;
    }
    stopOn(SIGTERM);
    stopOn(SIGINT);
    std::FILE *out = std::fopen(argv[2], "wb");
    const int fd = openCapture(argv[1]);
    if (!out || fd < 0) {
        std::perror(out ? argv[1] : argv[2]);
        return 1;
    }
    std::puts("READY");
    std::fflush(stdout);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(std::atoi(argv[3]));
    // Large enough for a veth's segmentation-offloaded frames (up to 64 KiB and headers).
    std::vector<unsigned char> buffer(256 * 1024);
    long frames = 0;
    long long bytes = 0;
    while (!stopping && std::chrono::steady_clock::now() < deadline) {
        pollfd readable = {fd, POLLIN, 0};
        if (poll(&readable, 1, 100) <= 0)
            continue;
        const ssize_t size = recv(fd, buffer.data(), buffer.size(), 0);
        if (size <= 0)
            continue;
        if (!record(out, buffer.data(), size)) {
            std::perror(argv[2]);
            return 1;
        }
        ++frames;
        bytes += size;
    }
    std::printf("CAPTURED %ld %lld\n", frames, bytes);
    std::fclose(out);
    close(fd);
    return 0;
}
