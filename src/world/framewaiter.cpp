#include <mmpi/world/framewaiter.h>

#include "worldprivate.h"

#include <mmpi/core/logging.h>

#include <QVarLengthArray>

#include <cerrno>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

namespace mmpi {

namespace {

// A wait that hears nothing for this long claims its links afresh: a link
// may have been paused, resumed or replaced meanwhile. Only a safety net:
// frames and wake-ups end waits long before.
constexpr int RecheckMs = 50;

thread_local std::shared_ptr<FrameWaiter> t_waiter;

// How long a waiting thread may still poll without sleeping (AdaptiveSpin);
// each frame read starts the budget again.
class SpinBudget
{
public:
    explicit SpinBudget(std::chrono::microseconds budget) : m_budget(budget) { restart(); }
    bool left() const { return m_budget.count() > 0 && Clock::now() < m_end; }
    void restart() { m_end = Clock::now() + m_budget; }

private:
    using Clock = std::chrono::steady_clock;
    std::chrono::microseconds m_budget;
    Clock::time_point m_end;
};

} // namespace

struct FrameWaiter::Claimed
{
    int rank = NoRank;
    std::shared_ptr<detail::DirectPath> path;
    std::shared_ptr<LinkReader> reader;

    // A fragment the sink does not take here (or that comes while earlier
    // frames of the peer wait in the engine) goes to the engine, and so does
    // the link for the rest of the wait: a hand-off per fragment would cost
    // more than the engine reading them all.
    bool handedOver = false;
    quint64 frames = 0; // read so far

    // False: stop polling this link (handed over, paused, stopped, ended or failed).
    bool read(WorldPrivate &world)
    {
        // Captures two pointers: no allocation per read.
        const LinkReader::PayloadPlacement place = [w = &world, self = this](const FrameHeader &h) {
            return w->placeRead(self->rank, *self->path, h);
        };
        return reader->readAvailable([&](Frame &&frame) {
            ++frames;
            const bool fragment = frame.header.kind == FrameKind::Fragment;
            handedOver = !world.deliverRead(rank, path, std::move(frame)) && fragment;
            return !handedOver;
        }, place);
    }
};

std::shared_ptr<FrameWaiter> FrameWaiter::forThisThread()
{
    if (!t_waiter)
        t_waiter = std::make_shared<FrameWaiter>();
    return t_waiter;
}

void FrameWaiter::releaseParkedOnThisThread()
{
    if (t_waiter)
        t_waiter->releaseParked();
}

void FrameWaiter::releaseParked()
{
    const auto parked = std::exchange(m_parked, {});
    for (const auto &reader : parked)
        reader->release(this);
}

FrameWaiter::FrameWaiter()
    : m_event(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), m_thread(QThread::currentThreadId())
{
    if (m_event < 0)
        qCWarning(lcWorld) << "no eventfd for a waiting thread:" << strerror(errno);
}

FrameWaiter::~FrameWaiter()
{
    releaseParked();
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
    if (!m_spin.isConfiguredFor(d.waitSpin, d.waitSpinMax))
        m_spin.configure(d.waitSpin, d.waitSpinMax);
    const auto started = std::chrono::steady_clock::now();
    // Only the first round of polling spins: a later one comes after
    // RecheckMs without news, when a message no longer comes in a hurry.
    AdaptiveSpin::Duration spinBudget = m_spin.budget();
    QList<std::shared_ptr<LinkReader>> handedOver;
    while (!finished()) {
        ClaimedLinks claimed;
        // Paths and readers move along, not copied: each copy of a shared
        // pointer is an atomic add, and a wait for anyone takes every link.
        WorldPrivate::PathList paths = d.pathsFrom(source);
        for (auto &[rank, path] : paths) {
            std::shared_ptr<LinkReader> reader = path->reader();
            if (!reader || handedOver.contains(reader))
                continue;
            const LinkReader::Claim claim = reader->claim(this);
            if (claim == LinkReader::Claim::Refused)
                continue;
            Claimed link{rank, std::move(path), std::move(reader)};
            // Whole frames already read (held back by a pause) come first.
            if (claim == LinkReader::Claim::Buffered && !link.read(d)) {
                link.reader->release(this);
                if (link.handedOver)
                    handedOver.append(link.reader);
            } else
                claimed.append(std::move(link));
        }
        // Links parked by the last wait that this one does not read go back.
        // (Cleared, not exchanged: the list keeps its capacity for the next.)
        for (const auto &reader : std::as_const(m_parked))
            if (std::none_of(claimed.cbegin(), claimed.cend(), [&](const Claimed &c) { return c.reader == reader; }))
                reader->release(this);
        m_parked.clear();
        if (claimed.isEmpty()) {
            if (!handedOver.isEmpty())
                spinWhileEngineReads(finished, started + m_spin.budget());
            if (!finished())
                sleepUntilWoken(RecheckMs);
            continue;
        }
        pollClaimed(world, claimed, finished, handedOver, std::exchange(spinBudget, {}));
        for (Claimed &link : claimed) { // claimed ends here
            link.reader->park(this);
            m_parked.append(std::move(link.reader));
        }
    }
    m_spin.record(std::chrono::duration_cast<AdaptiveSpin::Duration>(std::chrono::steady_clock::now() - started));
}

void FrameWaiter::pollClaimed(World &world, ClaimedLinks &claimed, const std::function<bool()> &finished,
                              QList<std::shared_ptr<LinkReader>> &handedOver, AdaptiveSpin::Duration spinBudget)
{
    WorldPrivate &d = *world.d;
    QVarLengthArray<pollfd, 16> fds;
    SpinBudget spin(spinBudget);
    bool firstRead = true;
    while (!finished() && !claimed.isEmpty()) {
        fds.resize(claimed.size() + 1);
        fds[0] = {m_event, POLLIN, 0};
        for (qsizetype i = 0; i < claimed.size(); ++i)
            fds[i + 1] = {claimed[i].reader->descriptor(), POLLIN, 0};
        const bool spinning = spin.left();
        // Spinning on a link or two, a read that finds nothing costs what a
        // poll would, and one that finds the frame saves the poll.
        const bool readBlind = spinning && claimed.size() <= 2;
        const bool learning = readBlind && std::exchange(firstRead, false) && !yieldsFirst();
        const int ready = readBlind ? 0 : ::poll(fds.data(), nfds_t(fds.size()), spinning ? 0 : RecheckMs);
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            qCWarning(lcWorld) << "a waiting thread cannot poll its links:" << strerror(errno);
            sleepUntilWoken(RecheckMs);
            return;
        }
        if (ready == 0 && !spinning)
            return;
        if (fds[0].revents)
            drainWakeUps();
        const bool progress = readClaimed(d, claimed, readBlind ? nullptr : fds.data() + 1, handedOver);
        if (learning)
            m_yieldFirst = !progress;
        if (progress)
            spin.restart();
        else if (spinning)
            sched_yield(); // whoever sends next may be waiting for this CPU
    }
}

