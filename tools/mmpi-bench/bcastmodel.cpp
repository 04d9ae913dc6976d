#include "bcastmodel.h"

#include "../../bench/collectives.h"

#include <mmpi/comm/bcastplan.h>

#include <QString>

#include <cstdio>
#include <cstdlib>

namespace mmpi::bench {

namespace {

// IPv4 (20 bytes) and TCP with the timestamp option Linux sends (20 + 12):
// what every packet of a tcp link carries besides the payload.
constexpr double TcpIpHeaderBytes = 52;

struct ModelOptions
{
    int ranks = 8;
    double latencyMs = 30;  // the emulator's bluetooth profile (docs/guide/linkemu.md)
    double rate = 90000;    // bytes per second on the wire
    double mtu = 1500;
    cb_options sizes{};
    bool json = false;
};

int modelUsage(FILE *out, int status)
{
    std::fprintf(out,
                 "usage: mmpi-bench bcast-model [--ranks N] [--latency-ms L] [--rate BYTES_PER_S] [--mtu M]\n"
                 "       [--sizes N,N,...] [--json]\n"
                 "  The broadcast model's time for every topology (its best segmentation) over tcp\n"
                 "  on links of one-way latency L and R bytes per second on the wire (IP packets of\n"
                 "  at most M bytes): the link emulator's profiles. Defaults: 8 ranks, 30 ms, 90000,\n"
                 "  1500 (bluetooth), sizes " CB_DEFAULT_SIZES ".\n");
    return status;
}

bool parseNumber(const char *text, double low, double high, double *value)
{
    char *end = nullptr;
    const double v = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(v >= low && v <= high))
        return false;
    *value = v;
    return true;
}

// The tcp link as the model sees it: a frame's payload shares each packet
// with the headers (bytesPerUs counts payload), and a small frame pays one
// packet's headers (overheadUs).
LinkModel tcpLinkModel(const ModelOptions &o)
{
    const double wireBytesPerUs = o.rate / 1e6;
    const double payloadPerPacket = o.mtu - TcpIpHeaderBytes;
    return LinkModel{o.latencyMs * 1000.0, wireBytesPerUs * payloadPerPacket / o.mtu,
                     TcpIpHeaderBytes / wireBytesPerUs};
}

void printJson(const ModelOptions &o, const LinkModel &link)
{
    std::printf("{\"op\":\"bcast-model\",\"ranks\":%d,\"latency_ms\":%g,\"rate\":%g,\"mtu\":%g,\"results\":[", o.ranks,
                o.latencyMs, o.rate, o.mtu);
    for (int s = 0; s < o.sizes.size_count; ++s) {
        const qint64 bytes = qint64(o.sizes.sizes[s]);
        const BcastPlan best = planBcast(o.ranks, bytes, link);
        std::printf("%s{\"size\":%lld,\"best\":\"%s\",\"best_us\":%.1f,\"segment\":%lld", s ? "," : "",
                    static_cast<long long>(bytes), qPrintable(bcastTopologyName(best.topology)), best.predictedUs,
                    static_cast<long long>(best.segmentBytes));
        for (int t = 1; t < CB_MAX_TOPOLOGIES; ++t) {
            const auto topology = bcastTopologyFromName(QString::fromLatin1(cb_topology_names[t]));
            std::printf(",\"%s_us\":%.1f", cb_topology_names[t], planBcast(o.ranks, bytes, link, *topology).predictedUs);
        }
        std::printf("}");
    }
    std::printf("]}\n");
}

void printTable(const ModelOptions &o, const LinkModel &link)
{
    std::printf("bcast model, %d ranks, %g ms one way, %g B/s on the wire, MTU %g: milliseconds\n", o.ranks,
                o.latencyMs, o.rate, o.mtu);
    std::printf("%10s", "size");
    for (int t = 1; t < CB_MAX_TOPOLOGIES; ++t)
        std::printf("%11s", cb_topology_names[t]);
    std::printf("%11s %s\n", "best", "topology (segment)");
    for (int s = 0; s < o.sizes.size_count; ++s) {
        const qint64 bytes = qint64(o.sizes.sizes[s]);
        std::printf("%10lld", static_cast<long long>(bytes));
        for (int t = 1; t < CB_MAX_TOPOLOGIES; ++t) {
            const auto topology = bcastTopologyFromName(QString::fromLatin1(cb_topology_names[t]));
            std::printf("%11.1f", planBcast(o.ranks, bytes, link, *topology).predictedUs / 1000);
        }
        const BcastPlan best = planBcast(o.ranks, bytes, link);
        std::printf("%11.1f %s (%lld)\n", best.predictedUs / 1000, qPrintable(bcastTopologyName(best.topology)),
                    static_cast<long long>(best.segmentBytes));
    }
}

} // namespace

int runBcastModel(int argc, char **argv)
{
    ModelOptions o;
    cb_parse_sizes(CB_DEFAULT_SIZES, &o.sizes);
    bool ok = true;
    int i = 1;
    for (; i < argc && ok; ++i) {
        const char *value = nullptr;
        double number = 0;
        if (std::strcmp(argv[i], "--json") == 0)
            o.json = true;
        else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0)
            return modelUsage(stdout, 0);
        else if ((value = pp_option_value(argc, argv, &i, "--sizes")))
            ok = cb_parse_sizes(value, &o.sizes);
        else if ((value = pp_option_value(argc, argv, &i, "--ranks")))
            ok = parseNumber(value, 1, 1024, &number) && number == int(number) && (o.ranks = int(number), true);
        else if ((value = pp_option_value(argc, argv, &i, "--latency-ms")))
            ok = parseNumber(value, 0, 60000, &o.latencyMs);
        else if ((value = pp_option_value(argc, argv, &i, "--rate")))
            ok = parseNumber(value, 1000, 1e11, &o.rate);
        else if ((value = pp_option_value(argc, argv, &i, "--mtu")))
            ok = parseNumber(value, 576, 65535, &o.mtu);
        else
            ok = false;
    }
    if (!ok) {
        std::fprintf(stderr, "mmpi-bench bcast-model: bad argument '%s'\n", argv[i - 1]);
        return modelUsage(stderr, 2);
    }
    const LinkModel link = tcpLinkModel(o);
    if (o.json)
        printJson(o, link);
    else
        printTable(o, link);
    return 0;
}

} // namespace mmpi::bench
