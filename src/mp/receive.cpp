#include <mmpi/mp/receive.h>

#include "receivestate.h"

#include <QEventLoop>
#include <QTimer>

namespace mmpi::mp {

namespace detail {

void ReceiveState::finish(Result<Received> result)
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

Receive::Receive(std::shared_ptr<detail::ReceiveState> state) : m_state(std::move(state)) {}

bool Receive::isFinished() const
{
    return m_state && m_state->isFinished();
}

std::optional<Result<Received>> Receive::result() const
{
    if (!m_state)
        return std::nullopt;
    return m_state->outcome;
}

bool Receive::waitForFinished(int timeoutMs) const
{
    if (!m_state)
        return false;
    if (m_state->isFinished())
        return true;
    QEventLoop loop;
    QTimer timer;
    timer.setSingleShot(true);
    QObject::connect(&timer, &QTimer::timeout, &loop, &QEventLoop::quit);
    onFinished(&loop, [&loop](const Result<Received> &) { loop.quit(); });
    timer.start(timeoutMs);
    loop.exec();
    return m_state->isFinished();
}

bool Receive::cancel() const
{
    if (!m_state || m_state->isFinished())
        return false;
    if (auto withdraw = m_state->withdraw)
        withdraw();
    m_state->finish(Error(ErrorCode::Cancelled, QStringLiteral("receive cancelled")));
    return true;
}

void Receive::onFinished(QObject *context, std::function<void(const Result<Received> &)> f) const
{
    if (!m_state || !context)
        return;
    if (m_state->isFinished()) {
        QTimer::singleShot(0, context, [f = std::move(f), value = *m_state->outcome] { f(value); });
        return;
    }
    m_state->callbacks.append({context, std::move(f)});
}

bool Receive::Awaiter::await_ready() const noexcept
{
    return !state || state->isFinished();
}

void Receive::Awaiter::await_suspend(std::coroutine_handle<> handle) const
{
    state->waiter = handle;
}

Result<Received> Receive::Awaiter::await_resume() const
{
    if (!state)
        return Error(ErrorCode::Cancelled, QStringLiteral("null receive"));
    return *state->outcome;
}

} // namespace mmpi::mp
