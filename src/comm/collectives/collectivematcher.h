// CollectiveMatcher: routes collective frames to the running collective they
// belong to, by (collective context, sequence number) only — never by the
// link they came over, since a forwarding node may be any rank (ParaStation pscom's broadcast).
// Frames for a collective this node has not started yet wait, in arrival
// order; frames for one it has finished, or of an epoch an interrupt ended
// here (collectivetag.h), are dropped. Those waiting frames are
// bounded like unexpected messages (WorldConfig::maxUnexpectedBytes): past
// the bound, while no collective runs here, the world stops reading from the
// ranks that send them (a root broadcasting in a loop to a node busy
// computing is slowed, not buffered without end); a collective that starts
// reads from everyone again, since it may need any of them. Thread-safe.
#pragma once

#include "../placeoffer.h"
#include "../receivegate.h"

#include <mmpi/core/error.h>
#include <mmpi/wire/frame.h>

#include <QHash>
#include <QMutex>
#include <QSet>

#include <deque>
#include <functional>
#include <memory>
#include <optional>

namespace mmpi::detail {

class CollectiveOp;

class CollectiveMatcher
{
public:
    struct Departure
    {
        Error reason;
        bool clean = false; // said goodbye: everything it sent has arrived
    };

    // `limit`: the world's maxUnexpectedBytes once formed (asked when first needed).
    CollectiveMatcher(std::shared_ptr<ReceiveGate> gate, std::function<qint64()> limit);

    // Routes (context, sequence) to `op` from now on; frames that came
    // earlier are handed to it first, in order. Returns the peers already gone.
    QHash<int, Departure> attach(quint32 context, quint32 sequence, const std::shared_ptr<CollectiveOp> &op);
    // The collective finished here: later frames for it are dropped.
    void detach(quint32 context, quint32 sequence);

    void handleFrame(Frame &&frame);
    // Where a large message of a running collective may be written as it
    // arrives (Router::placeFor), or nullptr. The place stays alive until
    // the message has come (handleFrame()) or was abandoned (here, or its
    // sender is gone).
    char *placeFor(const FrameHeader &header, qint64 bytes);
    void handleMessageAbandoned(int rank);
    // The first `bytes` of the message from `rank` are in its place: its
    // collective may start on them.
    void handlePlacedProgress(int rank, qint64 bytes);
    void handlePeerGone(int rank, const Error &reason, bool clean);
    // The communicator of `context` was revoked: its running collectives
    // fail with `reason`, and frames held for ones not started are dropped.
    void failContext(quint32 context, const Error &reason);
    // The communicator of `context` was interrupted here and its collectives
    // now take sequence numbers of `epoch`: the running ones of earlier
    // epochs fail with `reason` (telling the other members), and the frames
    // of earlier epochs, held or still to come, are dropped. Frames of
    // `epoch` and later ones (members that interrupted first) are kept.
    void interruptContext(quint32 context, quint32 epoch, const Error &reason);
    // Why a collective of `sequence` in `context` cannot run: its epoch is
    // over (one that took its number before an interrupt and starts after it).
    std::optional<Error> interrupted(quint32 context, quint32 sequence) const;
    // A new node took a gone peer's rank: collectives may involve it again.
    void handlePeerRejoined(int rank);
    // Payload bytes held for collectives not started yet.
    qint64 earlyBytes() const;

private:
    static quint64 key(quint32 context, quint32 sequence) { return (quint64(context) << 32) | sequence; }
    // With m_mutex held: whether to stop reading from `source` now.
    bool shouldPause(int source);
    // failContext() and interruptContext(): fail the running collectives
    // and drop the held frames whose (context, sequence) key is `stale`.
    void failWhere(const std::function<bool(quint64)> &stale, const Error &reason, bool tellOthers);
    // With m_mutex held: whether the collective of key `k` belongs to an
    // epoch an interrupt has ended.
    bool isInterrupted(quint64 k) const;
    // With m_mutex held: an interrupt of `context` makes its finished
    // collectives' numbers free again.
    void forgetFinished(quint32 context);

    std::shared_ptr<ReceiveGate> m_gate;
    std::function<qint64()> m_limit;
    qint64 m_limitBytes = -1;
    QSet<int> m_paused;

    mutable QMutex m_mutex;
    QHash<quint64, std::shared_ptr<CollectiveOp>> m_attached;
    QHash<quint64, std::deque<Frame>> m_early;
    qint64 m_earlyBytes = 0;
    // Recently finished collectives, oldest first, to drop their stragglers
    // (aborts sent to every rank); bounded, the oldest are forgotten, and
    // an interrupt forgets its context's (forgetFinished()).
    QSet<quint64> m_finished;
    std::deque<quint64> m_finishedOrder;
    QHash<int, Departure> m_gone;
    struct Interruption
    {
        quint32 epoch;
        Error reason;
    };
    QHash<quint32, Interruption> m_interrupted; // by context: the latest
    struct Placing
    {
        std::shared_ptr<void> place; // alive until the message is in
        std::weak_ptr<CollectiveOp> op;
        PlaceOffer offer;
    };
    QHash<int, Placing> m_placing; // by sender
};

} // namespace mmpi::detail
