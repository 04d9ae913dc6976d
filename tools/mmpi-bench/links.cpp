#include "links.h"

#include <mmpi/world/world.h>

#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QThread>

#include <algorithm>
#include <array>
#include <cstdio>

namespace mmpi::bench {

namespace {

// Often enough to time a radio's first round trip (60 ms on Bluetooth)
// within a few percent, seldom enough to leave the progress thread alone.
constexpr int PollMs = 5;

// One rank's view, as gathered: when (ms after formation) it had the round
// trip of every peer, and a rate on some link (-1: not within the wait),
// the median one-way latency (µs) and the median rate (bytes per second).
struct View
{
    double latencyKnownMs = -1;
    double rateKnownMs = -1;
    double latencyUs = 0;
    double rate = 0;
    std::array<double, 4> items() const { return {latencyKnownMs, rateKnownMs, latencyUs, rate}; }
    bool complete() const { return latencyKnownMs >= 0 && rateKnownMs >= 0; }
};

double median(std::vector<double> values)
{
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The latencies and rates of the peers measured so far, as LinkTable reads them.
void sample(const World &world, std::vector<double> &latencies, std::vector<double> &rates)
{
    latencies.clear();
    rates.clear();
    for (int peer = 0; peer < world.size(); ++peer) {
        if (peer == world.rank())
            continue;
        const auto quality = world.linkQuality(peer);
        if (!quality)
            continue;
        if (quality->roundTripSamples > 0)
            latencies.push_back(double(quality->minRoundTrip.count()) / 2);
        if (const double rate = quality->measuredRate(); rate > 0)
            rates.push_back(rate);
    }
}

View watch(const World &world, int waitMs)
{
    View view;
    QElapsedTimer clock;
    clock.start();
    std::vector<double> latencies, rates;
    const size_t peers = size_t(world.size() - 1);
    while (!view.complete() && clock.elapsed() < waitMs) {
        sample(world, latencies, rates);
        if (view.latencyKnownMs < 0 && latencies.size() == peers)
            view.latencyKnownMs = double(clock.elapsed());
        if (view.rateKnownMs < 0 && (!rates.empty() || peers == 0))
            view.rateKnownMs = double(clock.elapsed());
        if (!view.complete())
            QThread::msleep(PollMs);
    }
    sample(world, latencies, rates);
    view.latencyUs = median(latencies);
    view.rate = median(rates);
    return view;
}

void print(const QList<double> &all, int ranks, int waitMs, bool json, const QString &transport)
{
    const auto field = [&](int rank, int i) { return all.at(rank * 4 + i); };
    if (json) {
        std::printf("{\"op\":\"links\",\"transport\":\"%s\",\"ranks\":%d,\"wait_ms\":%d,\"results\":[", qPrintable(transport),
                    ranks, waitMs);
        for (int r = 0; r < ranks; ++r)
            std::printf("%s{\"rank\":%d,\"latency_known_ms\":%.0f,\"rate_known_ms\":%.0f,\"latency_us\":%.0f,"
                        "\"rate\":%.0f}",
                        r ? "," : "", r, field(r, 0), field(r, 1), field(r, 2), field(r, 3));
        std::printf("]}\n");
        return;
    }
    std::printf("links of a fresh world over %s, %d ranks (-: not known within %d ms)\n", qPrintable(transport), ranks,
                waitMs);
    std::printf("%6s %18s %14s %16s %14s\n", "rank", "latencies at (ms)", "latency (ms)", "a rate at (ms)", "rate (B/s)");
    for (int r = 0; r < ranks; ++r) {
        const auto known = [](double ms) { return ms < 0 ? QStringLiteral("-") : QString::number(ms, 'f', 0); };
        std::printf("%6d %18s %14.1f %16s %14.0f\n", r, qPrintable(known(field(r, 0))), field(r, 2) / 1000,
                    qPrintable(known(field(r, 1))), field(r, 3));
    }
}

} // namespace

int runLinks(const World *world, const Communicator &comm, int argc, char **argv, const QString &transport)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "What a fresh world knows of its links, and how soon: every rank watches its own, sending nothing,\n"
        "until it has each peer's round trip and a rate; rank 0 prints each rank's view."));
    parser.addOption({QStringLiteral("wait"), QStringLiteral("Give up after MS milliseconds (default 5000)."),
                      QStringLiteral("MS"), QStringLiteral("5000")});
    parser.addOption({QStringLiteral("json"), QStringLiteral("One JSON line.")});
    parser.addHelpOption();
    QStringList args;
    for (int i = 0; i < argc; ++i)
        args << QString::fromLocal8Bit(argv[i]);
    bool ok = false;
    const int waitMs = parser.parse(args) ? parser.value(QStringLiteral("wait")).toInt(&ok) : 0;
    if (!ok || waitMs < 1 || waitMs > 600000) {
        std::fprintf(stderr, "mmpi-bench links: %s\n%s",
                     qPrintable(parser.errorText().isEmpty() ? QStringLiteral("--wait needs 1..600000 ms")
                                                             : parser.errorText()),
                     qPrintable(parser.helpText()));
        return 2;
    }
    if (parser.isSet(QStringLiteral("help"))) {
        std::printf("%s", qPrintable(parser.helpText()));
        return 0;
    }
    const View view = watch(*world, waitMs);
    const auto items = view.items();
    const auto all = comm.gather(std::span<const double>(items), 0).wait();
    if (!all) {
        std::fprintf(stderr, "mmpi-bench links: %s\n", qPrintable(all.error().toString()));
        return 1;
    }
    if (comm.rank() != 0)
        return view.complete() ? 0 : 1;
    print(*all, comm.size(), waitMs, parser.isSet(QStringLiteral("json")), transport);
    for (int r = 0; r < comm.size(); ++r)
        if (all->at(r * 4) < 0 || all->at(r * 4 + 1) < 0)
            return 1;
    return 0;
}

} // namespace mmpi::bench
