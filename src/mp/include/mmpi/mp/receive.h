// mmpi::mp::Receive: a handle on one receive posted to a ChannelGroup. It
// finishes with the Received message or an error; callers poll it, get a
// callback on a context's thread, wait with a local event loop, or co_await it
// in any C++20 coroutine (QCoro::Task included). Use it on the group's thread.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/mp/received.h>

#include <QObject>

#include <coroutine>
#include <functional>
#include <memory>
#include <optional>

namespace mmpi::mp {

namespace detail {
class ReceiveState;
}

class Receive
{
public:
    Receive() = default; // null: never finishes
    explicit Receive(std::shared_ptr<detail::ReceiveState> state);

    bool isNull() const { return !m_state; }
    bool isFinished() const;
    // The outcome once finished, nullopt before.
    std::optional<Result<Received>> result() const;
    // Run a local event loop until finished or `timeoutMs` passed; false on
    // timeout (the receive stays posted; cancel() it if it is no longer wanted).
    bool waitForFinished(int timeoutMs) const;
    // Withdraw a receive that has not matched; it finishes with Cancelled.
    // False if it had already finished.
    bool cancel() const;
    // Call `f` with the outcome on `context`'s thread, from its event loop,
    // once finished (queued at once if it already is). Dropped if `context`
    // is destroyed first.
    void onFinished(QObject *context, std::function<void(const Result<Received> &)> f) const;

    struct Awaiter
    {
        std::shared_ptr<detail::ReceiveState> state;
        bool await_ready() const noexcept;
        void await_suspend(std::coroutine_handle<> handle) const;
        Result<Received> await_resume() const;
    };
    // Resumes the coroutine from the event loop of the thread that finished
    // the receive (the group's), never from inside the group's own call stack.
    Awaiter operator co_await() const { return {m_state}; }

private:
    std::shared_ptr<detail::ReceiveState> m_state;
};

} // namespace mmpi::mp
