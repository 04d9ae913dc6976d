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

#include <mmpi/comm/reduceop.h>

#include <QMap>

namespace mmpi::detail {

class RingAllreduceOp : public CollectiveOp
{
public:
    RingAllreduceOp(CollectiveSetup setup, Payload contribution, Combiner combiner);

    // The ring's 2 (n - 1) steps each wait for the previous rank, so with
    // many ranks it pays only for large segments. Measured on 2 cores over
    // tcp against reduce + bcast: at 8 ranks it was as fast or faster from
    // 128 KiB up (1 MiB: 4.3 against 5.8 ms); at 16 ranks faster with
    // 64 KiB segments (1 MiB: 11.1 against 12.4 ms) but slower with 16 KiB
    // ones (256 KiB: 4.8 against 3.4 ms). Up to MaxRingRanks ranks, and with
    // at least MinSegmentBytes per segment beyond. Every rank of a correct
    // call sees the same size and ranks, so all choose the same.
    static constexpr int MaxRingRanks = 8;
    static constexpr qsizetype MinSegmentBytes = 64 * 1024;

    // Whether the ring applies to this contribution and op on `ranks` ranks
    // (the same answer on every rank of a correct call).
    static bool suits(const Payload &contribution, const Combiner &combiner, int ranks);

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
    qsizetype segmentBytes(int index) const { return m_counts.at(index) * m_itemBytes; }
    void advance();
    void finish();
    bool take(int step, Payload theirs);

    Combiner m_combiner;
    ItemType m_itemType;
    qsizetype m_itemBytes;
    quint32 m_count; // items in all
    // This rank's contribution stays whole: a combine reads its part of a
    // segment in place, and the result is assembled over it at the end, so
    // neither a copy per segment nor a new result buffer is needed.
    QByteArray m_contribution;
    // What keeps m_contribution if it views the caller's items (Payload::owner).
    std::shared_ptr<const void> m_owner;
    QList<QByteArray> m_segments; // segment i once combined or received; null before
    QList<quint32> m_counts;      // segment i: items [i * count / n, (i + 1) * count / n)
    QList<qsizetype> m_offsets;   // where segment i starts in the contribution, in bytes
    int m_step = 1;     // the step whose message this rank waits for
    int m_sentStep = 0; // the last step whose message it has sent
    QMap<int, Payload> m_arrived; // by step
};

} // namespace mmpi::detail
