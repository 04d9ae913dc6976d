// DirectPath: how a thread other than the progress thread sends a small frame
// to one peer at once, writing it to the link itself instead of handing it to
// the engine. That saves two thread wake-ups per message (hand the frame over,
// hear that it went), most of a small message's latency. It is taken only when
// nothing sent earlier still waits in the engine, so per-sender order holds.
#pragma once

#include <mmpi/transport/link.h>

#include <QMutex>

#include <atomic>

namespace mmpi::detail {

class DirectPath
{
public:
    explicit DirectPath(qint64 queueLimit) : m_queueLimit(queueLimit) {}

    // Progress thread: the link to use (nullptr: none). Cleared before the
    // link is closed or deleted.
    void setLink(Link *link);

    // Any thread, before handing a frame to the engine instead; the engine
    // calls handedOver() once the frame is on the link (or has failed).
    void aboutToQueue() { ++m_queued; }
    void handedOver() { --m_queued; }

    // Any thread: send `frame` (sequence number assigned here) if the path is
    // open and nothing is queued ahead of it. False: nothing was sent.
    bool trySend(Frame &frame);
    // Progress thread: the sequence number of a frame sent through the engine.
    quint64 takeSequence();

private:
    QMutex m_mutex; // guards m_link and m_nextSequence
    Link *m_link = nullptr;
    quint64 m_nextSequence = 0;
    std::atomic<int> m_queued = 0;
    const qint64 m_queueLimit;
};

} // namespace mmpi::detail
