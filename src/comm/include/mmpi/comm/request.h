// mmpi::Request: a non-blocking send or receive in progress (MPI_Request). A
// cheap shared handle: wait() blocks (not on the GUI thread), test() polls,
// `co_await request` suspends a coroutine and resumes it on the thread that
// awaited, and RequestWatcher turns completion into a Qt signal. Completion
// happens on the progress thread; everything here is thread-safe.
#pragma once

#include <mmpi/comm/messagecodec.h>
#include <mmpi/comm/status.h>
#include <mmpi/core/result.h>

#include <QList>
#include <QObject>

#include <coroutine>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

namespace mmpi {

namespace detail {
class RequestState;
// Runs `f` on the thread that calls this, from its event loop.
std::function<void()> onThisThread(std::function<void()> f);
} // namespace detail

class Request
{
public:
    Request() = default; // a null request: already complete, with no status
    explicit Request(std::shared_ptr<detail::RequestState> state);

    // A request that the layer above finishes itself, once, with `finish`
    // (no error: success with an empty status): an operation made of a
    // protocol rather than of one message (FaultTolerance::protect() on a
    // replacement node). Waiting, polling and co_await work as on any other.
    struct Pending;
    static Pending pending();

    bool isNull() const { return !m_state; }
    bool isFinished() const;
    // The outcome if finished, nullopt otherwise (MPI_Test).
    std::optional<Result<Status>> test() const;
    // Block until finished (MPI_Wait). Warns when called on a GUI thread.
    Result<Status> wait() const;
    // Withdraw a receive that has not matched yet; it then finishes with
    // Cancelled. False when too late (already matched) or a send.
    bool cancel() const;

    // The received message as T (see MessageCodec); TypeMismatch names both types.
    template<typename T>
    Result<T> value() const
    {
        auto outcome = wait();
        if (!outcome)
            return outcome.error();
        if (wasPlaced())
            return placedElsewhere();
        return MessageCodec<T>::decode(payload());
    }
    // Copy a received run of items into `buffer`; TruncatedPayload when the
    // message has more items than fit. Returns the status of the message.
    // While it blocks, a large message that has not begun to arrive yet is
    // written straight into `buffer` as it comes: no copy.
    template<ItemValue T>
    Result<Status> valueInto(std::span<T> buffer) const
    {
        offerPlace<T>(buffer, false);
        auto outcome = wait();
        if (!outcome)
            return outcome;
        const Payload &p = payload();
        if (const char *placed = deliveredData()) {
            if (placed == reinterpret_cast<const char *>(buffer.data()))
                return outcome;
            // Asked for again, into another buffer: the items are host-order values already.
            const bool decodes = itemTypeDecodesAs<T>(p.itemType) && itemSize(p.itemType) == int(sizeof(T));
            if (auto ok = checkPlacedCopy(p, decodes, ItemTraits<T>::type, qint64(buffer.size())); !ok)
                return ok.error();
            std::memcpy(buffer.data(), placed, size_t(p.count) * sizeof(T));
            return outcome;
        }
        if (auto ok = decodeItemsInto<T>(p.itemType, p.count, p.bytes, buffer, p.order); !ok)
            return ok.error();
        return outcome;
    }

    // Call `f` on `context`'s thread once finished (at once, queued, if it is).
    void onFinished(QObject *context, std::function<void()> f) const;

    struct Awaiter
    {
        std::shared_ptr<detail::RequestState> state;
        bool await_ready() const noexcept;
        void await_suspend(std::coroutine_handle<> handle) const;
        Result<Status> await_resume() const;
    };
    Awaiter operator co_await() const { return {m_state}; }

    // MPI_Waitall: every request finished; the first error if any failed.
    static Result<void> waitAll(const QList<Request> &requests);
    // MPI_Waitany: index of a finished request (blocking), -1 if the list is empty.
    static int waitAny(const QList<Request> &requests);
    // MPI_Testall: whether every request has finished.
    static bool testAll(const QList<Request> &requests);

private:
    friend class Communicator;
    const Payload &payload() const;
    // `buffer` for the message (see detail::RequestState::Place); `bound`:
    // for good, and the message goes there however it arrives.
    template<ItemValue T>
    void offerPlace(std::span<T> buffer, bool bound) const
    {
        if constexpr (!std::is_same_v<T, bool>) // booleans are checked byte by byte
            offerPlace(buffer.data(), qint64(buffer.size()), int(sizeof(T)), &itemTypeDecodesAs<T>,
                       bound ? &decodeInto<T> : nullptr);
        else if (bound)
            offerPlace(buffer.data(), qint64(buffer.size()), 1, nullptr, &decodeInto<T>);
    }
    template<ItemValue T>
    static Result<void> decodeInto(const Payload &p, char *data, qint64 items)
    {
        return decodeItemsInto<T>(p.itemType, p.count, p.bytes, std::span<T>(reinterpret_cast<T *>(data), size_t(items)),
                                  p.order);
    }
    void offerPlace(void *data, qint64 items, int itemBytes, bool (*accepts)(ItemType),
                    Result<void> (*decode)(const Payload &, char *, qint64)) const;
    const char *deliveredData() const;
    bool wasPlaced() const;
    static Error placedElsewhere();
    static Result<void> checkPlacedCopy(const Payload &p, bool decodes, ItemType wanted, qint64 capacity);
    std::shared_ptr<detail::RequestState> m_state;
};

struct Request::Pending
{
    Request request;
    std::function<void(const Error &error)> finish; // later calls are ignored
};

// Emits finished() on its own thread when the watched request completes.
class RequestWatcher : public QObject
{
    Q_OBJECT
public:
    explicit RequestWatcher(QObject *parent = nullptr);
    void setRequest(const Request &request);
    Request request() const { return m_request; }

Q_SIGNALS:
    void finished();

private:
    Request m_request;
    quint64 m_generation = 0;
};

} // namespace mmpi
