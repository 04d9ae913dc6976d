#include "parksweeper.h"

#include "streamreader.h"

#include <chrono>
#include <thread>

#ifdef Q_OS_LINUX
#include <pthread.h>
#endif

namespace mmpi::detail {

ParkSweeper &ParkSweeper::instance()
{
    // Never destroyed: its thread may still sweep while statics go away at
    // exit, and it holds nothing but weak references and a mutex.
    static ParkSweeper *const sweeper = new ParkSweeper;
    return *sweeper;
}

void ParkSweeper::watch(std::weak_ptr<StreamReader> reader)
{
    std::lock_guard lock(m_mutex);
    m_watched.append(std::move(reader));
    if (!m_running) {
        m_running = true;
        std::thread([this] { run(); }).detach();
    } else if (m_watched.size() == 1) {
        m_parked.notify_one();
    }
}

// Sleeps while nothing is parked; otherwise wakes once a park period and
// hands back the readers parked at least that long (the others, parked
// again since, are kept for the next round).
void ParkSweeper::run()
{
#ifdef Q_OS_LINUX
    pthread_setname_np(pthread_self(), "mmpi-park");
#endif
    const auto period = std::chrono::nanoseconds(ParkNanoseconds);
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_parked.wait(lock, [this] { return !m_watched.isEmpty(); });
        m_parked.wait_for(lock, period);
        QList<std::weak_ptr<StreamReader>> round = std::exchange(m_watched, {});
        lock.unlock();
        const qint64 now = StreamReader::monotonicNanoseconds();
        QList<std::weak_ptr<StreamReader>> kept;
        for (const auto &weak : std::as_const(round))
            if (const auto reader = weak.lock(); reader && reader->expireParked(now, ParkNanoseconds))
                kept.append(weak);
        lock.lock();
        m_watched.append(kept);
    }
}

} // namespace mmpi::detail
