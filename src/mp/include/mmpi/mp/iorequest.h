// mmpi::mp::IoRequest<T>: a handle on one receive or send (PJ's IORequest) that
// finishes with a Result<T>: poll it, get a callback, wait in a local event loop
// or co_await it in any C++20 coroutine, on the thread of the group it came from.
#pragma once

#include <mmpi/core/result.h>

#include <QObject>

#include <coroutine>
#include <functional>
#include <memory>
#include <optional>

namespace mmpi::mp {

namespace detail {
template<typename T>
class IoRequestState;
}

template<typename T>
class IoRequest
{
public:
    using State = detail::IoRequestState<T>;

    IoRequest() = default; // null: never finishes
    explicit IoRequest(std::shared_ptr<State> state);

    bool isNull() const { return !m_state; }
    bool isFinished() const;
    // The outcome once finished, nullopt before.
    std::optional<Result<T>> result() const;
    // Run a local event loop until finished or `timeoutMs` passed (negative:
    // no limit); false on timeout (the request stays posted; cancel() it if it
    // is no longer wanted).
    bool waitForFinished(int timeoutMs) const;
    // Run a local event loop until finished, however long that takes (what
    // Channel::send() does, as PJ's send blocks); Cancelled for a null handle.
    Result<T> wait() const;
    // Withdraw a request that has not finished; it finishes with Cancelled
    // (a send withdrawn this way wrote nothing). False if already finished.
    bool cancel() const;
    // Call `f` with the outcome on `context`'s thread, from its event loop,
    // once finished (queued at once if it already is). Dropped if `context`
    // is destroyed first.
    void onFinished(QObject *context, std::function<void(const Result<T> &)> f) const;

    struct Awaiter
    {
        std::shared_ptr<State> state;
        bool await_ready() const noexcept;
        void await_suspend(std::coroutine_handle<> handle) const;
        Result<T> await_resume() const;
    };
    // Resumes the coroutine from the event loop of the thread that finished
    // the request (the group's), never from inside the group's own call stack.
    Awaiter operator co_await() const { return {m_state}; }

private:
    std::shared_ptr<State> m_state;
};

} // namespace mmpi::mp
