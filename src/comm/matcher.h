// Matcher: MPI matching for one world, on the progress thread. Posted
// receives and unexpected messages are kept in arrival order, so a receive
// takes the oldest message it matches and a message goes to the oldest
// receive that matches it: MPI's non-overtaking order per (source, tag,
// communicator). Posting, probing and cancelling come from any thread.
// Unexpected messages are bounded by WorldConfig::maxUnexpectedBytes: past it,
// the world stops reading from the ranks that sent them, unless a receive or a
// probe waits for that rank (its message may be behind them in the stream).
#pragma once

#include "receivegate.h"
#include "placeoffer.h"
#include "requeststate.h"

#include <mmpi/world/world.h>

#include <QMutex>
#include <QSet>
#include <QWaitCondition>

#include <deque>
#include <memory>

namespace mmpi::detail {

class Matcher : public MessageSink, public std::enable_shared_from_this<Matcher>
{
public:
    Matcher(World *world, std::shared_ptr<ReceiveGate> gate);

    // Match against the unexpected queue now, else wait for a message.
    void post(const std::shared_ptr<RequestState> &receive);
    std::optional<Status> iprobe(quint32 communicator, int source, int tag) const;
    Result<Status> probe(quint32 communicator, int source, int tag);
    qint64 unexpectedBytes() const;
    qsizetype unexpectedCount() const;

    void handleFrame(const Frame &frame) override;
    // The oldest receive the message matches, if it offered a buffer the
    // message fits: matched now, and completed when the message is in.
    char *placeFor(const FrameHeader &header, qint64 bytes) override;
    // The receive that message was going to fails with `reason`.
    void handleMessageAbandoned(int rank, const Error &reason) override;
    void handlePeerGone(int rank, const Error &reason) override;
    // Whether `rank` has left or was lost (and has not rejoined). Thread-safe.
    bool isGone(int rank) const;
    void handlePeerRejoined(int rank) override;
    // Fail every receive posted on `communicator` with `reason` (revoked or
    // interrupted), and the blocking probes on it. A receive matched already,
    // whose message is still arriving into its buffer, completes with it;
    // unexpected messages stay for later receives.
    void failCommunicator(quint32 communicator, const Error &reason);
    // How many times failCommunicator() ran for `communicator`: a receive
    // that failed while it changed was failed by it (MessageListener).
    quint64 failures(quint32 communicator) const;
    // Withdraw a posted receive (RequestState::cancel); false if it was matched already.
    bool cancel(const RequestState *receive);

private:
    std::optional<Error> whyUnreachable(int source) const; // with m_mutex held
    std::deque<Frame>::const_iterator findUnexpected(quint32 communicator, int source, int tag) const;
    // Flow control, with m_mutex held.
    qint64 limit();
    bool awaited(int source) const;
    bool shouldPause(int source);
    QList<int> takeResumable();
    void resume(const QList<int> &sources);
    void completePlaced(const Frame &frame);
    std::deque<std::shared_ptr<RequestState>>::iterator findPosted(const FrameHeader &header); // m_mutex held
    std::shared_ptr<RequestState> takePlacing(int source);

    World *m_world;
    std::shared_ptr<ReceiveGate> m_gate;
    mutable QMutex m_mutex;
    mutable QWaitCondition m_arrived; // for probe()
    std::deque<std::shared_ptr<RequestState>> m_posted; // a deque: no allocation per receive
    std::deque<Frame> m_unexpected;
    // Receives matched by a message still arriving into their buffers, by
    // source (a peer sends one large message at a time).
    struct Placing
    {
        std::shared_ptr<RequestState> receive;
        PlaceOffer offer;
    };
    QHash<int, Placing> m_placing;
    qint64 m_unexpectedBytes = 0;
    QHash<int, Error> m_gone;
    qint64 m_limit = -1; // read from the world's configuration once formed
    QSet<int> m_paused;
    QList<int> m_probing; // sources of blocking probes in progress
    struct Failure
    {
        quint64 count = 0;
        Error reason; // the latest
    };
    QHash<quint32, Failure> m_failures; // by communicator
};

} // namespace mmpi::detail
