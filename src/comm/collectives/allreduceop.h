// AllreduceOp: allreduce by recursive doubling, for messages small enough
// that latency matters more than volume: log2(n) rounds in which partners
// swap what they have combined so far. A non-power-of-two group first pairs
// ranks 2i and 2i+1 (i < n - 2^k) so that 2^k ranks remain; each partial
// result covers a run of consecutive ranks and combines with its neighbour's
// in rank order, so a non-commutative op gives (x0 op x1) op ... as well.
#pragma once

#include "collectiveop.h"

#include <mmpi/comm/reduceop.h>

#include <QMap>

namespace mmpi::detail {

class AllreduceOp : public CollectiveOp
{
public:
    // When it runs: decideAllreduce() (decision.h).
    AllreduceOp(CollectiveSetup setup, Payload contribution, Combiner combiner, std::optional<Error> problem);

protected:
    void begin() override;
    void handleData(int rank, Frame &frame, const CollectiveTag &tag) override;
    char *place(int rank, const FrameHeader &header, const CollectiveTag &tag, qint64 bytes,
                std::shared_ptr<void> &keep) override;
    void handlePlaced(qint64 bytes) override;
    bool waitsOn(int rank) const override;
    bool waitsOnAnyone() const override { return !isOver(); } // needs every contribution

private:
    // Frame arguments: the pairing, the rounds (1...), the result for a paired-off rank.
    static constexpr int Pairing = 0;
    static constexpr int Result = MaxArgument;

    int expectedFrom() const { return senderOf(m_step); }
    int senderOf(int step) const; // who sends this rank `step`'s message, or -1
    void advance();
    bool combineWith(int from, Payload theirs, bool theirsFirst);
    // Whether this step's combine is the last, with a result only this rank needs.
    bool lastCombineIsOurs() const;
    void leaveLastCombine(int from, Payload theirs, bool theirsFirst);
    void combinePlaced();
    void combinePlacedUpTo(qsizetype bytes);

    Payload m_accumulated;
    Combiner m_combiner;
    std::optional<Error> m_problem;
    int m_powerOfTwo = 1;
    int m_remainder = 0;
    int m_newRank = -1; // in the power-of-two group, -1 if paired off
    int m_step = 0;     // 0 pairing, 1.. rounds, then the hand-back
    int m_sentStep = 0; // the last round whose half this rank has sent
    QMap<int, std::pair<int, Payload>> m_arrived; // by argument: (sender, payload)
    ListPlace m_placed; // the caller's list the partner's contribution is written into
    int m_placedFrom = -1;
    qsizetype m_placedCombined = 0; // bytes of it combined so far
};

} // namespace mmpi::detail
