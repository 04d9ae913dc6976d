// RequestState: the shared, thread-safe state behind mmpi::Request. The
// progress thread completes it once; any thread may wait, poll or register a
// continuation (which runs on the completing thread and must post itself to
// wherever it belongs).
#pragma once

#include <mmpi/comm/messagecodec.h>
#include <mmpi/comm/status.h>
#include <mmpi/wire/frame.h>

#include <QMutex>

#include <atomic>
#include <functional>
#include <optional>

namespace mmpi::detail {

class Matcher;

class RequestState
{
public:
    enum class Kind { Send, Receive };

    RequestState(Kind kind, quint32 communicator, int source, int tag);
    ~RequestState();
    Q_DISABLE_COPY_MOVE(RequestState)

    const Kind kind;
    const quint32 communicator;
    const int source; // a rank or AnySource (receives)
    const int tag;    // a tag or AnyTag (receives)

    bool matches(const FrameHeader &header) const;

    // A receive's own buffer, so that a large message can be written there
    // as it arrives instead of being copied out of a buffer of its own
    // (MessageSink::placeFor). Offered by a thread blocked waiting for it, or
    // bound for good by irecv(span): then `decode` puts a message that was
    // not placed there when it completes.
    struct Place
    {
        char *data = nullptr;
        qint64 items = 0;
        int itemBytes = 0;
        bool (*accepts)(ItemType) = nullptr; // the wire types the buffer's T decodes
        Result<void> (*decode)(const Payload &payload, char *data, qint64 items) = nullptr;
    };
    // Ignored once a place is offered or the request finished, except that a
    // bound place of a finished receive gets its message now.
    void offerPlace(const Place &place);
    // The matcher, for a message this receive matches: the offered buffer if
    // the message fits it (then it is this message's), else nullptr.
    char *takePlace(const FrameHeader &header, qint64 bytes);
    // The placed message is all there: its items become host-order values.
    bool completePlaced(const Status &status, ItemOrder order);
    // Where the message's items are as host-order values (nullptr: only in
    // payload()), and whether they never were in payload().
    const char *deliveredData() const;
    bool wasPlaced() const;

    // First completion wins; later ones (a cancel racing a match) are ignored.
    bool complete(Result<Status> outcome, Payload payload = {});
    bool isFinished() const;
    std::optional<Result<Status>> outcome() const;
    Result<Status> wait() const;
    // `f` runs once finished: now if it is, else on the completing thread.
    void whenFinished(std::function<void()> f);
    // Only meaningful once finished (then never written again).
    const Payload &payload() const { return m_payload; }

    // Withdraws the request if it is still posted; true if it did.
    bool cancel();
    // Who can withdraw it: the matcher it is posted to, or the receive it
    // stands for (a receive on a communicator that translates ranks). Not
    // a closure: that would be an allocation per receive.
    std::weak_ptr<Matcher> postedTo;
    std::shared_ptr<RequestState> standsFor;

private:
    mutable QMutex m_mutex;
    // Set once the outcome is in. Waiting on it (std::atomic::wait) spins a
    // moment, then sleeps in the kernel; a completion wakes a sleeper only if
    // there is one: fewer system calls than a mutex and condition variable.
    std::atomic<int> m_finished = 0;
    std::optional<Result<Status>> m_outcome;
    Payload m_payload;
    QList<std::function<void()>> m_continuations;
    Result<void> deliverToBoundPlace(); // with m_mutex held
    Place m_offered;
    std::atomic<const char *> m_delivered = nullptr;
    std::atomic<bool> m_placed = false;
};

Status statusOf(const FrameHeader &header, qint64 bytes);
// Whether a receive on (communicator, source, tag), wildcards allowed, takes
// a message with this header.
bool receiveMatches(const FrameHeader &header, quint32 communicator, int source, int tag);

} // namespace mmpi::detail
