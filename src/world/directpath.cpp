#include "directpath.h"

#include "fragments.h"

#include <QtEndian>

#include <limits>

#include <mmpi/core/logging.h>
#include <mmpi/wire/bufferpool.h>

namespace mmpi::detail {

namespace {
// An ack goes when a quarter of the peer's replay buffer (the same size as
// ours: one configuration) has arrived, so its sender never waits for one
// while the link is busy, or on the engine's ack timer otherwise.
constexpr int AckFraction = 4;
} // namespace

bool isSequenced(FrameKind kind)
{
    return kind == FrameKind::Data || kind == FrameKind::Fragment || kind == FrameKind::Goodbye;
}

Frame ackFrame(int source, int destination, quint64 received)
{
    QByteArray payload(8, Qt::Uninitialized);
    qToBigEndian<quint64>(received, payload.data());
    Frame ack = makeFrame(FrameKind::Ack, ItemType::Long, 1, payload);
    ack.header.source = source;
    ack.header.destination = destination;
    return ack;
}

std::optional<quint64> ackedUpTo(const Frame &ack)
{
    const FrameHeader &h = ack.header;
    if (h.kind != FrameKind::Ack || h.itemType != ItemType::Long || h.count != 1 || ack.payload.size() != 8)
        return std::nullopt;
    return qFromBigEndian<quint64>(ack.payload.constData());
}

DirectPath::DirectPath(int rank, qint64 queueLimit, qint64 replayLimit, qint64 maxMessageSize)
    : m_rank(rank), m_replay(replayLimit), m_queueLimit(queueLimit), m_ackBytes(replayLimit / AckFraction),
      m_assembly(maxMessageSize)
{
}

void DirectPath::setLink(Link *link)
{
    std::shared_ptr<LinkReader> reader = link ? link->reader() : nullptr;
    QMutexLocker lock(&m_mutex);
    m_link = link;
    m_reader = std::move(reader);
}

void DirectPath::restart()
{
    QMutexLocker lock(&m_mutex);
    m_replay.clear();
    m_blockedLogged = false;
    m_received = 0;
    m_acked = 0;
    m_bytesSinceAck = 0;
    m_ackRequested = false;
    abandonMessage();
}

std::shared_ptr<LinkReader> DirectPath::reader() const
{
    QMutexLocker lock(&m_mutex);
    return m_reader;
}

bool DirectPath::trySend(Frame &frame)
{
    QMutexLocker lock(&m_mutex);
    // A frame still in the engine was sent before this one (by this thread,
    // or by one that synchronised with it): it must reach the link first.
    const bool sequenced = isSequenced(frame.header.kind);
    if (!m_link || m_queued.load() != 0 || (sequenced && !m_replay.hasRoom()))
        return false;
    frame.header.sequence = sequenced ? m_replay.nextSequence() : 0;
    if (!m_link->trySendNow(frame, m_queueLimit))
        return false;
    if (sequenced)
        m_replay.keep(kept(frame));
    return true;
}

// A borrowed payload (the sender's own items) has been written from where it
// lies; only now, while the peer already reads it, is it copied to be kept,
// unless its owner keeps it (then the frame is kept as it is).
Frame DirectPath::kept(const Frame &frame)
{
    if (!isBorrowed(frame.payload) || frame.owner)
        return frame;
    return {frame.header, BufferPool::owned(frame.payload)};
}

bool DirectPath::trySendFragmented(const Frame &message, int chunkSize)
{
    QMutexLocker lock(&m_mutex);
    const qint64 bytes = message.payload.size();
    const qint64 fragments = 1 + (bytes + chunkSize - 1) / chunkSize;
    const qint64 needed = FragmentLengthSize + bytes + fragments * FrameHeaderSize;
    if (!m_link || m_queued.load() != 0 || !m_replay.hasRoomFor(needed))
        return false;
    Frame announcement = fragmentAnnouncement(message);
    const quint64 first = m_replay.nextSequence();
    announcement.header.sequence = first;
    if (!m_link->trySendNow(announcement, m_queueLimit))
        return false;
    // Committed: the rest goes whatever the link has queued. Should the link
    // refuse a fragment (it is closing), the fragment is still numbered and
    // kept, like one lost on the way: a link made again replays it, and a
    // peer never reached is lost with everything sent to it.
    quint64 sequence = first;
    for (qint64 offset = 0; offset < bytes; offset += chunkSize) {
        Frame fragment = fragmentOf(message, offset, qMin<qint64>(chunkSize, bytes - offset));
        fragment.header.sequence = ++sequence;
        m_link->trySendNow(fragment, std::numeric_limits<qint64>::max());
    }
    keepWritten(announcement, kept(message), chunkSize, bytes);
    return true;
}

DirectPath::Head DirectPath::trySendHead(const Frame &message, int chunkSize, const RestQueue &queueRest)
{
    QMutexLocker lock(&m_mutex);
    const qint64 bytes = message.payload.size();
    const qint64 needed = FragmentLengthSize + bytes + (1 + (bytes + chunkSize - 1) / chunkSize) * FrameHeaderSize;
    if (!m_link || m_queued.load() != 0 || !m_replay.hasRoomFor(needed))
        return Head::NotSent;
    // A limit of 1: each frame only while the link has nothing queued, so
    // that no other frame to the peer waits behind more than one chunk here.
    Frame announcement = fragmentAnnouncement(message);
    announcement.header.sequence = m_replay.nextSequence();
    if (!m_link->trySendNow(announcement, 1))
        return Head::NotSent;
    quint64 sequence = announcement.header.sequence;
    qint64 offset = 0;
    while (offset < bytes) {
        const qint64 length = qMin<qint64>(chunkSize, bytes - offset);
        Frame fragment = fragmentOf(message, offset, length);
        fragment.header.sequence = sequence + 1;
        if (!m_link->trySendNow(fragment, 1))
            break;
        ++sequence;
        offset += length;
    }
    const Frame whole = kept(message);
    keepWritten(announcement, whole, chunkSize, offset);
    if (offset == bytes)
        return Head::Whole;
    ++m_queued;
    queueRest(whole, offset);
    return Head::Started;
}

// Kept once written: a borrowed payload is copied while the peer reads it,
// not before the first byte leaves. `whole` holds the message's own bytes.
void DirectPath::keepWritten(const Frame &announcement, const Frame &whole, int chunkSize, qint64 upTo)
{
    m_replay.keep(announcement);
    for (qint64 offset = 0; offset < upTo; offset += chunkSize) {
        Frame fragment = fragmentOf(whole, offset, qMin<qint64>(chunkSize, whole.payload.size() - offset));
        fragment.header.sequence = m_replay.nextSequence();
        m_replay.keep(fragment);
    }
}

bool DirectPath::send(Link *link, Frame frame)
{
    QMutexLocker lock(&m_mutex);
    if (!isSequenced(frame.header.kind)) {
        frame.header.sequence = 0;
        link->sendFrame(frame);
        return true;
    }
    if (!m_replay.hasRoom()) {
        if (!std::exchange(m_blockedLogged, true))
            qCInfo(lcWorld) << "sending to rank" << m_rank << "waits: its replay buffer holds"
                            << m_replay.bytes() << "bytes the peer has not acknowledged";
        return false;
    }
    frame.header.sequence = m_replay.nextSequence();
    link->sendFrame(frame);
    m_replay.keep(frame);
    return true;
}

quint64 DirectPath::sent() const
{
    QMutexLocker lock(&m_mutex);
    return m_replay.nextSequence() - 1;
}

bool DirectPath::hasRoom() const
{
    QMutexLocker lock(&m_mutex);
    return m_replay.hasRoom();
}

Result<void> DirectPath::acknowledge(quint64 upTo)
{
    QMutexLocker lock(&m_mutex);
    auto ok = m_replay.acknowledge(upTo);
    if (ok && m_blockedLogged && m_replay.hasRoom()) {
        m_blockedLogged = false;
        qCInfo(lcWorld) << "sending to rank" << m_rank << "goes on: acknowledged up to frame" << upTo;
    }
    return ok;
}

bool DirectPath::tryAcknowledge(const Frame &ack)
{
    const std::optional<quint64> upTo = ackedUpTo(ack);
    if (!upTo)
        return false;
    QMutexLocker lock(&m_mutex);
    return m_replay.hasRoom() && m_replay.acknowledge(*upTo);
}

Result<qsizetype> DirectPath::resume(Link *link, quint64 peerReceived, bool open)
{
    QMutexLocker lock(&m_mutex);
    auto missing = m_replay.framesAfter(peerReceived);
    if (!missing)
        return missing.error();
    for (const Frame &frame : *missing)
        link->sendFrame(frame);
    if (open) {
        m_link = link;
        m_reader = link->reader();
    }
    return qsizetype(missing->size());
}

Result<void> DirectPath::accept(const FrameHeader &header, bool &ackDue)
{
    ackDue = false;
    if (!isSequenced(header.kind)) {
        if (header.sequence == 0)
            return success();
        return Error(ErrorCode::ProtocolViolation, QStringLiteral("rank %1 sent a frame of kind %2 with sequence %3")
                                                       .arg(m_rank).arg(int(header.kind)).arg(header.sequence));
    }
    const quint64 expected = m_received.load() + 1;
    if (header.sequence != expected)
        return Error(ErrorCode::ProtocolViolation, QStringLiteral("rank %1 sent frame %2 where frame %3 was due")
                                                       .arg(m_rank).arg(header.sequence).arg(expected));
    m_received.store(expected);
    const qint64 bytes = FrameHeaderSize + qint64(header.payloadLength);
    const qint64 since = m_bytesSinceAck.fetch_add(bytes) + bytes;
    if (since >= m_ackBytes)
        ackDue = !m_ackRequested.exchange(true);
    return success();
}

// Where ranks are bound to CPUs the progress thread runs on the reader's CPU:
// handing it the ack woke it there and made the reader wait for this path's
// lock while it wrote (2 ranks, 1 MiB bcast: once per message).
bool DirectPath::trySendAck(int source)
{
    QMutexLocker lock(&m_mutex);
    if (!m_link || m_queued.load() != 0)
        return false;
    const quint64 received = m_received.load();
    if (m_acked.load() != received && !m_link->trySendNow(ackFrame(source, m_rank, received), m_queueLimit))
        return false;
    m_ackRequested.store(false);
    m_bytesSinceAck.store(0);
    m_acked.store(received);
    return true;
}

std::optional<quint64> DirectPath::takeAck()
{
    m_ackRequested.store(false);
    m_bytesSinceAck.store(0);
    const quint64 received = m_received.load();
    if (m_acked.exchange(received) == received)
        return std::nullopt;
    return received;
}

Result<DirectPath::Assembly> DirectPath::addFragment(const Frame &fragment, const MessagePlacement &placement,
                                                     bool &wasPlaced)
{
    QMutexLocker lock(&m_assemblyMutex);
    const bool placedBefore = m_assembly.placing();
    auto message = m_assembly.add(fragment, placement);
    if (!message) {
        wasPlaced = placedBefore || m_assembly.placing();
        m_assembly.abandon();
        return message.error();
    }
    Assembly assembly;
    if (message->has_value())
        assembly.message = std::move(**message);
    else if (m_assembly.placing())
        assembly.placedBytes = m_assembly.bufferedBytes();
    return assembly;
}

char *DirectPath::placeNextFragment(const FrameHeader &header, const MessagePlacement &placement)
{
    QMutexLocker lock(&m_assemblyMutex);
    return m_assembly.placeNext(header, placement);
}

void DirectPath::abandonMessage()
{
    QMutexLocker lock(&m_assemblyMutex);
    m_assembly.abandon();
}

} // namespace mmpi::detail
