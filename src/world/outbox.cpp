#include "outbox.h"

#include "fragments.h"

#include <QScopedValueRollback>

namespace mmpi::detail {

Outbox::Outbox(int chunkSize, qint64 highWater)
    : m_chunkSize(chunkSize), m_highWater(highWater)
{
}

bool Outbox::isBulk(const Frame &frame) const
{
    return frame.header.kind == FrameKind::Data && frame.payload.size() > m_chunkSize;
}

// Order is promised per (communicator, tag): a frame that shares them with a
// message still in the bulk queue must wait behind it, whatever its size.
// Anything but data (a Goodbye) waits for every message queued before it.
bool Outbox::followsBulk(const Frame &frame) const
{
    if (frame.header.kind != FrameKind::Data)
        return !m_bulk.empty();
    for (const Pending &p : m_bulk)
        if (p.frame.header.communicator == frame.header.communicator
            && p.frame.header.tag == frame.header.tag)
            return true;
    return false;
}

void Outbox::enqueue(Frame frame, SendCallback done)
{
    if (isBulk(frame) || followsBulk(frame))
        m_bulk.push_back({std::move(frame), std::move(done)});
    else
        m_small.push_back({std::move(frame), std::move(done)});
}

void Outbox::pump(Link *link, PeerStream &stream)
{
    // A write may flush and report bytesWritten at once, which calls pump()
    // again; the outer loop goes on and must not see the queue change under it.
    if (m_pumping)
        return;
    const QScopedValueRollback guard(m_pumping, true);
    while (!isEmpty() && link->state() == Link::State::Connected && link->bytesToWrite() < m_highWater) {
        auto &queue = m_small.empty() ? m_bulk : m_small;
        Pending &next = queue.front();
        const Written written = write(link, stream, next);
        if (written == Written::Nothing)
            return; // the replay buffer is full: an ack pumps again
        if (written == Written::Part)
            continue;
        SendCallback done = std::move(next.done);
        queue.pop_front();
        if (done)
            done({});
    }
}

Outbox::Written Outbox::write(Link *link, PeerStream &stream, Pending &message)
{
    if (isBulk(message.frame))
        return writeFragment(link, stream, message);
    return stream.send(link, message.frame) ? Written::All : Written::Nothing;
}

Outbox::Written Outbox::writeFragment(Link *link, PeerStream &stream, Pending &message)
{
    if (!message.announced) {
        if (!stream.send(link, fragmentAnnouncement(message.frame)))
            return Written::Nothing;
        message.announced = true;
        return Written::Part;
    }
    const qint64 length = qMin<qint64>(m_chunkSize, message.frame.payload.size() - message.offset);
    if (!stream.send(link, fragmentOf(message.frame, message.offset, length)))
        return Written::Nothing;
    message.offset += length;
    return message.offset == message.frame.payload.size() ? Written::All : Written::Part;
}

void Outbox::failAll(const Error &error)
{
    for (auto *queue : {&m_small, &m_bulk}) {
        auto pending = std::exchange(*queue, {});
        for (Pending &p : pending)
            if (p.done)
                p.done(error);
    }
}

} // namespace mmpi::detail
