// mmpi::FrameWaiter: how a thread blocked on a message waits. It claims the
// links the message can come from (LinkReader) and polls them itself, so the
// message does not pass through the progress thread: one thread wake-up per
// message, as with a plain blocking socket, instead of two. One per thread.
#pragma once

#include <mmpi/transport/linkreader.h>
#include <mmpi/world/adaptivespin.h>
#include <mmpi/world/world.h>

#include <QThread>
#include <QVarLengthArray>

#include <functional>
#include <memory>

struct pollfd;

namespace mmpi {

class WorldPrivate;

class FrameWaiter
{
public:
    // This thread's waiter, made on first use and kept while the thread runs.
    static std::shared_ptr<FrameWaiter> forThisThread();
    // A thread about to block some other way gives its links back at once
    // (see wait()); a no-op on a thread that never waited here.
    static void releaseParkedOnThisThread();
    FrameWaiter();
    ~FrameWaiter();
    FrameWaiter(const FrameWaiter &) = delete;
    FrameWaiter &operator=(const FrameWaiter &) = delete;

    // Any thread: the current or next wait() checks its condition again.
    void wake();
    // wake() from the waiting thread itself is never needed.
    bool isCurrentThread() const { return QThread::currentThreadId() == m_thread; }

    // Returns once `finished()` holds (checked after every wake() and every
    // frame read), reading `world`'s links from `source` (a world rank; negative,
    // such as comm's AnySource, for every peer) meanwhile. Links it cannot read (the world
    // is not formed, the transport has no reader, the link is paused or read
    // by another thread) are left to the progress thread; then it sleeps
    // until wake(). On return the links stay parked (LinkReader::park) for
    // a moment, so that the next wait, usually soon (a send, then the next
    // receive), finds them claimed and the progress thread asleep.
    void wait(World &world, int source, const std::function<bool()> &finished);
    void releaseParked();

private:
    struct Claimed;
    // On the stack: a wait per message must not allocate.
    using ClaimedLinks = QVarLengthArray<Claimed, 8>;
    // Polls the claimed links until finished, nothing is left to poll, or a
    // while without news (then the claims are made afresh).
    void pollClaimed(World &world, ClaimedLinks &claimed, const std::function<bool()> &finished,
                     QList<std::shared_ptr<LinkReader>> &handedOver, AdaptiveSpin::Duration spinBudget);
    bool readClaimed(WorldPrivate &d, ClaimedLinks &claimed, const ::pollfd *ready,
                     QList<std::shared_ptr<LinkReader>> &handedOver);
    void spinWhileEngineReads(const std::function<bool()> &finished, std::chrono::steady_clock::time_point until);
    bool yieldsFirst();
    bool sleepUntilWoken(int timeoutMs);
    void drainWakeUps();

    int m_event = -1; // eventfd, written by wake()
    QList<std::shared_ptr<LinkReader>> m_parked;
    AdaptiveSpin m_spin;
    bool m_yieldFirst = false; // see yieldsFirst()
    quint8 m_waitsSinceCheck = 0;
    Qt::HANDLE m_thread;
};

} // namespace mmpi
