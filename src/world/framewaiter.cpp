#include <mmpi/world/framewaiter.h>

#include "worldprivate.h"

#include <mmpi/core/logging.h>

#include <QVarLengthArray>

#include <cerrno>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

namespace mmpi {

namespace {

// A wait that hears nothing for this long claims its links afresh: a link
// may have been paused, resumed or replaced meanwhile. Only a safety net:
// frames and wake-ups end waits long before.
constexpr int RecheckMs = 50;

} // namespace

struct FrameWaiter::Claimed
{
    int rank = NoRank;
    std::shared_ptr<detail::DirectPath> path;
    std::shared_ptr<LinkReader> reader;

    // False: stop polling this link (paused, stopped, ended or failed).
    bool read(WorldPrivate &world) const
    {
        return reader->readAvailable([&](Frame &&frame) { world.deliverRead(rank, path, std::move(frame)); });
    }
};

std::shared_ptr<FrameWaiter> FrameWaiter::forThisThread()
{
    thread_local const std::shared_ptr<FrameWaiter> waiter = std::make_shared<FrameWaiter>();
    return waiter;
}

FrameWaiter::FrameWaiter()
    : m_event(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), m_thread(QThread::currentThreadId())
{
    if (m_event < 0)
        qCWarning(lcWorld) << "no eventfd for a waiting thread:" << strerror(errno);
}

FrameWaiter::~FrameWaiter()
{
    if (m_event >= 0)
        ::close(m_event);
}

void FrameWaiter::wake()
{
    const quint64 one = 1;
    while (::write(m_event, &one, sizeof one) < 0 && errno == EINTR) {
    }
}

void FrameWaiter::drainWakeUps()
{
    quint64 count = 0;
    while (::read(m_event, &count, sizeof count) < 0 && errno == EINTR) {
    }
}

bool FrameWaiter::sleepUntilWoken(int timeoutMs)
{
    pollfd event{m_event, POLLIN, 0};
    const int n = ::poll(&event, 1, timeoutMs);
    if (n > 0)
        drainWakeUps();
    return n > 0;
}

void FrameWaiter::wait(World &world, int source, const std::function<bool()> &finished)
{
    WorldPrivate &d = *world.d;
    while (!finished()) {
        QList<Claimed> claimed;
        for (const auto &[rank, path] : d.pathsFrom(source)) {
            const std::shared_ptr<LinkReader> reader = path->reader();
            const LinkReader::Claim claim = reader ? reader->claim() : LinkReader::Claim::Refused;
            if (claim == LinkReader::Claim::Refused)
                continue;
            Claimed link{rank, path, reader};
            // Whole frames already read (held back by a pause) come first.
            if (claim == LinkReader::Claim::Buffered && !link.read(d))
                reader->release();
            else
                claimed.append(std::move(link));
        }
        if (claimed.isEmpty()) {
            if (!finished())
                sleepUntilWoken(RecheckMs);
            continue;
        }
        pollClaimed(world, claimed, finished);
        for (const Claimed &link : std::as_const(claimed))
            link.reader->release();
    }
}

void FrameWaiter::pollClaimed(World &world, QList<Claimed> &claimed, const std::function<bool()> &finished)
{
    WorldPrivate &d = *world.d;
    QVarLengthArray<pollfd, 16> fds;
    while (!finished() && !claimed.isEmpty()) {
        fds.resize(claimed.size() + 1);
        fds[0] = {m_event, POLLIN, 0};
        for (qsizetype i = 0; i < claimed.size(); ++i)
            fds[i + 1] = {claimed[i].reader->descriptor(), POLLIN, 0};
        const int ready = ::poll(fds.data(), nfds_t(fds.size()), RecheckMs);
        if (ready == 0)
            return;
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            qCWarning(lcWorld) << "a waiting thread cannot poll its links:" << strerror(errno);
            sleepUntilWoken(RecheckMs);
            return;
        }
        if (fds[0].revents)
            drainWakeUps();
        for (qsizetype i = claimed.size() - 1; i >= 0; --i) {
            if (fds[i + 1].revents && !claimed[i].read(d)) {
                claimed[i].reader->release();
                claimed.removeAt(i);
            }
        }
    }
}

} // namespace mmpi
