#include "stream.h"

#include <mmpi/world/world.h>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QThread>
#include <QtEndian>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace mmpi::bench {

namespace {

constexpr int StreamTag = 1;
constexpr int ResultTag = 2;
constexpr qint64 EndMarker = -1;
constexpr qint64 MaxCount = 1'000'000'000;
constexpr qint64 MaxSize = 64LL * 1024 * 1024;

struct StreamOptions
{
    qint64 count = 10000;
    qint64 size = 64;
    qint64 rate = 0; // messages per second; 0: as fast as the link takes them
    bool json = false;
};

// What rank 1 saw, sent back to rank 0 as one message.
struct Tally
{
    qint64 received = 0;
    qint64 lost = 0;
    qint64 duplicates = 0;
    qint64 outOfOrder = 0;
    qint64 reconnects = 0;
    bool clean() const { return lost == 0 && duplicates == 0 && outOfOrder == 0; }
};

void printUsage(FILE *out)
{
    std::fprintf(out, "usage: mmpirun -n 2 mmpi-bench stream [--count N] [--size BYTES] [--rate PER_S] [--json]\n"
                      "  Rank 0 sends rank 1 N numbered messages of BYTES bytes (default 10000 of 64,\n"
                      "  at least 8), at most PER_S a second if given (a paced stream, e.g. to cut a\n"
                      "  link in its middle); rank 1 checks each arrives once and in order. Exits 1 if\n"
                      "  any was lost, doubled or out of order.\n");
}

// 0: parsed; otherwise the exit status.
int parse(int argc, char **argv, StreamOptions &options)
{
    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i];
        const auto number = [&](qint64 min, qint64 max, qint64 &into) {
            char *end = nullptr;
            const long long value = i + 1 < argc ? std::strtoll(argv[i + 1], &end, 10) : 0;
            if (i + 1 >= argc || *end != '\0' || value < min || value > max) {
                std::fprintf(stderr, "mmpi-bench stream: %s needs a number from %lld to %lld\n", arg,
                             (long long)min, (long long)max);
                return false;
            }
            into = value;
            ++i;
            return true;
        };
        if (std::strcmp(arg, "--help") == 0 || std::strcmp(arg, "-h") == 0) {
            printUsage(stdout);
            return -1;
        }
        if (std::strcmp(arg, "--json") == 0)
            options.json = true;
        else if (std::strcmp(arg, "--count") == 0 ? !number(1, MaxCount, options.count)
                 : std::strcmp(arg, "--size") == 0 ? !number(8, MaxSize, options.size)
                 : std::strcmp(arg, "--rate") == 0 ? !number(0, MaxCount, options.rate)
                                                   : (std::fprintf(stderr, "mmpi-bench stream: unknown option %s\n", arg), true)) {
            printUsage(stderr);
            return 2;
        }
    }
    return 0;
}

Result<void> sendAll(const Communicator &comm, const StreamOptions &options)
{
    std::vector<quint8> message(size_t(options.size), 0x5a);
    QElapsedTimer clock;
    clock.start();
    for (qint64 n = 0; n <= options.count; ++n) {
        // Paced: message n is due n / rate seconds after the start.
        if (options.rate > 0) {
            const qint64 aheadUs = n * 1'000'000 / options.rate - clock.nsecsElapsed() / 1000;
            if (aheadUs > 1000)
                QThread::usleep(quint64(aheadUs));
        }
        qToBigEndian<qint64>(n == options.count ? EndMarker : n, message.data());
        if (auto sent = comm.send(1, StreamTag, std::span<const quint8>(message)).wait(); !sent)
            return sent.error();
    }
    return success();
}

Result<Tally> receiveAll(const Communicator &comm, const StreamOptions &options)
{
    std::vector<quint8> message(size_t(options.size));
    std::vector<bool> seen(size_t(options.count), false);
    Tally tally;
    qint64 expected = 0;
    for (;;) {
        if (auto got = comm.recv(std::span<quint8>(message), 0, StreamTag).wait(); !got)
            return got.error();
        const qint64 n = qFromBigEndian<qint64>(message.data());
        if (n == EndMarker)
            break;
        ++tally.received;
        if (n < 0 || n >= options.count || seen[size_t(n)]) {
            ++tally.duplicates;
            continue;
        }
        seen[size_t(n)] = true;
        if (n != expected)
            ++tally.outOfOrder;
        expected = n + 1;
    }
    tally.lost = options.count - qint64(std::count(seen.begin(), seen.end(), true));
    return tally;
}

