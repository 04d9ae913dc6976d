// BcastPlan: how a broadcast travels from one forwarding node through its
// forwarding range (ParaStation pscom's design, docs/design/broadcast.md). planBcast() is the pure
// decision function: from the range size, the message size and a link model it
// predicts every topology's time and picks the fastest; each forwarding node
// runs it again for its own range with its own link estimates.
#pragma once

#include <QList>
#include <QString>
#include <QStringView>

#include <optional>

namespace mmpi {

enum class BcastTopology {
    Auto,      // every forwarding node chooses from size and link estimates
    Serial,    // the node sends to every rank of its range itself
    Pipe,      // to the next rank only, which forwards the rest (segmented)
    Binary,    // two children, each forwarding half of the rest
    Binomial,  // keep half the range, hand the other half on, repeat
    Fibonacci, // keep R(t-g)/R(t) of the range, hand the rest on, repeat
};

QString bcastTopologyName(BcastTopology topology);
std::optional<BcastTopology> bcastTopologyFromName(QStringView name);

// What a node knows of its links: the model behind the decision. A frame of b
// bytes occupies the sender for overheadUs + (b + 44) / bytesPerUs and arrives
// latencyUs after it has left.
struct LinkModel
{
    double latencyUs = 30.0;    // one-way latency of a small frame
    double bytesPerUs = 1000.0; // what the sender's link carries (1000 = 1 GB/s)
    double overheadUs = 4.0;    // per-frame cost at the sender

    bool operator==(const LinkModel &) const = default;
};

// How long a frame of `bytes` payload bytes occupies its sender under `link`.
double frameOccupancyUs(qint64 bytes, const LinkModel &link);

// A sub-range handed to a child: ranks [offset, offset + length) of the range,
// counted from the forwarding node (offset 0). The child is the first of them.
struct Delegation
{
    int offset = 0;
    int length = 0;
    bool operator==(const Delegation &) const = default;
};

struct BcastPlan
{
    BcastTopology topology = BcastTopology::Binomial;
    // Bytes per segment when the node streams the message in segments that a
    // child forwards as they arrive; 0 when it sends the message whole.
    qint64 segmentBytes = 0;
    // Fibonacci: how long one delegation occupies the sender (g) and how long
    // until the child can forward (h), in µs: keep R(t-g)/R(t) of the range.
    double gUs = 1.0;
    double hUs = 1.0;
    double predictedUs = 0.0; // when the last rank holds the message (model)
};

// Segments are at least this large: below it the per-frame cost dominates.
constexpr qint64 MinBcastSegment = 1024;
// A message is split into at most this many segments.
constexpr int MaxBcastSegments = 64;

// The ranks a node with a range of `length` ranks (itself included) sends to,
// in sending order, for a concrete topology (not Auto). Fibonacci uses
// plan.gUs / plan.hUs; the other topologies ignore the plan.
QList<Delegation> bcastDelegations(BcastTopology topology, int length, const BcastPlan &plan = {});

// Seed 004's Fibonacci-like split: a(n) = a(n-g) + a(n-h), a = 1 for
// 0 <= n < max(g, h), time in units of min(g, h); for k ranks take the smallest
// n with a(n) >= k and keep k * a(n-g) / a(n) of them (at least 1, at most
// k - 1). g = h gives the binomial tree, g >> h the pipe, h >> g serial.
int fibonacciKeep(int k, double gUs, double hUs);

// The predicted time (µs, model) until the last of `ranks` holds `bytes`
// bytes sent by rank 0 of the range with `topology` (not Auto) at every node,
// in segments of `segmentBytes` (0: whole).
double predictBcastUs(int ranks, qint64 bytes, BcastTopology topology, qint64 segmentBytes, const LinkModel &link);

// The decision: the fastest topology and segmentation under `link`; with a
// forced topology, the best segmentation for it.
BcastPlan planBcast(int ranks, qint64 bytes, const LinkModel &link,
                    BcastTopology topology = BcastTopology::Auto);

// What a caller may ask of one bcast().
struct BcastOptions
{
    BcastTopology topology = BcastTopology::Auto;
};

} // namespace mmpi
