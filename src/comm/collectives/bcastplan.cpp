#include <mmpi/comm/bcastplan.h>

#include <mmpi/wire/frame.h>

#include "nametable.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace mmpi {

namespace {

constexpr detail::Named<BcastTopology> Names[] = {
    {BcastTopology::Auto, "auto"},         {BcastTopology::Serial, "serial"},
    {BcastTopology::Pipe, "pipe"},         {BcastTopology::Binary, "binary"},
    {BcastTopology::Binomial, "binomial"}, {BcastTopology::Fibonacci, "fibonacci"},
};

// Bytes of each segment of a message of `bytes` sent in `segmentBytes` slices.
std::vector<qint64> segmentSizes(qint64 bytes, qint64 segmentBytes)
{
    if (segmentBytes <= 0 || bytes <= segmentBytes)
        return {bytes};
    std::vector<qint64> sizes;
    for (qint64 offset = 0; offset < bytes; offset += segmentBytes)
        sizes.push_back(std::min(segmentBytes, bytes - offset));
    return sizes;
}

double occupation(qint64 bytes, const LinkModel &link)
{
    return frameOccupancyUs(bytes, link);
}

// g: the sender is busy with one child for the whole message; h: the child
// can forward once the first segment (or, unsegmented, all of it) is in.
void fibonacciParameters(qint64 bytes, qint64 segmentBytes, const LinkModel &link, double *g, double *h)
{
    const auto sizes = segmentSizes(bytes, segmentBytes);
    double total = 0;
    for (qint64 s : sizes)
        total += occupation(s, link);
    *g = total;
    *h = occupation(sizes.front(), link) + std::max(0.0, link.latencyUs);
}

BcastPlan concretePlan(BcastTopology topology, qint64 bytes, qint64 segmentBytes, const LinkModel &link)
{
    BcastPlan plan;
    plan.topology = topology;
    plan.segmentBytes = segmentBytes;
    fibonacciParameters(bytes, segmentBytes, link, &plan.gUs, &plan.hUs);
    return plan;
}

// Node-by-node simulation of the model: a node sends to its children one at a
// time, segment j no earlier than it has it; a child has segment j one
// latency after it left.
double simulate(int ranks, qint64 bytes, const BcastPlan &plan, const LinkModel &link)
{
    if (ranks <= 1)
        return 0.0;
    const auto sizes = segmentSizes(bytes, plan.segmentBytes);
    std::vector<double> cost;
    for (qint64 s : sizes)
        cost.push_back(occupation(s, link));
    const double latency = std::max(0.0, link.latencyUs);
    struct Node
    {
        int length;
        std::vector<double> available;
    };
    std::vector<Node> pending{{ranks, std::vector<double>(sizes.size(), 0.0)}};
    double last = 0.0;
    while (!pending.empty()) {
        Node node = std::move(pending.back());
        pending.pop_back();
        last = std::max(last, node.available.back());
        double free = 0.0;
        for (const Delegation &d : bcastDelegations(plan.topology, node.length, plan)) {
            std::vector<double> child(sizes.size());
            for (size_t j = 0; j < sizes.size(); ++j) {
                free = std::max(free, node.available[j]) + cost[j];
                child[j] = free + latency;
            }
            pending.push_back({d.length, std::move(child)});
        }
    }
    return last;
}

} // namespace

double frameOccupancyUs(qint64 bytes, const LinkModel &link)
{
    const double rate = link.bytesPerUs > 0 ? link.bytesPerUs : 1e-9;
    return std::max(0.0, link.overheadUs) + double(bytes + FrameHeaderSize) / rate;
}

QString bcastTopologyName(BcastTopology topology)
{
    return detail::nameIn(Names, topology);
}

std::optional<BcastTopology> bcastTopologyFromName(QStringView name)
{
    return detail::valueIn(Names, name);
}

