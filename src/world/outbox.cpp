#include "outbox.h"

#include <QScopedValueRollback>
#include <QtEndian>

namespace mmpi::detail {

namespace {

// Bytes [from, from + length) of `whole` without copying them: the slice
// shares whole's allocation and holds a reference to it, so it stays valid in
// the replay buffer and the socket's queue after the message is gone (which
// QByteArray::fromRawData() would not). Writing to it detaches, as to any
// shared QByteArray.
QByteArray sharedSlice(const QByteArray &whole, qsizetype from, qsizetype length)
{
    QByteArray::DataPointer slice = const_cast<QByteArray &>(whole).data_ptr();
    slice.ptr += from;
    slice.size = length;
    return QByteArray(std::move(slice));
}

} // namespace

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
    Frame fragment;
    fragment.header = message.frame.header;
    fragment.header.kind = FrameKind::Fragment;
    if (!message.announced) {
        // The length alone: a first slice would have to be copied behind it
        // here, and on the receiver out of the link's staging buffer (a first
        // fragment is read before the receive's buffer is known).
        fragment.header.flags = FirstFragment;
        fragment.payload = QByteArray(FragmentLengthSize, Qt::Uninitialized);
        qToBigEndian<quint64>(quint64(payload.size()), fragment.payload.data());
        if (!path.send(link, std::move(fragment)))
            return Written::Nothing;
        message.announced = true;
        return Written::Part;
    }
    const qint64 length = qMin<qint64>(m_chunkSize, payload.size() - message.offset);
    const bool last = message.offset + length == payload.size();
    fragment.header.flags = last ? LastFragment : 0;
    fragment.payload = sharedSlice(payload, message.offset, length);
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
