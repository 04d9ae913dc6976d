#include "replaybuffer.h"

#include <mmpi/wire/bufferpool.h>

namespace mmpi::detail {

void ReplayBuffer::keep(const Frame &frame)
{
    Q_ASSERT(frame.header.sequence == m_next);
    m_frames.push_back(frame);
    m_bytes += sizeOf(frame);
    ++m_next;
}

Result<void> ReplayBuffer::acknowledge(quint64 upTo)
{
    if (upTo >= m_next)
        return Error(ErrorCode::ProtocolViolation,
                     QStringLiteral("acknowledgement of frame %1, but only %2 were sent").arg(upTo).arg(m_next - 1));
    while (!m_frames.empty() && m_frames.front().header.sequence <= upTo) {
        m_bytes -= sizeOf(m_frames.front());
        // Its payload dies here unless a queue still holds it: then the
        // buffer can carry the next message.
        BufferPool::recycle(std::move(m_frames.front().payload));
        m_frames.pop_front();
    }
    return success();
}

Result<std::deque<Frame>> ReplayBuffer::framesAfter(quint64 received)
{
    // Below acknowledged(): the peer once said it had more than it now does,
    // and what it lost is gone from here too. Exactly-once cannot hold.
    if (received < acknowledged())
        return Error(ErrorCode::ProtocolViolation,
                     QStringLiteral("the peer resumes after frame %1, but it had acknowledged up to %2")
                         .arg(received).arg(acknowledged()));
    if (auto ok = acknowledge(received); !ok)
        return ok.error();
    return m_frames;
}

} // namespace mmpi::detail
