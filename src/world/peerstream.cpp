#include "peerstream.h"

#include "fragments.h"

#include <QtEndian>

#include <mmpi/core/logging.h>

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

PeerStream::PeerStream(int rank, qint64 replayLimit, qint64 maxMessageSize)
    : m_rank(rank), m_replay(replayLimit), m_ackBytes(replayLimit / AckFraction), m_assembly(maxMessageSize)
{
}

void PeerStream::restart()
{
    m_replay.clear();
    m_blockedLogged = false;
    m_received = 0;
    m_sent = 0;
    m_acked = 0;
    m_bytesSinceAck = 0;
    abandonMessage();
}

bool PeerStream::send(Link *link, Frame frame)
{
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
    m_sent = frame.header.sequence;
    m_replay.keep(std::move(frame));
    return true;
}

Result<void> PeerStream::acknowledge(quint64 upTo)
{
    auto ok = m_replay.acknowledge(upTo);
    if (ok && m_blockedLogged && m_replay.hasRoom()) {
        m_blockedLogged = false;
        qCInfo(lcWorld) << "sending to rank" << m_rank << "goes on: acknowledged up to frame" << upTo;
    }
    return ok;
}

Result<qsizetype> PeerStream::resume(Link *link, quint64 peerReceived)
{
    auto missing = m_replay.framesAfter(peerReceived);
    if (!missing)
        return missing.error();
    for (const Frame &frame : *missing)
        link->sendFrame(frame);
    return qsizetype(missing->size());
}

Result<void> PeerStream::accept(const FrameHeader &header, bool &ackDue)
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
    m_received = expected;
    m_bytesSinceAck += FrameHeaderSize + qint64(header.payloadLength);
    ackDue = m_bytesSinceAck >= m_ackBytes;
    return success();
}

std::optional<quint64> PeerStream::takeAck()
{
    m_bytesSinceAck = 0;
    const quint64 received = m_received.load();
    if (std::exchange(m_acked, received) == received)
        return std::nullopt;
    return received;
}

Result<PeerStream::Assembly> PeerStream::addFragment(const Frame &fragment, const MessagePlacement &placement,
                                                     bool &wasPlaced)
{
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

void PeerStream::abandonMessage()
{
    m_assembly.abandon();
}

} // namespace mmpi::detail
