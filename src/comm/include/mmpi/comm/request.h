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
        return MessageCodec<T>::decode(payload());
    }
    // Copy a received run of items into `buffer`; TruncatedPayload when the
    // message has more items than fit. Returns the status of the message.
    template<ItemValue T>
    Result<Status> valueInto(std::span<T> buffer) const
    {
        auto outcome = wait();
        if (!outcome)
            return outcome;
        const Payload &p = payload();
        if (auto ok = decodeItemsInto<T>(p.itemType, p.count, p.bytes, buffer); !ok)
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
    const Payload &payload() const;
    std::shared_ptr<detail::RequestState> m_state;
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