// A large message is coming in through the progress thread, which completes
// the wait when the message is whole: for what is left of the spin budget,
// looking at the condition (a load) is cheaper than being woken from sleep.
void FrameWaiter::spinWhileEngineReads(const std::function<bool()> &finished,
                                       std::chrono::steady_clock::time_point until)
{
    while (!finished() && std::chrono::steady_clock::now() < until)
        sched_yield(); // the progress thread may need this CPU
}

// A thread that waits for replies (it sent; now the peer must answer) finds
// nothing at its first read of a wait. Then it yields before that read, so
// that a peer sharing its CPU answers first and the read that would only say
// "nothing yet" is saved: 0.4-0.8 us of a pinned round trip. Every 16th wait
// reads first anyway, to notice when messages are there on arrival (then
// yielding first stops: it would hand the CPU away for nothing).
bool FrameWaiter::yieldsFirst()
{
    if (!m_yieldFirst || ++m_waitsSinceCheck % 16 == 0)
        return false;
    sched_yield();
    return true;
}

// Reads the claimed links (those `ready` marks, or all without it) and
// drops those to stop polling. True if any frame was read or link dropped.
bool FrameWaiter::readClaimed(WorldPrivate &d, ClaimedLinks &claimed, const pollfd *ready,
                              QList<std::shared_ptr<LinkReader>> &handedOver)
{
    bool progress = false;
    for (qsizetype i = claimed.size() - 1; i >= 0; --i) {
        if (ready && !ready[i].revents)
            continue;
        Claimed &link = claimed[i];
        const quint64 before = link.frames;
        const bool keep = link.read(d);
        progress = progress || link.frames != before || !keep;
        if (keep)
            continue;
        link.reader->release(this);
        if (link.handedOver)
            handedOver.append(link.reader);
        claimed.remove(i);
    }
    return progress;
}

} // namespace mmpi
