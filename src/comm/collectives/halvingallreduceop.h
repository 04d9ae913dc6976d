// HalvingAllreduceOp: Rabenseifner's allreduce (Thakur, Rabenseifner and
// Gropp, "Optimization of Collective Communication Operations in MPICH",
// 2005): a reduce-scatter by recursive halving, then an allgather by
// recursive doubling. The contribution is cut into one block per rank of a
// power-of-two group; in each of the log2 rounds of halving a rank and its
// partner swap the half of the blocks they still hold that the other keeps
// and combine it, until each holds one block fully combined; in as many
// rounds of doubling partners swap what they hold until everyone has every
// block. Each rank sends 2 (p - 1) / p of the data, as in the ring, in
// 2 log2 p messages instead of the ring's 2 (p - 1): the latencies of a ring
// without its volume.
// A group of p = 2^k + r ranks folds first, as MPICH's does and as recursive
// doubling (AllreduceOp) pairs: each even rank below 2r hands its whole
// contribution to the odd rank after it and gets the result from it at the
// end, leaving 2^k ranks. (Folding the other way, a rank running this
// against ranks running recursive doubling would wait on its neighbour
// while the neighbour waited on it, neither having sent anything to find
// the mismatch by.) Only for commutative ops on fixed-size
// items, at least one per rank (blocks combine in partner order and must be
// whole items): where the ring runs.
#pragma once

#include "collectiveop.h"
#include "itemsegments.h"

#include <mmpi/comm/reduceop.h>

#include <QMap>

#include <memory>

namespace mmpi::detail {

class HalvingAllreduceOp : public CollectiveOp
{
public:
    // When it runs: decideAllreduce() (decision.h).
    HalvingAllreduceOp(CollectiveSetup setup, Payload contribution, Combiner combiner);

protected:
    void begin() override;
    void handleData(int rank, Frame &frame, const CollectiveTag &tag) override;
    bool waitsOn(int rank) const override;
    bool waitsOnAnyone() const override { return !isOver(); } // needs every contribution

private:
    // Frame arguments: the fold, halving rounds 1..k, doubling rounds
    // k + 1..2k, the result for a folded rank.
    static constexpr int Fold = 0;
    static constexpr int Unfold = MaxArgument;

    // Blocks [first, end) of the power-of-two group's cut.
    struct Blocks
    {
        int first = 0;
        int end = 0;
    };

    int rankOf(int groupRank) const;
    bool isPaired() const { return rank() < 2 * m_remainder; } // in a pair that folds
    int senderOf(int step) const; // who sends this rank `step`'s message, or -1
    Blocks keptAt(int step) const; // halving: the blocks this rank keeps after the round
    Blocks sentAt(int step) const; // the blocks it sends the partner
    Blocks heldAt(int step) const; // doubling: what the partner sends back
    Blocks receivedAt(int step) const; // what the message of `step` carries
    Payload viewOf(Blocks blocks) const;
    Payload outputView(Blocks blocks) const;
    void advance();
    void sendFor(int step);
    bool take(int step, int from, Payload theirs);
    bool checkSize(int from, Blocks blocks, const Payload &theirs);
    bool combineHeld(int from, Blocks blocks, Payload theirs);
    void startAllgather();
    void finish();

    Combiner m_combiner;
    ItemType m_itemType;
    quint32 m_count;
    qsizetype m_itemBytes;
    // This rank's contribution, read where it lies; what is sent of it is a
    // view kept by m_owner (the caller's owner, or a share of its bytes).
    QByteArray m_contribution;
    std::shared_ptr<const void> m_owner;
    int m_powerOfTwo = 1;
    int m_remainder = 0;
    int m_rounds = 0;   // log2 of m_powerOfTwo
    int m_groupRank = -1; // in the power-of-two group, -1 if folded away
    ItemSegments m_cut;   // one block per rank of the group
    // The blocks combined so far (halving), null before the first combine:
    // immutable once made, so that what was sent of it may view it.
    std::shared_ptr<const QByteArray> m_held;
    Blocks m_heldBlocks;
    // The whole result (doubling): the caller's list type if the combiner
    // can make one (it is then the result as it is), else bytes of ours.
    ListPlace m_output;
    int m_step = 0;
    int m_sentStep = -1; // the last step whose message this rank has sent
    QMap<int, std::pair<int, Payload>> m_arrived; // by argument: (sender, payload)
};

} // namespace mmpi::detail
