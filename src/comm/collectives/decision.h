// The decision of every collective: which algorithm a call runs, from what
// the call gives (ranks, bytes, the op) and, where each node may decide for
// itself, its link model; and what the caller's options or the environment
// force instead. Pure functions, one per collective, in the shape of Open
// MPI's coll_tuned_decision_fixed.c (docs/design/collectives.md, "The decisions").
#pragma once

#include <mmpi/comm/allreduceoptions.h>
#include <mmpi/comm/bcastplan.h>
#include <mmpi/core/result.h>

#include <QString>

namespace mmpi::detail {

// The collectives with one algorithm, so nothing to decide or force:
//   barrier          dissemination, ceil(log2 n) rounds (BarrierOp)
//   gather, scatter  straight to / from the root (GatherOp, ScatterOp)
//   allgather, alltoall  every rank to every other directly (ExchangeOp)
// Under the link model these are what a node with one radio does best on a
// radio's links, where a frame's latency is many times its per-frame cost:
// the root's radio carries the n-1 blocks whichever tree they take, and a
// tree only adds latencies (docs/design/collectives.md, "The decisions").

// ---- reduce. Every rank must run the same tree, so it is chosen from what
// every rank sees alike: the ranks, the bytes of a contribution and the
// medium the world's transport names (LinkTable::mediumModel()), never from
// what a node measured for itself.
enum class ReduceShape {
    Binomial, // ceil(log2 n) rounds, each one contribution per link
    Flat,     // every rank straight to the tree's root, which combines in order
};

// Flat when the root's radio taking the n-1 contributions one after another
// and one latency, (n-1) x occupancy + latency, beats ceil(log2 n) rounds
// of occupancy + latency.
ReduceShape decideReduce(int ranks, qint64 bytes, const LinkModel &medium);

// ---- bcast. Every forwarding node decides again for its own range, with
// its own link model: nodes need not agree, so the link model decides here.

// The plan of a node that forwards `bytes` to a range of `ranks` (itself
// included): planBcast()'s model of every topology, or `forced`'s best
// segmentation. A range of one sends nothing: the forced topology, or binomial.
BcastPlan decideBcast(int ranks, qint64 bytes, const LinkModel &link, BcastTopology forced = BcastTopology::Auto);

// ---- allreduce. Every rank must run the same algorithm, so it is chosen
// from what every rank of a correct call sees alike: ranks, bytes, the op
// and, as for reduce, the medium the world's transport names
// (LinkTable::mediumModel()), never from what a node measured for itself.

struct AllreduceShape
{
    int ranks = 1;
    qint64 bytes = 0;           // of this rank's contribution
    qint64 items = 0;
    bool commutative = true;
    bool fixedSizeItems = false; // bytes = items x the size of one item
};

// Unmeasured: set with the algorithm (commit 3bffcc3); Open MPI's fixed rule (MX) switches at 10 000 B.
// Now only for calls the ring and recursive halving cannot run.
constexpr qint64 RecursiveDoublingMaxBytes = 64 * 1024;
// Measured over tcp on 2 cores (commit a43a7cf): the ring beat reduce + bcast up to 8 ranks from 128 KiB.
constexpr int MaxRingRanks = 8;
// Same runs, ring vs reduce + bcast at 16 ranks: 64 KiB segments 11.1 vs 12.4 ms (1 MiB), 16 KiB 4.8 vs 3.4 (256 KiB).
constexpr qint64 MinRingSegmentBytes = 64 * 1024;

// Whether the ring, and recursive halving, can run it: a commutative op
// (segments combine in ring or partner order) on fixed-size items, at
// least one item per rank.
bool ringApplies(const AllreduceShape &shape);

// What the cost model predicts (µs) for each algorithm it weighs: a step is
// a message's latency plus its sender's occupancy (frameOccupancyUs()), the
// steps of a round run at once on every rank. Exposed for the tests.
double recursiveDoublingUs(const AllreduceShape &shape, const LinkModel &medium);
double recursiveHalvingUs(const AllreduceShape &shape, const LinkModel &medium);
double ringUs(const AllreduceShape &shape, const LinkModel &medium);

// Recursive doubling between 2 ranks at any size (one swap moves no more
// than the others do, in one round). Where the ring applies, the cheapest
// under the medium's model of recursive doubling, recursive halving
// (Rabenseifner's) and the ring, the ring only where its steps pay
// (MaxRingRanks, MinRingSegmentBytes). Else recursive doubling up to
// RecursiveDoublingMaxBytes, then reduce + bcast. A forced ring or
// recursive halving that does not apply gives that choice instead (the
// caller warns); every other forced algorithm runs any allreduce.
AllreduceAlgorithm decideAllreduce(const AllreduceShape &shape, const LinkModel &medium,
                                   AllreduceAlgorithm forced = AllreduceAlgorithm::Auto);

// ---- forcing

// What the environment forces, read when the comm layer attaches to a
// world (Router): MMPI_BCAST_ALGORITHM (bcastTopologyName()'s names) and
// MMPI_ALLREDUCE_ALGORITHM (allreduceAlgorithmName()'s). Unset or empty is
// Auto; an unknown value is a warning naming the allowed ones, then Auto:
// a tuning variable never stops an app that runs without it.
struct ForcedAlgorithms
{
    BcastTopology bcast = BcastTopology::Auto;
    AllreduceAlgorithm allreduce = AllreduceAlgorithm::Auto;
};

constexpr char BcastVariable[] = "MMPI_BCAST_ALGORITHM";
constexpr char AllreduceVariable[] = "MMPI_ALLREDUCE_ALGORITHM";

// A variable's value (case and surrounding blanks ignored); BadConfiguration
// names the allowed values.
Result<BcastTopology> bcastTopologyFromVariable(const QString &value);
Result<AllreduceAlgorithm> allreduceAlgorithmFromVariable(const QString &value);

// Both variables of this process's environment, each bad one logged.
ForcedAlgorithms forcedByEnvironment();

// The call's option wins over the environment.
template<typename Algorithm>
constexpr Algorithm forcedAlgorithm(Algorithm call, Algorithm environment)
{
    return call != Algorithm::Auto ? call : environment;
}

} // namespace mmpi::detail
