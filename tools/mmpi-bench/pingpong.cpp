#include "pingpong.h"

#include "../../bench/pingpong.h"

#include <QByteArray>

#include <cstdio>
#include <vector>

namespace mmpi::bench {

namespace {

constexpr int PingTag = 1;
constexpr int PongTag = 2;

// One round trip from rank 0's side (send, then receive in place), or rank 1's
// echo; the buffer is reused so nothing is allocated per message.
Result<void> roundTrip(const Communicator &comm, std::span<quint8> buffer)
{
    const bool root = comm.rank() == 0;
    const int peer = root ? 1 : 0;
    if (root) {
        if (auto sent = comm.send(peer, PingTag, std::span<const quint8>(buffer)).wait(); !sent)
            return sent.error();
        if (auto got = comm.recv(buffer, peer, PongTag).wait(); !got)
            return got.error();
        return success();
    }
    if (auto got = comm.recv(buffer, peer, PingTag).wait(); !got)
        return got.error();
    if (auto sent = comm.send(peer, PongTag, std::span<const quint8>(buffer)).wait(); !sent)
        return sent.error();
    return success();
}

} // namespace

int runPingPong(const Communicator &comm, int argc, char **argv, const QString &transport)
{
    pp_options options;
    if (const int status = pp_parse_options(argc, argv, &options); status != PP_RUN)
        return status;
    if (comm.size() != 2) {
        std::fprintf(stderr, "mmpi-bench pingpong needs exactly 2 ranks (mmpirun -n 2), not %d\n", comm.size());
        return 2;
    }
    pp_schedule schedule;
    if (!pp_schedule_start(&schedule, &options))
        return 1;
    std::vector<quint8> buffer(pp_largest_size(&options), 0x5a);
    while (!pp_schedule_finished(&schedule)) {
        const auto bytes = std::span<quint8>(buffer.data(), pp_schedule_size(&schedule));
        const double start = pp_now_us();
        if (auto ok = roundTrip(comm, bytes); !ok) {
            std::fprintf(stderr, "mmpi-bench: %s\n", qPrintable(ok.error().toString()));
            pp_schedule_free(&schedule);
            return 1;
        }
        pp_schedule_record(&schedule, pp_now_us() - start);
    }
    if (comm.rank() == 0)
        pp_print(&schedule, qPrintable(transport));
    pp_schedule_free(&schedule);
    return 0;
}

} // namespace mmpi::bench
