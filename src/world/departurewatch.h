// DepartureWatch: sends whose completion waits until the frame has left this
// node, not only until its link took it (Link::unsentBytes()), and the send
// rate that links show while they drain. The kernel tells nothing when its
// queue drains, so the watch polls the links it waits on, only while it waits.
// Lives on the progress thread, like the links.
#pragma once

#include "outbox.h"

#include <mmpi/transport/link.h>

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <deque>
#include <functional>
#include <vector>

namespace mmpi::detail {

class DepartureWatch : public QObject
{
    Q_OBJECT
public:
    // Gets each measured rate: bytes per second that left the link to `rank`
    // while it had bytes waiting all along.
    using RateSink = std::function<void(int rank, double bytesPerSecond)>;
    explicit DepartureWatch(RateSink sink, QObject *parent = nullptr);
    ~DepartureWatch() override;

    // `link` (to `rank`) has just taken a whole frame: `done` runs once every
    // byte it holds now has left. A link that closes first runs it with no
    // error: the frame is then the replay buffer's, which resends it.
    void waitForDeparture(int rank, Link *link, SendCallback done);
    // `link` took `bytes` more: if that leaves at least MinSampleBytes
    // waiting in it, time how fast they leave.
    void noteQueued(int rank, Link *link, quint64 bytes);

    // A rate from fewer bytes is mostly the kernel's first window, which
    // leaves at once, and the poll's granularity (16 KiB is 180 ms on a
    // 90 kB/s Bluetooth link, so a 1 ms poll errs by under 1 %).
    static constexpr quint64 MinSampleBytes = 16 * 1024;
    // What may still be unsent of a frame that counts as departed: about one
    // packet on the air (Ethernet's and Wi-Fi's 1500-byte MTU; RFCOMM's
    // frames are smaller). The next copy then shares the radio with at most
    // that much of this one, and a frame this small, which the kernel may
    // hold back (autocorking) while an earlier packet is on the air, costs
    // no poll.
    static constexpr qint64 SlackBytes = 1500;
    // A link is polled at most this often: the gap it leaves on the radio
    // between one copy and the next (90 bytes at Bluetooth's 90 kB/s).
    static constexpr int PollMs = 1;
    // ... and at least this often while something waits, however slow it
    // drains (a stale rate must not keep a broadcast waiting).
    static constexpr int MaxPollMs = 20;

private:
    struct Wait
    {
        quint64 mark; // departed() reaches it when the frame has left, but for SlackBytes
        SendCallback done;
    };
    struct Watched
    {
        int rank = -1;
        QPointer<Link> link;
        std::deque<Wait> waits;
        bool sampling = false;
        quint64 sampleFrom = 0; // departed() when the sample began
        QElapsedTimer sampleClock;
        double bytesPerMs = 0; // the last rate measured, to pace the polls
    };

    static quint64 departed(const Link *link);
    Watched &watched(int rank, Link *link);
    void poll();
    // Runs the waits that are over; false once nothing on it needs a poll.
    bool check(Watched &w, std::vector<SendCallback> &ready);
    void finishSample(Watched &w, quint64 departedNow);
    void schedule();

    RateSink m_sink;
    std::vector<Watched> m_links;
    QTimer m_timer;
};

} // namespace mmpi::detail
