#include "pingpong.h"

#include "../../bench/pingpong.h"

#include <QByteArray>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace mmpi::bench {

namespace {

constexpr int PingTag = 1;
constexpr int PongTag = 2;

// One round trip from rank 0's side (send, then receive in place), or rank 1's
// echo; the buffer is reused so nothing is allocated per message.
template<typename T>
Result<void> roundTrip(const Communicator &comm, std::span<T> buffer)
{
    const bool root = comm.rank() == 0;
    const int peer = root ? 1 : 0;
    if (root) {
        if (auto sent = comm.send(peer, PingTag, std::span<const T>(buffer)).wait(); !sent)
            return sent.error();
        if (auto got = comm.recv(buffer, peer, PongTag).wait(); !got)
            return got.error();
        return success();
    }
    if (auto got = comm.recv(buffer, peer, PingTag).wait(); !got)
        return got.error();
    if (auto sent = comm.send(peer, PongTag, std::span<const T>(buffer)).wait(); !sent)
        return sent.error();
    return success();
}

// The same with QByteArray messages, which MMPI sends and hands over
// without copying them (implicit sharing): the echo side sends back the
// array it received.
Result<void> roundTripShared(const Communicator &comm, const QByteArray &message)
{
    const bool root = comm.rank() == 0;
    const int peer = root ? 1 : 0;
    if (root) {
        if (auto sent = comm.send(peer, PingTag, message).wait(); !sent)
            return sent.error();
        auto got = comm.recv<QByteArray>(peer, PongTag).wait();
        if (!got)
            return got.error();
        return got->size() == message.size() ? success()
                                              : Result<void>(Error{ErrorCode::CountMismatch,
                                                                   QStringLiteral("the echo has %1 bytes, not %2")
                                                                       .arg(got->size()).arg(message.size())});
    }
    auto got = comm.recv<QByteArray>(peer, PingTag).wait();
    if (!got)
        return got.error();
    if (auto sent = comm.send(peer, PongTag, *got).wait(); !sent)
        return sent.error();
    return success();
}

// Takes mmpi-bench's own flags (`--qbytearray`, `--doubles`) out of the
// options the baselines share.
bool takeFlag(int &argc, char **argv, const char *flag)
{
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], flag) != 0)
            continue;
        std::copy(argv + i + 1, argv + argc, argv + i);
        --argc;
        return true;
    }
    return false;
}

} // namespace

int runPingPong(const Communicator &comm, int argc, char **argv, const QString &transport)
{
    pp_options options;
    const bool shared = takeFlag(argc, argv, "--qbytearray");
    const bool doubles = takeFlag(argc, argv, "--doubles");
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
    // --doubles: the size in whole doubles (at least one), a typed message
    // that travels in the host's byte order (docs/design/protocol.md).
    std::vector<double> numbers(pp_largest_size(&options) / sizeof(double) + 1, 0.5);
    QByteArray message;
    while (!pp_schedule_finished(&schedule)) {
        const auto bytes = std::span<quint8>(buffer.data(), pp_schedule_size(&schedule));
        const auto items = std::span<double>(numbers.data(), std::max<size_t>(1, bytes.size() / sizeof(double)));
        if (shared && message.size() != qsizetype(bytes.size()))
            message = QByteArray(qsizetype(bytes.size()), char(0x5a));
        const double start = pp_now_us();
        const auto ok = shared ? roundTripShared(comm, message) : doubles ? roundTrip(comm, items) : roundTrip(comm, bytes);
        if (!ok) {
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
