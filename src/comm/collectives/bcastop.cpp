#include "bcastop.h"

#include "router.h"

#include <mmpi/core/logging.h>
#include <mmpi/wire/bufferpool.h>
#include <mmpi/wire/itemcodec.h>

#include <cstring>

namespace mmpi::detail {

namespace {

// The segments' message: item type, count, bytes and, since segments go as
// bytes, the items' order (a fourth field; 3 fields mean big-endian), and
// the topology the tree was planned with (a fifth; 4 fields: none).
Payload streamHeader(ItemType type, quint32 count, qint64 bytes, ItemOrder order, BcastTopology topology)
{
    const qint64 fields[] = {qint64(type), qint64(count), bytes, order == QSysInfo::LittleEndian ? 1 : 0,
                             qint64(topology)};
    return {ItemType::Long, 5, encodeItems<qint64>(std::span<const qint64>(fields))};
}

constexpr qint64 LastTopology = qint64(BcastTopology::Fibonacci);

} // namespace

BcastOp::BcastOp(CollectiveSetup setup, int root, Payload payload, BcastOptions options)
    : CollectiveOp(std::move(setup)), m_root(root), m_options(options)
{
    if (m_root == rank()) {
        m_itemType = payload.itemType;
        m_count = payload.count;
        m_order = payload.order;
        m_whole = std::move(payload.bytes);
    }
}

void BcastOp::begin()
{
    if (m_root < 0 || m_root >= size()) {
        m_rootInvalid = true;
        return fail({ErrorCode::InvalidRank,
                     describe(QStringLiteral("root %1 is not a rank of this communicator").arg(m_root))});
    }
    if (!isRoot())
        return;
    m_haveMeta = true;
    m_totalBytes = m_received = m_whole.size();
    takeRange(m_root, size());
    planForwarding();
    pushSends();
    maybeFinish();
}

void BcastOp::takeRange(int root, int length)
{
    m_treeRoot = root;
    m_rangeLength = length;
}

void BcastOp::handleData(int from, Frame &frame, const CollectiveTag &tag)
{
    if (isRoot()) {
        fail({ErrorCode::ProtocolViolation,
              describe(QStringLiteral("rank %1 sent this bcast's root a message (is its root %2?)")
                           .arg(from).arg(frame.header.root))});
        return;
    }
    if (m_parent < 0) {
        // The first frame: who forwards to us, for which root and range.
        const int root = frame.header.root;
        const int length = tag.argument + 1;
        const bool knownRoot = root >= 0 && root < size() && root != rank();
        if (!knownRoot || (rank() - root + size()) % size() + length > size()) {
            fail({ErrorCode::ProtocolViolation,
                  describe(QStringLiteral("rank %1 forwarded root %2's message with a range of %3 ranks that "
                                          "does not fit").arg(from).arg(root).arg(length))});
            return;
        }
        if (root != m_root)
            m_deferredError = Error{ErrorCode::InvalidRank,
                                    describe(QStringLiteral("this rank named root %1, but the message came from "
                                                            "root %2").arg(m_root).arg(root))};
        m_parent = from;
        takeRange(root, length);
        if (tag.kind == CollectiveFrameKind::StreamHeader) {
            startStream(frame);
        } else {
            m_haveMeta = true;
            m_itemType = frame.header.itemType;
            m_count = frame.header.count;
            m_order = itemOrderOf(frame.header);
            m_whole = frame.payload;
            m_totalBytes = m_received = m_whole.size();
        }
    } else if (from != m_parent || tag.kind != CollectiveFrameKind::Data || !m_streamed || allPiecesIn()) {
        fail({ErrorCode::ProtocolViolation,
              describe(QStringLiteral("unexpected bcast frame from rank %1 (the message came from rank %2)")
                           .arg(from).arg(m_parent))});
        return;
    } else {
        if (frame.header.itemType != ItemType::UnsignedByte || m_received + frame.payload.size() > m_totalBytes) {
            fail({ErrorCode::ProtocolViolation,
                  describe(QStringLiteral("rank %1 sent more of the bcast than it announced").arg(from))});
            return;
        }
        addPiece(frame.payload);
    }
    if (isOver())
        return;
    if (!m_planned)
        planForwarding();
    pushSends();
    maybeFinish();
}

void BcastOp::startStream(const Frame &header)
{
    const auto fields = decodeItems<qint64>(header.header.itemType, header.header.count, header.payload);
    const qsizetype n = fields ? fields->size() : 0;
    const auto type = n >= 3 && n <= 5 ? itemTypeFromCode(quint8(fields->at(0))) : std::nullopt;
    const bool sane = type && fields->at(0) >= 0 && fields->at(0) <= 255 && fields->at(1) >= 0
                      && (n == 3 || fields->at(3) == 0 || fields->at(3) == 1)
                      && (n < 5 || (fields->at(4) >= 0 && fields->at(4) <= LastTopology))
                      && fields->at(1) <= 0xffffffffLL && fields->at(2) >= 0 && fields->at(2) <= MaxMessageBytes
                      && (itemSize(*type) == 0 || fields->at(1) * itemSize(*type) == fields->at(2));
    if (!sane) {
        fail({ErrorCode::ProtocolViolation,
              describe(QStringLiteral("rank %1 sent a malformed stream header").arg(m_parent))});
        return;
    }
    m_haveMeta = true;
    m_streamed = true;
    m_streamedIn = true;
    m_itemType = *type;
    m_count = quint32(fields->at(1));
    m_order = n >= 4 && fields->at(3) == 1 ? QSysInfo::LittleEndian : QSysInfo::BigEndian;
    if (n == 5)
        m_plannedTopology = BcastTopology(fields->at(4));
    m_totalBytes = fields->at(2);
    // A message up to the bound is assembled in a buffer of the pool, mapped
    // already (a new one page-faulted on every page as the segments came, a
    // millisecond for 4 MiB); memory beyond it follows what arrives, not
    // what was announced.
    if (m_totalBytes <= AssembledUpFront)
        m_assembly = BufferPool::take(qsizetype(m_totalBytes));
    else
        m_assembly.reserve(qsizetype(AssembledUpFront));
}

void BcastOp::addPiece(const QByteArray &piece)
{
    m_pieces.append(piece);
    if (m_totalBytes <= AssembledUpFront)
        std::memcpy(m_assembly.data() + m_received, piece.constData(), size_t(piece.size()));
    else
        m_assembly.append(piece);
    m_received += piece.size();
}

void BcastOp::planForwarding()
{
    m_planned = true;
    const int vrank = vrankOf(rank());
    QList<int> peers;
    peers.reserve(m_rangeLength - 1);
    for (int v = vrank + 1; v < vrank + m_rangeLength; ++v)
        peers.append(m_setup.group.at(rankOf(v)));
    // A stream keeps the topology its tree was planned with: the plan that
    // chose it assumed every node applies it to its range, and a node that
    // decided again from estimates of its own would build another tree
    // (one forwarding node without a rate yet turned a pipe into serial).
    const BcastTopology forced = m_plannedTopology != BcastTopology::Auto
                                     ? m_plannedTopology
                                     : forcedAlgorithm(m_options.topology, m_setup.router->forcedAlgorithms().bcast);
    // A range of one sends nothing: no link model to ask for.
    const BcastPlan plan = peers.isEmpty() ? decideBcast(m_rangeLength, m_totalBytes, {}, forced)
                                           : m_setup.router->bcastPlan(m_rangeLength, m_totalBytes, forced, peers);
    const QList<Delegation> delegations = bcastDelegations(plan.topology, m_rangeLength, plan);
    m_plannedTopology = plan.topology;
    m_result->plan = plan;
    m_setup.router->setLastBcastPlan(plan);
    qCDebug(lcComm).noquote() << "bcast of" << m_totalBytes << "bytes to a range of" << m_rangeLength << ":"
                              << bcastTopologyName(plan.topology) << "segments" << plan.segmentBytes
                              << "predicted" << qRound(plan.predictedUs / 1000) << "ms";
    for (const Delegation &d : std::as_const(delegations))
        m_children.append({rankOf(vrank + d.offset), d.length});
    if (!m_streamed) {
        // A whole message: slices of it if the plan streams, without copying
        // (m_whole outlives every send, which holds this op).
        if (plan.segmentBytes > 0 && plan.segmentBytes < m_totalBytes) {
            m_streamed = true;
            for (qint64 at = 0; at < m_totalBytes; at += plan.segmentBytes)
                m_pieces.append(QByteArray::fromRawData(m_whole.constData() + at,
                                                        qsizetype(qMin(plan.segmentBytes, m_totalBytes - at))));
        } else {
            m_pieces.append(m_whole);
        }
    }
}

void BcastOp::pushSends()
{
    while (m_current < m_children.size()) {
        queueTo(int(m_current));
        if (!m_children.at(m_current).done)
            return;
        ++m_current;
    }
}

void BcastOp::queueTo(int index)
{
    Child &child = m_children[index];
    const int argument = child.length - 1;
    if (m_streamed && !child.headerSent) {
        child.headerSent = true;
        ++child.inFlight;
        send(child.rank, streamHeader(m_itemType, m_count, m_totalBytes, m_order, m_plannedTopology), argument,
             CollectiveFrameKind::StreamHeader, treeRoot(), index, World::Completion::Departed);
    }
    for (; child.nextPiece < m_pieces.size(); ++child.nextPiece) {
        const QByteArray &piece = m_pieces.at(child.nextPiece);
        const Payload payload = m_streamed ? Payload{ItemType::UnsignedByte, quint32(piece.size()), piece}
                                           : Payload{m_itemType, m_count, piece, m_order};
        ++child.inFlight;
        send(child.rank, payload, argument, CollectiveFrameKind::Data, treeRoot(), index,
             World::Completion::Departed);
    }
    if (child.inFlight == 0 && allPiecesIn() && child.nextPiece == m_pieces.size())
        child.done = true;
}

void BcastOp::handleSent(int token)
{
    Child &child = m_children[token];
    if (--child.inFlight == 0 && allPiecesIn() && child.nextPiece == m_pieces.size())
        child.done = true;
    pushSends();
    maybeFinish();
}

void BcastOp::maybeFinish()
{
    if (isOver() || !allPiecesIn() || !m_planned)
        return;
    for (const Child &c : std::as_const(m_children))
        if (!c.done)
            return;
    Payload result{m_itemType, m_count, m_streamedIn ? m_assembly : m_whole, m_order};
    if (auto valid = validatePayload(result.itemType, result.count, result.bytes); !valid) {
        fail({ErrorCode::ProtocolViolation, describe(QStringLiteral("the message does not hold what it announced: %1")
                                                         .arg(valid.error().message))});
        return;
    }
    // Segments received are copied into the assembly by now: their buffers
    // go back to the pool unless a send still holds them.
    if (m_streamedIn)
        for (QByteArray &piece : m_pieces)
            BufferPool::recycle(std::move(piece));
    m_pieces.clear();
    m_result->payload = std::move(result);
    if (m_deferredError)
        fail(*m_deferredError, false);
    else
        succeed();
}

bool BcastOp::waitsOn(int r) const
{
    return m_parent >= 0 && r == m_parent && !allPiecesIn();
}

bool BcastOp::waitsOnAnyone() const
{
    return !isRoot() && m_parent < 0;
}

} // namespace mmpi::detail
