// Outbox: the frames waiting to go to one peer. Small frames go first; a
// message larger than the chunk size goes out as Fragment frames, one chunk at
// a time, so small frames to the same peer overtake it between chunks; the
// first fragment only announces the length, the others are slices of the
// message itself, never copies. Writes
// stop while the link has `highWater` bytes queued or the peer's replay
// buffer is full (flow control); every frame is numbered as it goes out.
#pragma once

#include <mmpi/core/error.h>
#include <mmpi/transport/link.h>

#include "peerstream.h"

#include <deque>
#include <functional>

namespace mmpi::detail {

// Called on the progress thread once the frame is handed to the link in full
// (NoError) or can never be (the link is gone).
using SendCallback = std::function<void(const Error &)>;

class Outbox
{
public:
    Outbox(int chunkSize, qint64 highWater);

    void enqueue(Frame frame, SendCallback done);
    // Write what the link can take now, numbered by `stream`.
    void pump(Link *link, PeerStream &stream);
    void failAll(const Error &error);
    bool isEmpty() const { return m_small.empty() && m_bulk.empty(); }

private:
    struct Pending
    {
        Frame frame;
        SendCallback done;
        bool announced = false; // its first fragment, the length, has gone
        qint64 offset = 0;      // payload bytes already sent as fragments
    };

    bool isBulk(const Frame &frame) const;
    bool followsBulk(const Frame &frame) const;
    enum class Written { Nothing, Part, All };
    Written write(Link *link, PeerStream &stream, Pending &message);
    // Writes the next fragment of the message.
    Written writeFragment(Link *link, PeerStream &stream, Pending &message);

    int m_chunkSize;
    qint64 m_highWater;
    std::deque<Pending> m_small;
    std::deque<Pending> m_bulk;
    bool m_pumping = false;
};

} // namespace mmpi::detail
