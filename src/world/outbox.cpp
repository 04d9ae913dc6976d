#include "outbox.h"

#include <QScopedValueRollback>
#include <QtEndian>

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

void Outbox::pump(Link *link, DirectPath &path)
{
    // A write may flush and report bytesWritten at once, which calls pump()
    // again; the outer loop goes on and must not see the queue change under it.
    if (m_pumping)
        return;
    const QScopedValueRollback guard(m_pumping, true);
    while (!isEmpty() && link->state() == Link::State::Connected && link->bytesToWrite() < m_highWater) {
        auto &queue = m_small.empty() ? m_bulk : m_small;
        Pending &next = queue.front();
        const Written written = write(link, path, next);
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

Outbox::Written Outbox::write(Link *link, DirectPath &path, Pending &message)
{
    if (isBulk(message.frame))
        return writeFragment(link, path, message);
    return path.send(link, message.frame) ? Written::All : Written::Nothing;
}

Outbox::Written Outbox::writeFragment(Link *link, DirectPath &path, Pending &message)
{
    const QByteArray &payload = message.frame.payload;
    const bool first = message.offset == 0;
    const qint64 length = qMin<qint64>(m_chunkSize, payload.size() - message.offset);
    const bool last = message.offset + length == payload.size();

    Frame fragment;
    fragment.header = message.frame.header;
    fragment.header.kind = FrameKind::Fragment;
    fragment.header.flags = (first ? FirstFragment : 0) | (last ? LastFragment : 0);
    // A real copy of the slice, not QByteArray::fromRawData(): a socket may keep
    // a reference to the array it was given until it is written out, after the
    // message itself (and the bytes a raw array would point to) is gone.
    if (first) {
        fragment.payload.resize(FragmentLengthSize);
        qToBigEndian<quint64>(quint64(payload.size()), fragment.payload.data());
    }
    fragment.payload.append(payload.constData() + message.offset, length);
    if (!path.send(link, std::move(fragment)))
        return Written::Nothing;
    message.offset += length;
    return last ? Written::All : Written::Part;
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