void print(const StreamOptions &options, const Tally &t, double seconds, const QString &transport)
{
    if (options.json) {
        std::printf("{\"op\":\"stream\",\"transport\":\"%s\",\"ranks\":2,\"results\":[{\"size\":%lld,\"sent\":%lld,"
                    "\"received\":%lld,\"lost\":%lld,\"duplicates\":%lld,\"out_of_order\":%lld,\"reconnects\":%lld,"
                    "\"seconds\":%.3f}]}\n",
                    qPrintable(transport), (long long)options.size, (long long)options.count, (long long)t.received,
                    (long long)t.lost, (long long)t.duplicates, (long long)t.outOfOrder, (long long)t.reconnects,
                    seconds);
    } else {
        std::printf("stream over %s: %lld messages of %lld bytes from rank 0 to rank 1\n", qPrintable(transport),
                    (long long)options.count, (long long)options.size);
        std::printf("%10s %10s %8s %11s %13s %11s %9s\n", "sent", "received", "lost", "duplicates", "out_of_order",
                    "reconnects", "seconds");
        std::printf("%10lld %10lld %8lld %11lld %13lld %11lld %9.3f\n", (long long)options.count,
                    (long long)t.received, (long long)t.lost, (long long)t.duplicates, (long long)t.outOfOrder,
                    (long long)t.reconnects, seconds);
    }
    std::fflush(stdout);
}

} // namespace

int runStream(World *world, const Communicator &comm, int argc, char **argv, const QString &transport)
{
    StreamOptions options;
    if (const int status = parse(argc, argv, options); status != 0)
        return status < 0 ? 0 : status;
    if (comm.size() != 2) {
        std::fprintf(stderr, "mmpi-bench stream needs exactly 2 ranks (mmpirun -n 2), not %d\n", comm.size());
        return 2;
    }
    // Counted from the signals once the stream is over: they queue up on this
    // thread while it blocks in send and receive.
    qint64 returned = 0;
    QObject::connect(world, &World::nodeReturned, world, [&](int) { ++returned; });
    QElapsedTimer clock;
    clock.start();
    if (comm.rank() == 1) {
        auto tally = receiveAll(comm, options);
        if (!tally) {
            std::fprintf(stderr, "mmpi-bench stream: %s\n", qPrintable(tally.error().toString()));
            return 1;
        }
        QCoreApplication::processEvents();
        tally->reconnects = returned;
        const qint64 fields[] = {tally->received, tally->lost, tally->duplicates, tally->outOfOrder, tally->reconnects};
        if (auto sent = comm.send(0, ResultTag, std::span<const qint64>(fields)).wait(); !sent) {
            std::fprintf(stderr, "mmpi-bench stream: %s\n", qPrintable(sent.error().toString()));
            return 1;
        }
        return tally->clean() ? 0 : 1;
    }
    qint64 fields[5] = {};
    auto ok = sendAll(comm, options);
    if (ok)
        if (auto got = comm.recv(std::span<qint64>(fields), 1, ResultTag).wait(); !got)
            ok = got.error();
    if (!ok) {
        std::fprintf(stderr, "mmpi-bench stream: %s\n", qPrintable(ok.error().toString()));
        return 1;
    }
    QCoreApplication::processEvents();
    const Tally tally{fields[0], fields[1], fields[2], fields[3], std::max(fields[4], returned)};
    print(options, tally, double(clock.nsecsElapsed()) / 1e9, transport);
    if (!tally.clean())
        std::fprintf(stderr, "mmpi-bench stream: %lld lost, %lld duplicated, %lld out of order\n",
                     (long long)tally.lost, (long long)tally.duplicates, (long long)tally.outOfOrder);
    return tally.clean() ? 0 : 1;
}

} // namespace mmpi::bench
