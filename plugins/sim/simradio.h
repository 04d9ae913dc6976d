// SimRadio: the one transmitter of a simulated node. Every frame of every link
// waits in one queue, occupies the radio for (header + payload) / bandwidth, and
// reaches its link's socket one latency after it left (docs/guide/transports.md, "sim").
#pragma once

#include <mmpi/transport/link.h>

#include <QElapsedTimer>
#include <QHash>
#include <QPointer>
#include <QSet>
#include <QTimer>

#include <deque>

namespace mmpi {

class SimRadio : public QObject
{
    Q_OBJECT
public:
    explicit SimRadio(QObject *parent = nullptr);
    ~SimRadio() override;

    // Applies to frames that leave the radio from now on; 0 bandwidth is unlimited.
    void setShape(qint64 latencyMs, qint64 bandwidth);
    // Most bytes the queue (waiting, on the air) may hold; see send().
    void setQueueLimit(qint64 bytes) { m_queueLimit = bytes; }
    qint64 queueLimit() const { return m_queueLimit; }
    qint64 queuedBytes() const { return m_queuedBytes; }

    // Queues `frame` for `link` (a link that writes to the real socket). False,
    // with nothing queued, if it would take the queue over its limit.
    bool send(Link *link, const Frame &frame);
    // Bytes of `link`'s frames still in the radio or on the air.
    qint64 pendingBytes(const Link *link) const { return m_pending.value(link); }
    // Forgets `link`'s frames (its link broke or is going away).
    void drop(const Link *link);
    // Forgets every frame, as when the node's radio fails.
    void dropAll();
    // Takes `link` over: its frames still go out, then it is closed and
    // deleted (at the latest after the same 10 s a StreamLink lingers).
    void closeWhenSent(Link *link);

private:
    // Departures are computed from the previous frame's end (or from when the
    // frame was queued, if the radio was idle), not from when a timer fired, so
    // late timers delay a delivery a little but never stretch the bandwidth.
    struct Entry
    {
        QPointer<Link> link;
        const Link *key; // the link's address, valid for lookups after it is gone
        Frame frame;
        qint64 size;
        // In the transmit queue: when it was queued; on the air: when it arrives.
        qint64 time;
    };

    qint64 now() const { return m_clock.nsecsElapsed(); }
    qint64 transmitNs(qint64 bytes) const;
    void advance();
    void deliver(Entry &entry);
    void schedule();
    void forget(const Entry &entry);
    void finishClosing(const Link *link);

    QElapsedTimer m_clock;
    QTimer m_timer;
    qint64 m_latencyNs = 0;
    qint64 m_bandwidth = 0;
    qint64 m_queueLimit = 64LL * 1024 * 1024;
    std::deque<Entry> m_transmit; // the head is on the radio
    std::deque<Entry> m_air;      // left the radio, in arrival order
    // When the radio finished (or abandoned) its last frame.
    qint64 m_freeAt = 0;
    qint64 m_queuedBytes = 0;
    QHash<const Link *, qint64> m_pending;
    QHash<const Link *, QPointer<Link>> m_closing;
    bool m_advancing = false;
};

} // namespace mmpi
