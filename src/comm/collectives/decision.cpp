#include "decision.h"

#include <mmpi/core/logging.h>

#include <QStringList>

#include <algorithm>
#include <cmath>

namespace mmpi::detail {

namespace {

constexpr BcastTopology BcastTopologies[] = {BcastTopology::Auto,   BcastTopology::Serial,   BcastTopology::Pipe,
                                             BcastTopology::Binary, BcastTopology::Binomial, BcastTopology::Fibonacci};
constexpr AllreduceAlgorithm AllreduceAlgorithms[] = {AllreduceAlgorithm::Auto, AllreduceAlgorithm::RecursiveDoubling,
                                                      AllreduceAlgorithm::Ring, AllreduceAlgorithm::ReduceBcast,
                                                      AllreduceAlgorithm::RecursiveHalving};

template<typename Algorithm, size_t N>
Result<Algorithm> fromVariable(const char *variable, const char *collective, const QString &value,
                               const Algorithm (&all)[N], QString (*nameOf)(Algorithm),
                               std::optional<Algorithm> (*fromName)(QStringView))
{
    const QString wanted = value.trimmed().toLower();
    if (wanted.isEmpty())
        return Algorithm::Auto;
    if (const auto algorithm = fromName(wanted))
        return *algorithm;
    QStringList names;
    for (Algorithm a : all)
        names.append(nameOf(a));
    return Error{ErrorCode::BadConfiguration,
                 QStringLiteral("%1=%2 names no %3 algorithm (allowed: %4); %3 decides itself")
                     .arg(QLatin1String(variable), value, QLatin1String(collective), names.join(QLatin1String(", ")))};
}

template<typename Algorithm>
Algorithm orAutoWithWarning(Result<Algorithm> parsed)
{
    if (parsed)
        return *parsed;
    qCWarning(lcComm).noquote() << parsed.error().message;
    return Algorithm::Auto;
}

// A group of 2^k + r ranks: k rounds among 2^k of them once r pairs have
// folded into one rank each (recursive doubling and halving both do so).
struct Fold
{
    int rounds = 0;
    int remainder = 0;
};

Fold foldOf(int ranks)
{
    Fold fold;
    int powerOfTwo = 1;
    while (powerOfTwo * 2 <= ranks) {
        powerOfTwo *= 2;
        ++fold.rounds;
    }
    fold.remainder = ranks - powerOfTwo;
    return fold;
}

// One message of `bytes`: its latency and what it occupies its sender.
double stepUs(qint64 bytes, const LinkModel &medium)
{
    return std::max(0.0, medium.latencyUs) + frameOccupancyUs(bytes, medium);
}

// The ring only where its 2 (n - 1) steps paid in the measurements
// (MaxRingRanks, MinRingSegmentBytes): on CPUs that many ranks share, a
// step costs more than the model says.
bool ringStepsPay(const AllreduceShape &shape)
{
    return shape.ranks <= MaxRingRanks || shape.bytes / shape.ranks >= MinRingSegmentBytes;
}

// The allreduce's rule. Where the ring applies, the cost model of Thakur,
// Rabenseifner and Gropp ("Optimization of Collective Communication
// Operations in MPICH", 2005), with alpha a message's latency plus its
// per-frame cost and beta the medium's time per byte (n bytes, p = 2^k ranks):
//   recursive doubling   log2(p) (alpha + n beta)
//   recursive halving    2 log2(p) alpha + 2 (p - 1) / p n beta   (Rabenseifner's)
//   ring                 2 (p - 1) alpha + 2 (p - 1) / p n beta
// and for p = 2^k + r the fold's two more steps of the whole contribution
// (recursive doubling and halving). Recursive halving has the ring's volume
// in the latencies of recursive doubling, so it wins from a few latencies'
// worth of bytes wherever p is a power of two above 2; the fold's two whole
// contributions cost it that lead elsewhere, where the ring takes large
// contributions. On Bluetooth (LinkMedium::classicBluetooth(): 30 ms,
// 90 kB/s) at 8 ranks, 16 KiB: recursive doubling 638 ms, recursive halving
// 502, ring 745 (measured over tcp on emulated Bluetooth, bench/RESULTS.md:
// our recursive doubling 676 ms, Open MPI 536); on Wi-Fi (2 ms, 5 MB/s)
// recursive halving from about 24 KB at 8 ranks. The medium's model, not the
// node's measured one: every rank must choose alike. Ties go to recursive
// doubling, then halving. Calls the ring cannot run keep the thresholds set
// with the algorithms.
AllreduceAlgorithm automaticAllreduce(const AllreduceShape &shape, const LinkModel &medium)
{
    using A = AllreduceAlgorithm;
    if (shape.ranks <= 2)
        return A::RecursiveDoubling;
    if (!ringApplies(shape))
        return shape.bytes <= RecursiveDoublingMaxBytes ? A::RecursiveDoubling : A::ReduceBcast;
    A best = A::RecursiveDoubling;
    double bestUs = recursiveDoublingUs(shape, medium);
    const auto consider = [&](A algorithm, double us) {
        if (us < bestUs) {
            best = algorithm;
            bestUs = us;
        }
    };
    consider(A::RecursiveHalving, recursiveHalvingUs(shape, medium));
    if (ringStepsPay(shape))
        consider(A::Ring, ringUs(shape, medium));
    return best;
}

} // namespace

ReduceShape decideReduce(int ranks, qint64 bytes, const LinkModel &medium)
{
    if (ranks <= 2)
        return ReduceShape::Binomial; // the same one message either way
    const double hop = frameOccupancyUs(bytes, medium);
    const double latency = std::max(0.0, medium.latencyUs);
    const double flat = double(ranks - 1) * hop + latency;
    const double binomial = std::ceil(std::log2(double(ranks))) * (hop + latency);
    return flat < binomial ? ReduceShape::Flat : ReduceShape::Binomial;
}

BcastPlan decideBcast(int ranks, qint64 bytes, const LinkModel &link, BcastTopology forced)
{
    if (ranks > 1)
        return planBcast(ranks, bytes, link, forced);
    BcastPlan plan;
    if (forced != BcastTopology::Auto)
        plan.topology = forced;
    return plan;
}

bool ringApplies(const AllreduceShape &shape)
{
    return shape.commutative && shape.fixedSizeItems && shape.ranks >= 2 && shape.items >= shape.ranks;
}

double recursiveDoublingUs(const AllreduceShape &shape, const LinkModel &medium)
{
    // The fold and the hand-back move the whole contribution, as each round does.
    const Fold fold = foldOf(shape.ranks);
    return (fold.rounds + (fold.remainder > 0 ? 2 : 0)) * stepUs(shape.bytes, medium);
}

double recursiveHalvingUs(const AllreduceShape &shape, const LinkModel &medium)
{
    const Fold fold = foldOf(shape.ranks);
    double us = fold.remainder > 0 ? 2 * stepUs(shape.bytes, medium) : 0.0;
    // Halving round j sends bytes / 2^j, and so does doubling round k + 1 - j.
    for (int j = 1; j <= fold.rounds; ++j)
        us += 2 * stepUs(shape.bytes >> j, medium);
    return us;
}

double ringUs(const AllreduceShape &shape, const LinkModel &medium)
{
    if (shape.ranks < 2)
        return 0.0;
    return 2.0 * (shape.ranks - 1) * stepUs(shape.bytes / shape.ranks, medium);
}

AllreduceAlgorithm decideAllreduce(const AllreduceShape &shape, const LinkModel &medium, AllreduceAlgorithm forced)
{
    const bool needsRing = forced == AllreduceAlgorithm::Ring || forced == AllreduceAlgorithm::RecursiveHalving;
    if (forced == AllreduceAlgorithm::Auto || (needsRing && !ringApplies(shape)))
        return automaticAllreduce(shape, medium);
    return forced;
}

Result<BcastTopology> bcastTopologyFromVariable(const QString &value)
{
    return fromVariable(BcastVariable, "bcast", value, BcastTopologies, &bcastTopologyName, &bcastTopologyFromName);
}

Result<AllreduceAlgorithm> allreduceAlgorithmFromVariable(const QString &value)
{
    return fromVariable(AllreduceVariable, "allreduce", value, AllreduceAlgorithms, &allreduceAlgorithmName,
                        &allreduceAlgorithmFromName);
}

ForcedAlgorithms forcedByEnvironment()
{
    ForcedAlgorithms forced;
    forced.bcast = orAutoWithWarning(bcastTopologyFromVariable(qEnvironmentVariable(BcastVariable)));
    forced.allreduce = orAutoWithWarning(allreduceAlgorithmFromVariable(qEnvironmentVariable(AllreduceVariable)));
    return forced;
}

} // namespace mmpi::detail
