// Operation<R>: a blocking-or-awaitable send or receive, the return type of
// Communicator::send() and recv(). The operation has already started when it
// is returned; `co_await op` suspends the coroutine (resuming on its own
// thread), `op.wait()` blocks (not on a GUI thread). Either yields Result<R>.
#pragma once

#include <mmpi/comm/request.h>

#include <functional>

namespace mmpi {

template<typename R>
class [[nodiscard]] Operation
{
public:
    using Finish = std::function<Result<R>(const Request &)>;

    Operation(Request request, Finish finish) : m_request(std::move(request)), m_finish(std::move(finish)) {}

    Result<R> wait() const { return m_finish(m_request); }
    Request request() const { return m_request; }

    struct Awaiter
    {
        Request::Awaiter inner;
        Request request;
        Finish finish;
        bool await_ready() const noexcept { return inner.await_ready(); }
        void await_suspend(std::coroutine_handle<> handle) const { inner.await_suspend(handle); }
        Result<R> await_resume() const { return finish(request); }
    };
    Awaiter operator co_await() const { return {m_request.operator co_await(), m_request, m_finish}; }

private:
    Request m_request;
    Finish m_finish;
};

} // namespace mmpi
