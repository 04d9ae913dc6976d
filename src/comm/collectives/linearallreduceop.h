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

    // Above this, recursive doubling and the ring stay ahead even where
    // ranks outnumber CPUs (docs/collectives.md).
    static constexpr qint64 MaxBytes = 64 * 1024;

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

    void combineAll();

    Payload m_contribution;
    Combiner m_combiner;
    std::optional<Error> m_problem;
    QMap<int, Payload> m_arrived; // rank 0: contributions by rank
    ListPlace m_placed; // the others: the caller's list the result is written into
};

} // namespace mmpi::detail
