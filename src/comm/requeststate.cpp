#include "requeststate.h"

namespace mmpi::detail {

RequestState::RequestState(Kind k, quint32 comm, int src, int t)
    : kind(k), communicator(comm), source(src), tag(t)
{
}

bool RequestState::matches(const FrameHeader &h) const
{
    return h.communicator == communicator && (source == AnySource || h.source == source)
           && (tag == AnyTag || h.tag == tag);
}

void RequestState::setReadFrom(World *world, int worldSource)
{
    m_readWorld = world;
    m_readSource = worldSource;
}

bool RequestState::complete(Result<Status> outcome, Payload payload)
{
    QList<std::function<void()>> continuations;
    std::shared_ptr<FrameWaiter> waiter;
    {
        QMutexLocker lock(&m_mutex);
        if (m_outcome)
            return false;
        m_payload = std::move(payload);
        m_outcome = std::move(outcome);
        continuations = std::exchange(m_continuations, {});
        waiter = std::exchange(m_waiter, {});
    }
    // Sequentially consistent, not just release: notify_all() wakes only if it
    // sees a waiter registered, and a release store may pass that check on
    // x86 and lose the wake-up of a thread that started to sleep meanwhile.
    m_finished.store(1, std::memory_order_seq_cst);
    m_finished.notify_all();
    if (waiter && !waiter->isCurrentThread())
        waiter->wake();
    for (const auto &f : continuations)
        f();
    return true;
}

bool RequestState::isFinished() const
{
    QMutexLocker lock(&m_mutex);
    return m_outcome.has_value();
}

std::optional<Result<Status>> RequestState::outcome() const
{
    QMutexLocker lock(&m_mutex);
    return m_outcome;
}

Result<Status> RequestState::wait() const
{
    if (m_readWorld && m_finished.load() == 0) {
        auto waiter = FrameWaiter::forThisThread();
        {
            QMutexLocker lock(&m_mutex);
            if (!m_outcome)
                m_waiter = waiter;
        }
        // complete() wakes the waiter after setting m_finished, so no
        // completion between the registration and the check is missed.
        waiter->wait(*m_readWorld, m_readSource, [this] { return m_finished.load() != 0; });
    } else if (m_finished.load() == 0) {
        // Links this thread parked must not wait for it while it sleeps here.
        FrameWaiter::releaseParkedOnThisThread();
    }
    m_finished.wait(0, std::memory_order_seq_cst);
    QMutexLocker lock(&m_mutex);
    return *m_outcome;
}

void RequestState::whenFinished(std::function<void()> f)
{
    {
        QMutexLocker lock(&m_mutex);
        if (!m_outcome) {
            m_continuations.append(std::move(f));
            return;
        }
    }
    f();
}

Status statusOf(const FrameHeader &h, qint64 bytes)
{
    return {h.source, h.tag, h.itemType, h.count, bytes};
}

} // namespace mmpi::detail
