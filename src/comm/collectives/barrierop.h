// BarrierOp: the dissemination barrier. In round k every rank tells rank
// (r + 2^k) mod n it has arrived and waits to hear from (r - 2^k) mod n; after
// ceil(log2 n) rounds every rank has heard, through some path, from all.
#pragma once

#include "collectiveop.h"

namespace mmpi::detail {

class BarrierOp : public CollectiveOp
{
public:
    using CollectiveOp::CollectiveOp;

protected:
    void begin() override;
    void handleData(int rank, Frame &frame, const CollectiveTag &tag) override;
    bool waitsOn(int rank) const override;
    bool waitsOnAnyone() const override { return !isOver(); } // needs every contribution

private:
    int rounds() const;
    int partnerFrom(int round) const;
    void advance();

    int m_round = 0;
    QSet<int> m_heard; // rounds whose message has arrived
};

} // namespace mmpi::detail
