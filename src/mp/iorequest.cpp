#include <mmpi/mp/iorequest.h>
#include <mmpi/mp/received.h>

#include "iorequeststate.h"

#include <QEventLoop>
#include <QTimer>

namespace mmpi::mp {

namespace detail {

template<typename T>
void IoRequestState<T>::finish(Result<T> result)
{
    if (outcome)
        return;
    outcome = std::move(result);
    withdraw = nullptr;
    const QList<Callback> taken = std::exchange(callbacks, {});
    for (const Callback &callback : taken) {
        if (!callback.context)
            continue;
        QTimer::singleShot(0, callback.context.data(), [f = callback.f, value = *outcome] { f(value); });
    }
    if (auto handle = std::exchange(waiter, nullptr))
        QTimer::singleShot(0, [handle] { handle.resume(); });
}

} // namespace detail

template<typename T>
IoRequest<T>::IoRequest(std::shared_ptr<State> state) : m_state(std::move(state))
{
}

template<typename T>
bool IoRequest<T>::isFinished() const
{
    return m_state && m_state->isFinished();
}

template<typename T>
std::optional<Result<T>> IoRequest<T>::result() const
{
    if (!m_state)
        return std::nullopt;
    return m_state->outcome;
}

template<typename T>
bool IoRequest<T>::waitForFinished(int timeoutMs) const
{
    if (!m_state)
        return false;
    if (m_state->isFinished())
        return true;
    QEventLoop loop;
    QTimer timer;
    timer.setSingleShot(true);
    QObject::connect(&timer, &QTimer::timeout, &loop, &QEventLoop::quit);
    onFinished(&loop, [&loop](const Result<T> &) { loop.quit(); });
    if (timeoutMs >= 0)
        timer.start(timeoutMs);
    loop.exec();
    return m_state->isFinished();
}

template<typename T>
Result<T> IoRequest<T>::wait() const
{
    if (!m_state)
        return Error(ErrorCode::Cancelled, QStringLiteral("null request: it never finishes"));
    waitForFinished(-1);
    return *m_state->outcome;
}

template<typename T>
bool IoRequest<T>::cancel() const
{
    if (!m_state || m_state->isFinished())
        return false;
    if (auto withdraw = m_state->withdraw)
        withdraw();
    m_state->finish(Error(ErrorCode::Cancelled, QStringLiteral("cancelled before it finished")));
    return true;
}

template<typename T>
void IoRequest<T>::onFinished(QObject *context, std::function<void(const Result<T> &)> f) const
{
    if (!m_state || !context)
        return;
    if (m_state->isFinished()) {
        QTimer::singleShot(0, context, [f = std::move(f), value = *m_state->outcome] { f(value); });
        return;
    }
    m_state->callbacks.append({context, std::move(f)});
}

template<typename T>
bool IoRequest<T>::Awaiter::await_ready() const noexcept
{
    return !state || state->isFinished();
}

template<typename T>
void IoRequest<T>::Awaiter::await_suspend(std::coroutine_handle<> handle) const
{
    state->waiter = handle;
}

template<typename T>
Result<T> IoRequest<T>::Awaiter::await_resume() const
{
    if (!state)
        return Error(ErrorCode::Cancelled, QStringLiteral("null request"));
    return *state->outcome;
}

// The two kinds of request the layer has; the template stays out of the
// public header so that the state and Qt's event loop do too.
template class detail::IoRequestState<Received>;
template class detail::IoRequestState<void>;
template class IoRequest<Received>;
template class IoRequest<void>;

} // namespace mmpi::mp
