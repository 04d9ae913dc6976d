// zmq-pingpong: the library baseline for mmpi-bench pingpong over tcp. ZeroMQ,
// like MMPI, has an I/O thread that owns the socket while the application
// thread hands it whole messages: two ZMQ_PAIR sockets over tcp on 127.0.0.1,
// one process each (fork() before any context: a ZeroMQ context must not cross
// a fork), blocking zmq_send/zmq_recv into preallocated buffers, ZeroMQ's
// defaults otherwise (its tcp sockets set TCP_NODELAY). With --oneway, bursts
// from rank 0 that rank 1 answers with a byte. docs/guide/benchmarks.md
#include "pingpong.h"

#include <zmq.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fail(const std::string &what)
{
    throw std::runtime_error(what + ": " + zmq_strerror(zmq_errno()));
}

// Long enough for rank 1's last reply to leave after it closes; bounded so a
// vanished rank 0 cannot keep it forever.
constexpr int LingerMs = 10000;
// A ZMQ_PAIR socket does not say that its peer is gone: a rank that neither
// gets nor hands over a message for this long gives up (a 4 MiB message on
// loopback takes milliseconds), instead of outliving the other.
constexpr int StallMs = 60000;

// A context with one ZMQ_PAIR socket, closed in order on the way out.
class Pair
{
public:
    Pair()
        : m_context(zmq_ctx_new())
    {
        if (!m_context || !(m_socket = zmq_socket(m_context, ZMQ_PAIR)))
            fail("zmq_socket");
        if (zmq_setsockopt(m_socket, ZMQ_LINGER, &LingerMs, sizeof LingerMs) != 0
            || zmq_setsockopt(m_socket, ZMQ_RCVTIMEO, &StallMs, sizeof StallMs) != 0
            || zmq_setsockopt(m_socket, ZMQ_SNDTIMEO, &StallMs, sizeof StallMs) != 0)
            fail("zmq_setsockopt");
    }
    ~Pair()
    {
        if (m_socket)
            zmq_close(m_socket);
        if (m_context)
            zmq_ctx_term(m_context);
    }
    Pair(const Pair &) = delete;
    Pair &operator=(const Pair &) = delete;

    // Binds to 127.0.0.1 and an ephemeral port, and returns the port.
    unsigned short bindToLoopback()
    {
        if (zmq_bind(m_socket, "tcp://127.0.0.1:*") != 0)
            fail("bind to 127.0.0.1");
        char endpoint[256] = {};
        size_t length = sizeof endpoint;
        if (zmq_getsockopt(m_socket, ZMQ_LAST_ENDPOINT, endpoint, &length) != 0)
            fail("ZMQ_LAST_ENDPOINT");
        const std::string text(endpoint);
        return static_cast<unsigned short>(std::stoul(text.substr(text.rfind(':') + 1)));
    }

    void connectTo(unsigned short port)
    {
        if (zmq_connect(m_socket, ("tcp://127.0.0.1:" + std::to_string(port)).c_str()) != 0)
            fail("connect to 127.0.0.1");
    }

    pp_link link() { return {m_socket, sendMessage, receiveMessage}; }

private:
    static int sendMessage(void *socket, const char *data, size_t size)
    {
        if (zmq_send(socket, data, size, 0) != int(size))
            fail("zmq_send"); // EAGAIN: StallMs without the peer taking it
        return 0;
    }

    // One whole message of exactly `size` bytes (zmq_recv returns the
    // message's full length, also when it had to cut it).
    static int receiveMessage(void *socket, char *data, size_t size)
    {
        const int n = zmq_recv(socket, data, size, 0);
        if (n < 0)
            fail("zmq_recv"); // EAGAIN: nothing for StallMs
        if (size_t(n) != size)
            throw std::runtime_error("a message of " + std::to_string(n) + " bytes, not " + std::to_string(size));
        return 0;
    }

    void *m_context;
    void *m_socket = nullptr;
};

// Runs rank 0's side (timing, prints) or rank 1's over the connected `pair`.
void exchange(Pair &pair, const pp_options &options, bool timing)
{
    pp_schedule schedule;
    if (!pp_schedule_start(&schedule, &options))
        throw std::runtime_error("out of memory");
    std::vector<char> out(pp_largest_size(&options), 'x'), in(out.size());
    const pp_link link = pair.link();
    pp_link_run(&link, &schedule, timing, out.data(), in.data());
    if (timing)
        pp_print(&schedule, "zmq-tcp");
    pp_schedule_free(&schedule);
}

int runRank0(const pp_options &options, int portPipe)
{
    std::unique_ptr<Pair> pair;
    unsigned short port = 0;
    try {
        pair = std::make_unique<Pair>();
        port = pair->bindToLoopback();
    } catch (...) {
        pp_tell_port(portPipe, 0); // rank 1 gives up instead of waiting
        throw;
    }
    if (pp_tell_port(portPipe, port) != 0)
        throw std::runtime_error("cannot tell rank 1 the port");
    exchange(*pair, options, true);
    return 0;
}

int runRank1(const pp_options &options, int portPipe)
{
    const unsigned short port = pp_learn_port(portPipe);
    if (port == 0)
        return 1;
    Pair pair;
    pair.connectTo(port);
    exchange(pair, options, false);
    return 0;
}

int runRank(const pp_options &options, pid_t child, int portPipe)
{
    try {
        return child == 0 ? runRank1(options, portPipe) : runRank0(options, portPipe);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "zmq-pingpong: rank %d: %s\n", child == 0 ? 1 : 0, e.what());
        return 1;
    }
}

} // namespace

int main(int argc, char *argv[])
{
    const bool oneway = pp_take_flag(&argc, argv, "--oneway");
    pp_options options;
    const int status = pp_parse_options(argc, argv, &options);
    if (status != PP_RUN)
        return status;
    options.oneway = oneway;
    int portPipe = -1;
    const pid_t child = pp_fork_rank1(&portPipe);
    if (child < 0) {
        std::perror("zmq-pingpong: pipe/fork");
        return 1;
    }
    const int rankStatus = runRank(options, child, portPipe);
    return child == 0 ? rankStatus : pp_wait_child(child, rankStatus);
}
