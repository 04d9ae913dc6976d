// DirectPath: how a thread other than the progress thread sends a small frame
// to one peer at once, writing it to the link itself instead of handing it to
// the engine. That saves two thread wake-ups per message (hand the frame over,
// hear that it went), most of a small message's latency. It is taken only when
// nothing sent earlier still waits in the engine, so per-sender order holds.
// It also holds the link's reader for a thread that reads the peer's frames
// itself (FrameWaiter), and counts the frames such a thread handed to the
// engine, so that no later frame of the peer overtakes them.
#pragma once

#include <mmpi/transport/link.h>
#include <mmpi/transport/linkreader.h>

#include <QMutex>

#include <atomic>
#include <memory>

namespace mmpi::detail {

class DirectPath
{
public:
    explicit DirectPath(qint64 queueLimit) : m_queueLimit(queueLimit) {}

    // Progress thread: the link to use (nullptr: none). Cleared before the
    // link is closed or deleted.
    void setLink(Link *link);
    // Any thread: the link's reader, if it has one and the path is open.
    std::shared_ptr<LinkReader> reader() const;

    // Frames of this peer handed to the engine to handle later, in order
    // (a thread that read them could not deliver them itself). While any
    // wait, every later frame of the peer goes the same way.
    int readBacklog() const { return m_readBacklog.load(); }
    void deferRead() { ++m_readBacklog; }
    void deferredReadHandled() { --m_readBacklog; }

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
    mutable QMutex m_mutex; // guards m_link, m_reader and m_nextSequence
    Link *m_link = nullptr;
    std::shared_ptr<LinkReader> m_reader;
    std::atomic<int> m_readBacklog = 0;
    quint64 m_nextSequence = 0;
    std::atomic<int> m_queued = 0;
    const qint64 m_queueLimit;
};

} // namespace mmpi::detail
