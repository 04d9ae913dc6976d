// ReplayBuffer: the sequenced frames sent to one peer that it has not yet
// acknowledged, kept so that a link made again after a break resends exactly
// what the peer missed (docs/design/resume.md). Bounded in bytes:
// when it is full the sender waits for acks. Not thread-safe: the progress
// thread's PeerStream owns it.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/wire/frame.h>

#include <deque>

namespace mmpi::detail {

class ReplayBuffer
{
public:
    explicit ReplayBuffer(qint64 limit) : m_limit(limit) {}

    // Whether one more frame may be sent now; a single frame may take the
    // buffer over its limit, so a frame of any allowed size can go.
    bool hasRoom() const { return m_bytes < m_limit; }
    // Whether frames of `bytes` in all fit without going over the limit.
    bool hasRoomFor(qint64 bytes) const { return m_bytes + bytes <= m_limit; }
    // The sequence number the next frame gets (numbers start at 1).
    quint64 nextSequence() const { return m_next; }
    // Keep a frame stamped with nextSequence() that went onto the link.
    void keep(const Frame &frame);
    // The peer received everything up to `upTo`: forget it. An ack of a frame
    // never sent is a ProtocolViolation; an old ack changes nothing.
    Result<void> acknowledge(quint64 upTo);
    // After a reconnection: the frames the peer, which received up to
    // `received`, has not got, oldest first (the rest are forgotten).
    Result<std::deque<Frame>> framesAfter(quint64 received);

    // Forget everything; numbering starts again at 1 (a new peer's stream).
    void clear()
    {
        m_frames.clear();
        m_bytes = 0;
        m_next = 1;
    }

    qint64 bytes() const { return m_bytes; }
    qsizetype frameCount() const { return qsizetype(m_frames.size()); }
    quint64 acknowledged() const { return m_next - 1 - quint64(m_frames.size()); }

private:
    static qint64 sizeOf(const Frame &frame) { return FrameHeaderSize + frame.payload.size(); }

    const qint64 m_limit;
    std::deque<Frame> m_frames; // sequences acknowledged() + 1 .. m_next - 1
    qint64 m_bytes = 0;
    quint64 m_next = 1;
};

} // namespace mmpi::detail
