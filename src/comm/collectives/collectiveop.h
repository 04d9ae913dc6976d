// CollectiveOp: one rank's part in one collective, a state machine driven by
// the frames of its (context, sequence) and by the completion of its sends,
// on whatever thread delivers them (mostly the progress thread, so forwarding
// never waits for the application). Subclasses implement the algorithms; the
// base sends, fails (telling the other ranks with an Abort frame, so nobody
// waits for a rank that gave up), watches departures and completes the
// public request once the result is there and every send has left.
#pragma once

#include "collectivetag.h"
#include "requeststate.h"
#include "smallqueue.h"

#include <mmpi/comm/collectiveresult.h>
#include <mmpi/world/world.h>

#include <QMutex>
#include <QRecursiveMutex>
#include <QSet>

#include <memory>

namespace mmpi::detail {

class Router;

struct CollectiveSetup
{
    World *world = nullptr;
    std::shared_ptr<Router> router;
    quint32 context = 0;  // communicator id | CollectiveContextBit
    quint32 sequence = 0; // of this collective on its communicator
    QList<int> group;     // world rank of each rank
    int rank = NoRank;    // this node's rank in `group`
    const char *name = "collective";
};

class CollectiveOp : public std::enable_shared_from_this<CollectiveOp>
{
public:
    explicit CollectiveOp(CollectiveSetup setup);
    virtual ~CollectiveOp();

    // Routes this collective's frames here and begins.
    void start();
    // Make start() fail with `error` (telling the other ranks) instead of
    // beginning: a later phase of a collective whose earlier phase failed here.
    void poison(Error error) { m_poison = std::move(error); }
    const std::shared_ptr<RequestState> &request() const { return m_request; }
    // Read only once the request has finished.
    const std::shared_ptr<CollectiveResult> &result() const { return m_result; }

    // From the CollectiveMatcher: enqueue() under its lock (cheap, keeps the
    // arrival order), pump() after it.
    void enqueue(Frame frame);
    void pump();
    // From the CollectiveMatcher, on the thread that reads the link: where
    // this collective's large message that begins with `header` may be
    // written as it arrives (nullptr: a buffer of the world's own). `keep`
    // gets what must live until the message is complete or abandoned.
    char *placeFor(const FrameHeader &header, qint64 bytes, std::shared_ptr<void> &keep);
    // The first `bytes` of the message placed there have arrived.
    void placedProgress(qint64 bytes);
    void peerGone(int worldRank, const Error &reason, bool clean);
    // Its communicator was revoked (every member hears of it: no Abort goes
    // out) or interrupted here (`tellOthers`): fail with `reason`.
    void abandon(const Error &reason, bool tellOthers);

protected:
    // Everything below runs with the op's mutex held.
    virtual void begin() = 0;
    // The frame is the op's: it may move the payload out (a reduction then
    // writes its result over the received bytes instead of a new buffer).
    virtual void handleData(int rank, Frame &frame, const CollectiveTag &tag) = 0;
    // A send made with a token >= 0 has left (or the op failed already).
    virtual void handleSent(int token) { Q_UNUSED(token) }
    // placeFor() for a Data message from `rank`: a place, or nullptr. The
    // message then reaches handleData() without payload, flagged PlacedPayload.
    virtual char *place(int rank, const FrameHeader &header, const CollectiveTag &tag, qint64 bytes,
                        std::shared_ptr<void> &keep)
    {
        Q_UNUSED(rank) Q_UNUSED(header) Q_UNUSED(tag) Q_UNUSED(bytes) Q_UNUSED(keep)
        return nullptr;
    }
    // The first `bytes` of the message place() gave a place for are there.
    virtual void handlePlaced(qint64 bytes) { Q_UNUSED(bytes) }
    // Whether the op still needs a frame from `rank`, or from a rank it
    // cannot name yet (a bcast receiver: any rank may forward to it). An op
    // whose result holds every rank's contribution (allreduce, barrier)
    // waits on anyone until it is over: a rank lost without a goodbye fails
    // it even where that rank is no partner, since the partners it does wait
    // for may have failed theirs, given up on the communicator, and never send.
    virtual bool waitsOn(int rank) const = 0;
    virtual bool waitsOnAnyone() const { return false; }

    int size() const { return int(m_setup.group.size()); }
    int rank() const { return m_setup.rank; }
    bool isGone(int rank) const { return m_gone.contains(rank); }
    // Queue a frame of this collective for `rank`; it goes out in queue order
    // once the mutex is released. `token` >= 0 reports completion to
    // handleSent(), when the world says it has left (`when`).
    void send(int rank, const Payload &payload, int argument = 0,
              CollectiveFrameKind kind = CollectiveFrameKind::Data, int root = NoRank, int token = -1,
              World::Completion when = World::Completion::Handed);
    // The result is in m_result; the request finishes once the sends have left.
    void succeed();
    // Finish with `error`; unless it came from another rank's Abort, tell
    // every other rank, which then fails too instead of waiting.
    void fail(const Error &error, bool tellOthers = true);
    bool isOver() const { return m_failed || m_succeeded; }
    QString describe(const QString &what) const;
    // `contribution` in the host's byte order, for an op that reads it after
    // the caller's call has returned: a view of the caller's items stays a
    // view while their owner (Payload::owner) keeps them; a view that nothing
    // keeps is copied; bytes of its own are kept as they are, without owner.
    static Payload keptPastCall(Payload contribution);

    const CollectiveSetup m_setup;
    std::shared_ptr<CollectiveResult> m_result = std::make_shared<CollectiveResult>();

private:
    struct Outgoing
    {
        int worldRank;
        Frame frame;
        int token;
        bool counted;
        World::Completion when = World::Completion::Handed;
    };

    template<typename F>
    void locked(F &&f);
    void settle();
    void flush();
    void processInbox();
    void handleFrame(Frame &frame);
    void noteGone(int worldRank, const Error &reason, bool clean);
    void checkGone();
    void sendFinished(int token, const Error &error);

    std::shared_ptr<RequestState> m_request;
    std::optional<Error> m_poison;
    QMutex m_mutex;
    QMutex m_inboxMutex;
    // Not deques (a deque allocates twice as it is built) nor QLists (one
    // allocation per op): most ops see a handful of frames.
    SmallQueue<Frame, 2> m_inbox;
    QRecursiveMutex m_flushMutex;
    bool m_flushing = false; // guarded by m_flushMutex
    // Guarded by m_mutex:
    SmallQueue<Outgoing, 4> m_outgoing;
    int m_sendsInFlight = 0;
    bool m_begun = false;
    bool m_succeeded = false;
    bool m_failed = false;
    bool m_completed = false;
    Error m_error;
    QSet<int> m_gone;           // ranks of the group that left or were lost
    bool m_someoneLost = false; // one of them without a goodbye
    struct Departure
    {
        int worldRank;
        Error reason;
        bool clean;
    };
    QList<Departure> m_departuresBeforeBegin;
};

} // namespace mmpi::detail
