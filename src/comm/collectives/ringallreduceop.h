// RingAllreduceOp: allreduce of a large contribution as a ring, reduce-scatter
// then allgather: the contribution is cut into one segment per rank; in n - 1
// steps each rank passes a segment to the next while it combines the one the
// previous passed it, and in n - 1 more each fully combined segment goes round.
// Every rank sends and receives 2 (n - 1) / n of the data, all links busy at
// once, instead of reduce + bcast moving the whole of it twice through rank 0.
// Only for commutative ops on fixed-size items (the ring combines segments
// in ring order, and a segment must be whole items).
#pragma once

#include "collectiveop.h"
#include "itemsegments.h"

#include <mmpi/comm/reduceop.h>

#include <QMap>

namespace mmpi::detail {

class RingAllreduceOp : public CollectiveOp
{
public:
    // When it runs: decideAllreduce() (decision.h).
    RingAllreduceOp(CollectiveSetup setup, Payload contribution, Combiner combiner);

protected:
    void begin() override;
    void handleData(int rank, Frame &frame, const CollectiveTag &tag) override;
    bool waitsOn(int rank) const override;
    bool waitsOnAnyone() const override { return !isOver(); } // needs every contribution

private:
    int next() const { return (rank() + 1) % size(); }
    int previous() const { return (rank() + size() - 1) % size(); }
    int steps() const { return 2 * (size() - 1); }
    // Segment this rank sends at `step` (1-based) and the one it receives.
    int sentSegment(int step) const;
    int receivedSegment(int step) const;
    Payload segment(int index) const;
    QByteArray contributed(int index) const; // this rank's own items of segment `index`
    void advance();
    void finish();
    bool take(int step, Payload theirs);

    Combiner m_combiner;
    ItemType m_itemType;
    quint32 m_count; // items in all
    ItemSegments m_cut; // segment i: items [i * count / n, (i + 1) * count / n)
    // This rank's contribution stays whole: a combine reads its part of a
    // segment in place, and the result is assembled over it at the end, so
    // neither a copy per segment nor a new result buffer is needed.
    QByteArray m_contribution;
    // What keeps m_contribution if it views the caller's items (Payload::owner).
    std::shared_ptr<const void> m_owner;
    QList<QByteArray> m_segments; // segment i once combined or received; null before
    int m_step = 1;     // the step whose message this rank waits for
    int m_sentStep = 0; // the last step whose message it has sent
    QMap<int, Payload> m_arrived; // by step
};

} // namespace mmpi::detail
