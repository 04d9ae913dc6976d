// BcastOp: ParaStation pscom's forwarding-range broadcast. Ranks are counted from the root (vranks);
// every message carries the root (header) and the forwarding range it hands
// on (the receiver is the range's first rank, the tag says how long it is).
// Each node that receives a range decides again how to cover it (its own
// decideBcast() from its own link estimates, or the topology forced; a
// stream names the topology its tree was planned with, and keeps it),
// and forwards either the whole message or a stream of segments, each segment
// passed on as soon as it is in. Copies go to one child at a time, the next
// once the last has left this node, not only its link: one radio sends them
// all, and copies sent together all arrive late (docs/design/broadcast.md).
#pragma once

#include "collectiveop.h"

#include <mmpi/comm/bcastplan.h>

namespace mmpi::detail {

class BcastOp : public CollectiveOp
{
public:
    // `payload` matters at the root only.
    BcastOp(CollectiveSetup setup, int root, Payload payload, BcastOptions options);

    // Largest message a stream header may announce (the world's default limit).
    static constexpr qint64 MaxMessageBytes = 256LL * 1024 * 1024;
    // A streamed message up to this size gets its whole buffer at once.
    static constexpr qint64 AssembledUpFront = 16LL * 1024 * 1024;

protected:
    void begin() override;
    void handleData(int rank, Frame &frame, const CollectiveTag &tag) override;
    void handleSent(int token) override;
    bool waitsOn(int rank) const override;
    bool waitsOnAnyone() const override;

private:
    struct Child
    {
        int rank = 0;
        int length = 0;
        qsizetype nextPiece = 0; // pieces queued to it so far
        int inFlight = 0;
        bool headerSent = false;
        bool done = false;
    };

    bool isRoot() const { return m_root == rank() && !m_rootInvalid; }
    void takeRange(int root, int length);
    int vrankOf(int rank) const { return (rank - m_treeRoot + size()) % size(); }
    int rankOf(int vrank) const { return (vrank + m_treeRoot) % size(); }
    int treeRoot() const { return m_treeRoot; } // as the message says
    void startStream(const Frame &header);
    void addPiece(const QByteArray &piece);
    void planForwarding();
    void pushSends();
    void queueTo(int index);
    void maybeFinish();
    bool allPiecesIn() const { return m_received == m_totalBytes && m_haveMeta; }

    int m_root;
    bool m_rootInvalid = false;
    BcastOptions m_options;
    std::optional<Error> m_deferredError; // this rank's root differed; reported after forwarding

    int m_parent = -1;    // rank the message came from
    int m_treeRoot = 0;   // vranks count from it
    int m_rangeLength = 0;
    bool m_haveMeta = false;
    ItemType m_itemType = ItemType::None;
    quint32 m_count = 0;
    ItemOrder m_order = WireItemOrder;
    qint64 m_totalBytes = 0;
    qint64 m_received = 0;
    bool m_streamedIn = false; // the message came as a stream header and segments
    bool m_streamed = false;   // children get a stream header and segments
    // What the stream header said the tree is, and once planned what this
    // node applies to its range (Auto: not known yet).
    BcastTopology m_plannedTopology = BcastTopology::Auto;
    QByteArray m_whole;       // received or sent whole
    QByteArray m_assembly;    // received in segments
    QList<QByteArray> m_pieces;
    QList<Child> m_children;
    qsizetype m_current = 0; // child being served (one at a time)
    bool m_planned = false;
};

} // namespace mmpi::detail
