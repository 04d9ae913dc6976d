#include "pingpong.h"

#include "../../bench/pingpong.h"

#include <QByteArray>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace mmpi::bench {

namespace {

constexpr int PingTag = 1;
constexpr int PongTag = 2;

// One step of the schedule: rank 0 sends `window` messages (one for a round
// trip, a burst with --oneway) and receives the reply, the first `replyItems`
// of the buffer (the whole message back, or one item); rank 1 mirrors it. The
// buffer is reused, so nothing is allocated per message.
template<typename T>
Result<void> step(const Communicator &comm, std::span<T> buffer, long window, size_t replyItems)
{
    const bool root = comm.rank() == 0;
    const int peer = root ? 1 : 0;
    const auto reply = buffer.first(replyItems);
    for (long i = 0; i < window; ++i) {
        if (root) {
            if (auto sent = comm.send(peer, PingTag, std::span<const T>(buffer)).wait(); !sent)
                return sent.error();
        } else if (auto got = comm.recv(buffer, peer, PingTag).wait(); !got) {
            return got.error();
        }
    }
    if (root) {
        if (auto got = comm.recv(reply, peer, PongTag).wait(); !got)
            return got.error();
    } else if (auto sent = comm.send(peer, PongTag, std::span<const T>(reply)).wait(); !sent) {
        return sent.error();
    }
    return success();
}

// The same with QByteArray messages, which MMPI sends and hands over
// without copying them (implicit sharing): the echo side replies with the
// array it received last, cut to `replySize` bytes.
Result<void> stepShared(const Communicator &comm, const QByteArray &message, long window, qsizetype replySize)
{
    const bool root = comm.rank() == 0;
    const int peer = root ? 1 : 0;
    if (root) {
        for (long i = 0; i < window; ++i)
            if (auto sent = comm.send(peer, PingTag, message).wait(); !sent)
                return sent.error();
        auto got = comm.recv<QByteArray>(peer, PongTag).wait();
        if (!got)
            return got.error();
        return got->size() == replySize ? success()
                                         : Result<void>(Error{ErrorCode::CountMismatch,
                                                              QStringLiteral("the reply has %1 bytes, not %2")
                                                                  .arg(got->size()).arg(replySize)});
    }
    QByteArray last;
    for (long i = 0; i < window; ++i) {
        auto got = comm.recv<QByteArray>(peer, PingTag).wait();
        if (!got)
            return got.error();
        last = *got;
    }
    if (last.size() != replySize)
        last.truncate(replySize);
    if (auto sent = comm.send(peer, PongTag, last).wait(); !sent)
        return sent.error();
    return success();
}

} // namespace

int runPingPong(const Communicator &comm, int argc, char **argv, const QString &transport)
{
    pp_options options;
    const bool shared = pp_take_flag(&argc, argv, "--qbytearray");
    const bool doubles = pp_take_flag(&argc, argv, "--doubles");
    const bool oneway = pp_take_flag(&argc, argv, "--oneway");
    if (const int status = pp_parse_options(argc, argv, &options); status != PP_RUN)
        return status;
    options.oneway = oneway;
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
        const size_t replyBytes = pp_reply_size(&schedule);
        const long window = schedule.window;
        if (shared && message.size() != qsizetype(bytes.size()))
            message = QByteArray(qsizetype(bytes.size()), char(0x5a));
        const double start = pp_now_us();
        const auto ok = shared    ? stepShared(comm, message, window, qsizetype(replyBytes))
                        : doubles ? step(comm, items, window, std::max<size_t>(1, replyBytes / sizeof(double)))
                                  : step(comm, bytes, window, replyBytes);
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
