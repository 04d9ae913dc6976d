// ReductionOp: reduce() along a binomial tree or a flat one (every rank
// straight to the tree's root), as decideReduce() chooses. With a commutative
// op the tree is rooted at the root (ranks counted from it); with a
// non-commutative one it is rooted at rank 0 over the ranks in order, so every
// combination is (lower ranks) op (higher ranks), and rank 0 then hands the
// result to the root.
#pragma once

#include "collectiveop.h"

#include <mmpi/comm/reduceop.h>

#include <QMap>

namespace mmpi::detail {

class ReductionOp : public CollectiveOp
{
public:
    // `problem`: this rank's contribution could not be made (reported to all).
    ReductionOp(CollectiveSetup setup, Payload contribution, Combiner combiner, int root,
                std::optional<Error> problem = std::nullopt);

protected:
    void begin() override;
    void handleData(int rank, Frame &frame, const CollectiveTag &tag) override;
    bool waitsOn(int rank) const override;

private:
    bool ordered() const { return !m_combiner.commutative; }
    int treeRoot() const { return ordered() ? 0 : m_root; }
    int vrankOf(int r) const { return (r - treeRoot() + size()) % size(); }
    int rankOfV(int v) const { return (v + treeRoot()) % size(); }
    bool isChild(int v) const;
    bool sendsUpNow(int me) const { return m_flat ? me != 0 : (me & m_mask) != 0; }
    int parentOf(int me) const { return m_flat ? 0 : me - m_mask; }
    // The child combined next: the flat root takes 1, 2, 3 ... in turn.
    int nextChild(int me) const { return m_flat ? m_mask : me + m_mask; }
    void advance() { m_mask = m_flat ? m_mask + 1 : m_mask << 1; }
    void step();

    Payload m_accumulated;
    Combiner m_combiner;
    int m_root;
    std::optional<Error> m_problem;
    // Binomial: the round's bit; flat (at the root): the next child's vrank.
    // Children below it, counted from this node, are combined already.
    int m_mask = 1;
    bool m_flat = false;
    bool m_sentUp = false;
    bool m_awaitFinal = false; // ordered, root != 0: the result comes from rank 0
    QMap<int, Payload> m_fromChildren; // by vrank
};

} // namespace mmpi::detail
