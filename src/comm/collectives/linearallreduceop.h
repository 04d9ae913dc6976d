// LinearAllreduceOp: allreduce (or, without a combiner, barrier) through
// rank 0: every other rank sends it its contribution, rank 0 combines them in
// rank order and sends each the result. 2 (n - 1) messages in all, against
// n log2(n) for recursive doubling: the cheaper where ranks share few CPUs.
#pragma once

#include "collectiveop.h"

#include <mmpi/comm/reduceop.h>

#include <QMap>

namespace mmpi::detail {

class LinearAllreduceOp : public CollectiveOp
{
public:
    LinearAllreduceOp(CollectiveSetup setup, Payload contribution, Combiner combiner, std::optional<Error> problem);

    // Above this, recursive doubling and the ring stay ahead where ranks
    // outnumber CPUs, unless they share at most 2 CPUs: then up to
    // MaxBytesOnTwoCpus, as far as it was measured (rank 0 may hold every
    // contribution at once: docs/collectives.md#ranks-sharing-cpus).
    static constexpr qint64 MaxBytes = 64 * 1024;
    static constexpr qint64 MaxBytesOnTwoCpus = 4 * 1024 * 1024;

protected:
    void begin() override;
    void handleData(int rank, Frame &frame, const CollectiveTag &tag) override;
    bool waitsOn(int rank) const override;
    bool waitsOnAnyone() const override { return !isOver(); } // needs every contribution
    char *place(int rank, const FrameHeader &header, const CollectiveTag &tag, qint64 bytes,
                std::shared_ptr<void> &keep) override;

private:
    // Frame arguments: a contribution for rank 0, the result from it.
    static constexpr int Contribution = 1;
    static constexpr int Result = 2;

    // Rank 0: false if a combine failed (the op has failed).
    bool combineInOrder();
    void finishAtRankZero();

    Payload m_contribution; // rank 0: what is combined so far, in rank order
    Combiner m_combiner;
    std::optional<Error> m_problem;
    QMap<int, Payload> m_arrived; // rank 0: contributions not combined yet, by rank
    int m_nextRank = 1;           // rank 0: the next rank to combine
    ListPlace m_placed; // the others: the caller's list the result is written into
};

} // namespace mmpi::detail
