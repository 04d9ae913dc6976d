// LinearAllreduceOp: allreduce (or, without a combiner, barrier) through the
// first k ranks: the items are cut into k segments, every rank sends segment
// j of its contribution to rank j, which combines them in rank order and
// sends each rank the combined segment. With k = 1, 2 (n - 1) messages in
// all, against n log2(n) for recursive doubling: the cheaper where ranks
// share few CPUs; k = 2 shares rank 0's half of the work between two ranks.
#pragma once

#include "collectiveop.h"

#include <mmpi/comm/reduceop.h>

#include <QMap>
#include <QVarLengthArray>

namespace mmpi::detail {

class LinearAllreduceOp : public CollectiveOp
{
public:
    // `roots` > 1 only as rootsFor() gives it; every rank of a call must be
    // given the same.
    LinearAllreduceOp(CollectiveSetup setup, Payload contribution, Combiner combiner, std::optional<Error> problem,
                      int roots = 1);

    // Above this, recursive doubling and the ring stay ahead where ranks
    // outnumber CPUs, unless they share at most 2 CPUs: then up to
    // MaxBytesOnTwoCpus, as far as it was measured (a root may hold every
    // contribution at once: docs/collectives.md#ranks-sharing-cpus).
    static constexpr qint64 MaxBytes = 64 * 1024;
    static constexpr qint64 MaxBytesOnTwoCpus = 4 * 1024 * 1024;
    // Up to this, one root: below it the second root's extra messages cost
    // about what sharing the work gains; above it two roots win on 3-8 ranks
    // sharing 2 CPUs (4 ranks, 64 KiB: 91 -> 68 us, 1 MiB: 1248 -> 784;
    // docs/collectives.md#ranks-sharing-cpus).
    static constexpr qint64 MaxBytesOneRoot = 32 * 1024;

    // The roots for `contribution` on `ranks` ranks sharing `cpus` CPUs (the
    // same answer on every rank of a correct call): one up to MaxBytesOneRoot, else
    // as many as the CPUs if the items can be cut into that many segments
    // and the caller puts the segments together (a list of items).
    static int rootsFor(const Payload &contribution, const Combiner &combiner, int ranks, int cpus);

protected:
    void begin() override;
    void handleData(int rank, Frame &frame, const CollectiveTag &tag) override;
    bool waitsOn(int rank) const override;
    bool waitsOnAnyone() const override { return !isOver(); } // needs every contribution
    char *place(int rank, const FrameHeader &header, const CollectiveTag &tag, qint64 bytes,
                std::shared_ptr<void> &keep) override;

private:
    // Frame arguments: a contribution's segment for its root, a combined segment from it.
    static constexpr int Contribution = 1;
    static constexpr int Result = 2;

    bool isRoot() const { return rank() < m_roots; }
    // Whether root `root`'s combined segment is here (kept, or in the list).
    bool hasResultOf(int root) const { return m_results.at(root).has_value() || m_inList.at(root); }
    Payload segment(int index) const; // this rank's contribution to root `index`
    bool fitsSegment(const Payload &payload, int index) const;
    // A root: false if a combine failed (the op has failed).
    bool combineInOrder();
    void finishAsRoot();
    // A root's combined segment: the payload, or none if it was placed in the list.
    void takeResult(int root, std::optional<Payload> combined);

    Combiner m_combiner;
    std::optional<Error> m_problem;
    int m_roots;
    Payload m_contribution;
    // By root (1 or 2 of them, in place: a list each cost every rank an
    // allocation per barrier and small allreduce).
    QVarLengthArray<quint32, 2> m_counts;    // segment i: items [i * count / k, (i + 1) * count / k)
    QVarLengthArray<qsizetype, 2> m_offsets; // where segment i starts in the contribution, in bytes
    // A root: its segment combined so far, in rank order, and contributions
    // that came before their turn.
    std::optional<Payload> m_accumulated;
    QMap<int, Payload> m_arrived;
    int m_nextRank = 0;
    QVarLengthArray<std::optional<Payload>, 2> m_results; // combined segments by root, not in the list
    QVarLengthArray<bool, 4> m_inList; // by root: its segment was placed in the list
    ListPlace m_placed;           // the caller's list the segments are written into
};

} // namespace mmpi::detail