int fibonacciKeep(int k, double gUs, double hUs)
{
    if (k <= 2)
        return 1;
    // Free sending keeps everything but one (serial); free forwarding keeps
    // only itself (pipe).
    if (!(gUs > 0) && !(hUs > 0))
        gUs = hUs = 1.0;
    else if (!(gUs > 0))
        return k - 1;
    else if (!(hUs > 0))
        return 1;
    // Time in units of min(g, h) / Q. Beyond a ratio of k the split no longer
    // changes (keep k-1 or 1), so the ratio is capped there to bound the work.
    constexpr int Q = 8;
    const double ratio = std::min(std::max(gUs, hUs) / std::min(gUs, hUs), double(k));
    const int longer = std::max(Q, int(std::lround(Q * ratio)));
    const int g = gUs <= hUs ? Q : longer;
    const int h = gUs <= hUs ? longer : Q;
    const int start = std::max(g, h);
    std::vector<qint64> a;
    for (int n = 0;; ++n) {
        const qint64 value = n < start ? 1 : a[size_t(n - g)] + a[size_t(n - h)];
        a.push_back(value);
        if (value >= k) {
            const double kept = double(a[size_t(n - g)]) / double(value);
            return std::clamp(int(std::lround(k * kept)), 1, k - 1);
        }
    }
}

QList<Delegation> bcastDelegations(BcastTopology topology, int length, const BcastPlan &plan)
{
    QList<Delegation> out;
    if (length <= 1)
        return out;
    switch (topology) {
    case BcastTopology::Serial:
        for (int i = 1; i < length; ++i)
            out.append({i, 1});
        break;
    case BcastTopology::Pipe:
        out.append({1, length - 1});
        break;
    case BcastTopology::Binary: {
        const int rest = length - 1;
        const int left = (rest + 1) / 2;
        out.append({1, left});
        if (rest - left > 0)
            out.append({1 + left, rest - left});
        break;
    }
    case BcastTopology::Auto: // a plan is always concrete; treat as binomial
    case BcastTopology::Binomial:
        for (int k = length; k > 1;) {
            const int keep = (k + 1) / 2;
            out.append({keep, k - keep});
            k = keep;
        }
        break;
    case BcastTopology::Fibonacci:
        for (int k = length; k > 1;) {
            const int keep = fibonacciKeep(k, plan.gUs, plan.hUs);
            out.append({keep, k - keep});
            k = keep;
        }
        break;
    }
    return out;
}

double predictBcastUs(int ranks, qint64 bytes, BcastTopology topology, qint64 segmentBytes, const LinkModel &link)
{
    return simulate(ranks, bytes, concretePlan(topology, bytes, segmentBytes, link), link);
}

BcastPlan planBcast(int ranks, qint64 bytes, const LinkModel &link, BcastTopology topology)
{
    // Named topologies first: Fibonacci generalises them, so it is chosen only
    // when it is clearly better and "chosen" then says what the tree really is.
    static constexpr BcastTopology Candidates[] = {BcastTopology::Serial, BcastTopology::Pipe,
                                                   BcastTopology::Binomial, BcastTopology::Binary,
                                                   BcastTopology::Fibonacci};
    constexpr double Clearly = 0.99;
    bytes = std::max<qint64>(bytes, 0);
    std::optional<BcastPlan> best;
    for (BcastTopology candidate : Candidates) {
        if (topology != BcastTopology::Auto && candidate != topology)
            continue;
        // Whole, then 2, 4, ... segments while they stay large enough. A
        // serial node forwards nothing, so it gains nothing from segments.
        for (int segments = 1; segments <= MaxBcastSegments; segments *= 2) {
            if (segments > 1 && (candidate == BcastTopology::Serial || bytes / segments < MinBcastSegment))
                break;
            const qint64 segmentBytes = segments == 1 ? 0 : (bytes + segments - 1) / segments;
            BcastPlan plan = concretePlan(candidate, bytes, segmentBytes, link);
            plan.predictedUs = simulate(ranks, bytes, plan, link);
            if (!best || plan.predictedUs < best->predictedUs * Clearly)
                best = plan;
        }
    }
    if (!best) // unreachable: every topology has at least one candidate
        best = concretePlan(BcastTopology::Binomial, bytes, 0, link);
    return *best;
}

} // namespace mmpi
