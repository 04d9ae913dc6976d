#include "collectiveop.h"

#include "errorrecord.h"
#include "router.h"

#include <mmpi/core/logging.h>
#include <mmpi/wire/bufferpool.h>
#include <mmpi/world/world.h>

namespace mmpi::detail {

namespace {

Error decodeAbort(const Frame &frame, int rank, const char *name)
{
    const auto record = decodeErrorRecord(frame);
    if (!record)
        return {ErrorCode::ProtocolViolation, QStringLiteral("rank %1 sent a malformed abort of %2").arg(rank).arg(QLatin1String(name))};
    return {record->error.code,
            QStringLiteral("rank %1 failed the %2: %3").arg(rank).arg(QLatin1String(name), record->error.message)};
}

} // namespace

CollectiveOp::CollectiveOp(CollectiveSetup setup)
    : m_setup(std::move(setup)),
      m_request(std::make_shared<RequestState>(RequestState::Kind::Receive, m_setup.context, AnySource, AnyTag))
{
}

CollectiveOp::~CollectiveOp() = default;

QString CollectiveOp::describe(const QString &what) const
{
    return QStringLiteral("%1 (rank %2 of %3): %4").arg(QLatin1String(m_setup.name)).arg(rank()).arg(size()).arg(what);
}

Payload CollectiveOp::keptPastCall(Payload contribution)
{
    Payload kept = inHostOrder(std::move(contribution));
    if (!isBorrowed(kept.bytes) || !kept.owner) {
        kept.bytes = BufferPool::owned(std::move(kept.bytes));
        kept.owner = nullptr;
    }
    return kept;
}

// Every entry point: the state changes under the mutex, then the queued
// frames go out and the request completes, both without it (a send's
// completion or a request's continuation may come straight back here).
template<typename F>
void CollectiveOp::locked(F &&f)
{
    const auto self = shared_from_this(); // a completion below may drop the last owner
    {
        QMutexLocker lock(&m_mutex);
        f();
        if (m_begun)
            checkGone();
    }
    settle();
}

void CollectiveOp::start()
{
    const auto departed = m_setup.router->collectives().attach(m_setup.context, m_setup.sequence, shared_from_this());
    locked([&] {
        m_begun = true;
        // Since the caller checked: an abandon() came before we began.
        if (auto why = m_setup.router->revoked(m_setup.context & ~CollectiveContextBit))
            fail(*why, false);
        else if (auto cut = m_setup.router->collectives().interrupted(m_setup.context, m_setup.sequence))
            fail(*cut);
        else if (m_poison)
            fail(*m_poison);
        else
            begin();
        processInbox();
        for (auto it = departed.begin(); it != departed.end(); ++it)
            noteGone(it.key(), it->reason, it->clean);
        const QList<Departure> before = std::exchange(m_departuresBeforeBegin, {});
        for (const Departure &d : before)
            noteGone(d.worldRank, d.reason, d.clean);
    });
}

void CollectiveOp::enqueue(Frame frame)
{
    QMutexLocker lock(&m_inboxMutex);
    m_inbox.push(std::move(frame));
}

void CollectiveOp::pump()
{
    locked([&] {
        if (m_begun)
            processInbox();
    });
}

char *CollectiveOp::placeFor(const FrameHeader &header, qint64 bytes, std::shared_ptr<void> &keep)
{
    const CollectiveTag tag = decodeCollectiveTag(header.tag);
    const int from = m_setup.group.indexOf(header.source);
    QMutexLocker lock(&m_mutex);
    if (!m_begun || isOver() || from < 0 || from == rank() || tag.kind != CollectiveFrameKind::Data)
        return nullptr;
    return place(from, header, tag, bytes, keep);
}

void CollectiveOp::placedProgress(qint64 bytes)
{
    locked([&] {
        if (m_begun && !isOver())
            handlePlaced(bytes);
    });
}

void CollectiveOp::processInbox()
{
    for (;;) {
        Frame frame;
        {
            QMutexLocker lock(&m_inboxMutex);
            if (m_inbox.isEmpty())
                return;
            frame = m_inbox.take();
        }
        if (!m_completed)
            handleFrame(frame);
    }
}

void CollectiveOp::handleFrame(Frame &frame)
{
    const int from = m_setup.group.indexOf(frame.header.source);
    if (from < 0 || from == rank()) {
        qCWarning(lcComm) << m_setup.name << "frame from world rank" << frame.header.source
                          << "which is not a member; dropped";
        return;
    }
    const CollectiveTag tag = decodeCollectiveTag(frame.header.tag);
    if (tag.kind == CollectiveFrameKind::Abort) {
        fail(decodeAbort(frame, from, m_setup.name), false);
        return;
    }
    if (isOver())
        return;
    if (tag.kind != CollectiveFrameKind::Data && tag.kind != CollectiveFrameKind::StreamHeader) {
        fail({ErrorCode::ProtocolViolation, describe(QStringLiteral("rank %1 sent a frame of unknown kind %2")
                                                         .arg(from).arg(int(tag.kind)))});
        return;
    }
    handleData(from, frame, tag);
}

void CollectiveOp::peerGone(int worldRank, const Error &reason, bool clean)
{
    locked([&] {
        if (!m_begun)
            m_departuresBeforeBegin.append({worldRank, reason, clean});
        else
            noteGone(worldRank, reason, clean);
    });
}

void CollectiveOp::abandon(const Error &reason, bool tellOthers)
{
    locked([&] {
        if (m_begun) // one not begun yet finds the revoke or the interrupt in start()
            fail(reason, tellOthers);
    });
}

void CollectiveOp::noteGone(int worldRank, const Error &reason, bool clean)
{
    const int r = m_setup.group.indexOf(worldRank);
    if (r < 0 || r == rank() || m_gone.contains(r))
        return;
    m_gone.insert(r);
    m_someoneLost = m_someoneLost || !clean;
    if (isOver())
        return;
    if (waitsOn(r) || (!clean && waitsOnAnyone()))
        fail({ErrorCode::NodeLost, describe(QStringLiteral("rank %1 is gone: %2").arg(r).arg(reason.message))});
}

// A rank the op starts waiting for may have gone before it did.
void CollectiveOp::checkGone()
{
    if (isOver() || m_gone.isEmpty())
        return;
    if (m_someoneLost && waitsOnAnyone())
        return fail({ErrorCode::NodeLost, describe(QStringLiteral("a rank was lost while this rank waited for the message"))});
    for (int r : std::as_const(m_gone))
        if (waitsOn(r))
            return fail({ErrorCode::NodeLost, describe(QStringLiteral("rank %1 is gone").arg(r))});
}

void CollectiveOp::send(int to, const Payload &payload, int argument, CollectiveFrameKind kind, int root, int token,
                        World::Completion when)
{
    Frame frame;
    frame.header.kind = FrameKind::Data;
    frame.header.communicator = m_setup.context;
    frame.header.tag = encodeCollectiveTag(m_setup.sequence, argument, kind);
    frame.header.root = root;
    frame.header.itemType = payload.itemType;
    frame.header.count = payload.count;
    frame.header.flags = frameFlagsOf(payload);
    frame.payload = payload.bytes;
    frame.owner = payload.owner;
    const bool counted = kind != CollectiveFrameKind::Abort;
    if (counted)
        ++m_sendsInFlight;
    m_outgoing.push({m_setup.group.at(to), std::move(frame), token, counted, when});
}

void CollectiveOp::succeed()
{
    if (!isOver())
        m_succeeded = true;
}

void CollectiveOp::fail(const Error &error, bool tellOthers)
{
    if (m_failed)
        return;
    m_failed = true;
    m_succeeded = false;
    m_error = error;
    qCDebug(lcComm).noquote() << "collective failed:" << error.toString();
    // Frames not handed to the world yet would only make others wait longer.
    m_outgoing.forEach([this](const Outgoing &o) {
        if (o.counted)
            --m_sendsInFlight;
    });
    m_outgoing.clear();
    if (!tellOthers)
        return;
    const Payload abort = encodeErrorRecord({error, {}});
    for (int r = 0; r < size(); ++r)
        if (r != rank() && !m_gone.contains(r))
            send(r, abort, 0, CollectiveFrameKind::Abort);
}

void CollectiveOp::sendFinished(int token, const Error &error)
{
    locked([&] {
        --m_sendsInFlight;
        if (isOver() && !m_succeeded)
            return;
        if (error.isError())
            fail({error.code, describe(error.message)});
        else if (token >= 0 && !m_succeeded)
            handleSent(token);
    });
}

void CollectiveOp::flush()
{
    QMutexLocker flushLock(&m_flushMutex);
    if (m_flushing) // a send that failed at once came back here: the loop below goes on
        return;
    m_flushing = true;
    const auto self = shared_from_this();
    for (;;) {
        Outgoing out;
        {
            QMutexLocker lock(&m_mutex);
            if (m_outgoing.isEmpty())
                break;
            out = m_outgoing.take();
        }
        SendCompletion done;
        if (out.counted)
            done = [self, token = out.token](const Error &e) { self->sendFinished(token, e); };
        if (auto sent = m_setup.world->sendFrame(out.worldRank, std::move(out.frame), done, out.when);
            !sent && out.counted)
            sendFinished(out.token, sent.error());
    }
    m_flushing = false;
}

void CollectiveOp::settle()
{
    flush();
    Result<Status> outcome = Status{};
    {
        QMutexLocker lock(&m_mutex);
        if (m_completed || !(m_failed || (m_succeeded && m_sendsInFlight == 0)))
            return;
        m_completed = true;
        if (m_failed) {
            outcome = m_error;
        } else {
            const Payload &p = m_result->payload;
            outcome = Status{rank(), AnyTag, p.itemType, p.count, p.bytes.size()};
        }
    }
    m_setup.router->collectives().detach(m_setup.context, m_setup.sequence);
    m_request->complete(outcome, m_result->payload);
}

} // namespace mmpi::detail
