#include <mmpi/mmpe/parallelcanvas.h>

#include "mmpelogging.h"

#include <QCoroSignal>
#include <QScopeGuard>

#include <algorithm>
#include <utility>

namespace mmpi {

namespace {

// One frame of the stream cut to a viewport, numbered as the whole frame.
// nullopt only if the encoder refuses a command the whole frame carried,
// which cannot happen (the cut is a part of it); the caller then sends the
// whole frame, which draws the same tile.
std::optional<QByteArray> cutFrame(const CanvasViewport &viewport, const QList<CanvasCommand> &commands,
                                   const CanvasEncoder &before)
{
    CanvasState state = before.sentState();
    CanvasEncoder encoder = before;
    for (const CanvasCommand &c : viewport.filter(commands, state)) {
        if (auto ok = encoder.append(c); !ok) {
            qCWarning(lcMmpe).noquote() << "parallel canvas: cannot cut a frame to a viewport:"
                                        << ok.error().toString();
            return std::nullopt;
        }
    }
    return encoder.endFrame();
}

} // namespace

ParallelCanvas::ParallelCanvas(const Communicator &comm, Mode mode, int root, QSize logicalSize, QObject *parent)
    : ParallelCanvas(comm, mode, root, CanvasScene(logicalSize), false, parent)
{
}

ParallelCanvas::ParallelCanvas(const Communicator &comm, Mode mode, int root, const CanvasScene &picture,
                               QObject *parent)
    : ParallelCanvas(comm, mode, root, picture, true, parent)
{
}

ParallelCanvas::ParallelCanvas(const Communicator &comm, Mode mode, int root, const CanvasScene &picture,
                               bool carriedOn, QObject *parent)
    : QObject(parent), m_comm(comm), m_mode(mode), m_root(root), m_scene(picture), m_adoptReplay(carriedOn)
{
    // The members' pictures end in the scene's state once they have its
    // replay, so the stream goes on from there.
    m_relay.setFrameNumber(m_scene.currentFrame().value_or(0) + 1);
    m_relay.assumeState(m_scene.state());
    if (root < 0 || root >= comm.size())
        qCWarning(lcMmpe) << "ParallelCanvas: root" << root << "is not a rank of a communicator of" << comm.size();
    m_inbox = std::make_unique<MessageListener>(m_comm, this, QStringLiteral("parallel canvas"),
                                                [this](const Status &status, const Request &request) {
        if (const auto bytes = request.value<QByteArray>(); bytes)
            handle(status.source, status.tag, *bytes);
        else
            refuse(status.source, bytes.error());
    });
    if (m_mode == Mode::Broadcast && !isRoot())
        requestReplay();
}

ParallelCanvas::~ParallelCanvas() = default;

// ---------------------------------------------------------------- drawing

Result<void> ParallelCanvas::append(const CanvasCommand &command)
{
    return m_encoder.append(command);
}

Result<void> ParallelCanvas::setPen(const CanvasState::Pen &pen) { return append(CanvasCommand::setPen(pen)); }
Result<void> ParallelCanvas::setBrush(const CanvasState::Brush &brush) { return append(CanvasCommand::setBrush(brush)); }
Result<void> ParallelCanvas::setFont(const CanvasState::Font &font) { return append(CanvasCommand::setFont(font)); }
Result<void> ParallelCanvas::drawLine(QPoint from, QPoint to) { return append(CanvasCommand::line(from, to)); }
Result<void> ParallelCanvas::drawPolyline(const QList<QPoint> &points) { return append(CanvasCommand::polyline(points)); }
Result<void> ParallelCanvas::drawRect(const QRect &rect) { return append(CanvasCommand::outlineRect(rect)); }
Result<void> ParallelCanvas::fillRect(const QRect &rect) { return append(CanvasCommand::filledRect(rect)); }
Result<void> ParallelCanvas::drawEllipse(const QRect &bounds) { return append(CanvasCommand::ellipse(bounds)); }
Result<void> ParallelCanvas::drawPolygon(const QList<QPoint> &points) { return append(CanvasCommand::polygon(points)); }
Result<void> ParallelCanvas::drawText(QPoint baseline, const QString &text) { return append(CanvasCommand::textAt(baseline, text)); }
Result<void> ParallelCanvas::drawImage(QPoint topLeft, const QImage &image) { return append(CanvasCommand::imageAt(topLeft, image)); }
Result<void> ParallelCanvas::clear(QRgb color) { return append(CanvasCommand::clear(color)); }

Result<void> ParallelCanvas::endFrame()
{
    const QByteArray bytes = m_encoder.endFrame();
    ++m_submitted;
    if (isRoot()) {
        acceptSubmission(m_root, bytes);
        return success();
    }
    if (auto sent = m_comm.isend(m_root, SubmitTag, bytes).test(); sent && !sent->hasValue())
        return sent->error();
    return success();
}

QImage ParallelCanvas::image(QSize size) const
{
    return m_scene.toImage(size);
}

QImage ParallelCanvas::viewportImage(QSize size) const
{
    if (m_viewport.isWhole())
        return m_scene.toImage(size);
    return m_scene.toImage(m_viewport.area(), size);
}

Result<void> ParallelCanvas::setViewport(const QRect &area)
{
    if (auto ok = CanvasViewport::validate(area); !ok)
        return ok;
    m_viewport = CanvasViewport(area);
    if (isRoot())
        return success();
    if (auto sent = m_comm.isend(m_root, ViewportTag, m_viewport.encode()).test(); sent && !sent->hasValue())
        return sent->error();
    return success();
}

void ParallelCanvas::requestReplay()
{
    if (isRoot())
        return;
    m_comm.isend(m_root, ReplayRequestTag, QByteArray());
}

// ---------------------------------------------------------------- receiving

void ParallelCanvas::refuse(int source, const Error &reason)
{
    qCWarning(lcMmpe).noquote() << "parallel canvas on rank" << m_comm.rank() << "refuses a message from rank"
                                << source << ":" << reason.toString();
    Q_EMIT messageRefused(source, reason);
}

void ParallelCanvas::handle(int source, int tag, const QByteArray &bytes)
{
    const bool fromRoot = source == m_root;
    if (isRoot() && tag == SubmitTag) {
        acceptSubmission(source, bytes);
    } else if (isRoot() && tag == ReplayRequestTag) {
        sendReplay(source);
    } else if (isRoot() && tag == ViewportTag && source != m_root) {
        acceptViewport(source, bytes);
    } else if (!isRoot() && fromRoot && tag == FrameTag && m_mode == Mode::Broadcast) {
        if (applyFrame(bytes))
            m_bytesReceived += quint64(bytes.size());
    } else if (!isRoot() && fromRoot && tag == ReplayTag) {
        receiveReplay(source, bytes);
    } else {
        refuse(source, Error(ErrorCode::ProtocolViolation,
                             QStringLiteral("tag %1 from rank %2 is not for this member").arg(tag).arg(source)));
    }
}

void ParallelCanvas::receiveReplay(int source, const QByteArray &bytes)
{
    if (!m_replaying) {
        m_replaying.emplace(m_scene.logicalSize());
        m_replayFailed = false;
    }
    if (!bytes.isEmpty()) {
        if (m_replayFailed)
            return;
        auto batch = m_decoder.decode(bytes);
        Result<void> ok = batch ? m_replaying->appendBatch(*batch) : Result<void>(batch.error());
        if (!ok) {
            m_replayFailed = true;
            refuse(source, ok.error());
            return;
        }
        m_bytesReceived += quint64(bytes.size());
        m_commandsReceived += quint64(batch->commands.size());
        return;
    }
    // The end of the replay: it replaces the scene, unless it is older
    // than what this member already has (it never is: the root answers
    // in the order of its frames) or was damaged.
    CanvasScene replay = std::move(*m_replaying);
    m_replaying.reset();
    if (m_replayFailed)
        return;
    const quint32 frame = replay.currentFrame().value_or(0);
    if (std::exchange(m_adoptReplay, false)) {
        // Carried on: the new root's picture, even if this member had got
        // further from the old root (the root's frames follow its replay).
    } else if (m_scene.currentFrame() && replay.currentFrame() && *m_scene.currentFrame() > frame) {
        return;
    } else if (!replay.currentFrame() && m_scene.currentFrame()) {
        return; // the root has nothing yet (or never drew since a restart): keep ours
    }
    m_scene = std::move(replay);
    Q_EMIT replayed(frame);
}

// Root: from now on the member gets the part of the stream its viewport
// needs. What it has may lack primitives of its new area, so in Broadcast
// mode it gets a replay cut to the area at once (on the same ordered link
// as the frames, so nothing is lost or applied twice).
void ParallelCanvas::acceptViewport(int source, const QByteArray &bytes)
{
    auto viewport = CanvasViewport::decode(bytes);
    if (!viewport) {
        refuse(source, viewport.error());
        return;
    }
    if (viewport->isWhole())
        m_viewports.remove(source);
    else
        m_viewports.insert(source, *viewport);
    Q_EMIT viewportAnnounced(source, viewport->area());
    if (m_mode == Mode::Broadcast)
        sendReplay(source);
}

// Root: one member's frame, made part of the numbered stream. The member's
// encoder left out state it had sent in its earlier frames, but other
// members' frames may have come in between, so the frame is re-encoded after
// that member's pen, brush and font (the relay encoder drops what is already
// in effect on the stream).
void ParallelCanvas::acceptSubmission(int source, const QByteArray &bytes)
{
    ++m_received[source];
    const auto cleanup = qScopeGuard([this, source] { Q_EMIT submissionArrived(source); });
    auto batch = m_decoder.decode(bytes);
    if (!batch) {
        refuse(source, batch.error());
        return;
    }
    CanvasState state = m_senderState.value(source);
    CanvasEncoder attempt = m_relay;
    Result<void> ok;
    for (const CanvasCommand &c : {CanvasCommand::setPen(state.pen), CanvasCommand::setBrush(state.brush),
                                   CanvasCommand::setFont(state.font)})
        if (ok = attempt.append(c); !ok)
            break;
    // The whole frame as the stream has it: the sender's state, then its
    // commands (the viewports' filters start from the stream's state).
    QList<CanvasCommand> commands{CanvasCommand::setPen(state.pen), CanvasCommand::setBrush(state.brush),
                                  CanvasCommand::setFont(state.font)};
    for (const CanvasCommand &c : std::as_const(batch->commands)) {
        if (!ok || c.opcode == CanvasOpcode::EndFrame)
            break;
        if (c.opcode == CanvasOpcode::SetPen)
            state.pen = c.pen;
        else if (c.opcode == CanvasOpcode::SetBrush)
            state.brush = c.brush;
        else if (c.opcode == CanvasOpcode::SetFont)
            state.font = c.font;
        ok = attempt.append(c);
        commands.append(c);
    }
    if (!ok) {
        refuse(source, ok.error());
        return;
    }
    const QByteArray frame = attempt.endFrame();
    const CanvasEncoder before = std::exchange(m_relay, attempt);
    m_senderState.insert(source, state);
    if (m_mode == Mode::Broadcast)
        relay(frame, commands, before);
    applyFrame(frame);
}

// Root: the frame to every other member, cut to its viewport if it has one.
// Every member's state equals the stream's between frames (a cut frame ends
// with the state changes it skipped), so each cut frame is encoded by a copy
// of the stream's encoder as it was before this frame, with the same number.
void ParallelCanvas::relay(const QByteArray &frame, const QList<CanvasCommand> &commands,
                           const CanvasEncoder &before)
{
    QList<std::pair<CanvasViewport, QByteArray>> cut; // members with the same viewport share
    for (int r = 0; r < m_comm.size(); ++r) {
        if (r == m_root)
            continue;
        if (!admitFrame(r))
            continue;
        const CanvasViewport viewport = m_viewports.value(r);
        if (viewport.isWhole()) {
            sendToMember(r, FrameTag, frame);
            continue;
        }
        auto known = std::find_if(cut.cbegin(), cut.cend(), [&](const auto &c) { return c.first == viewport; });
        if (known == cut.cend()) {
            cut.append({viewport, cutFrame(viewport, commands, before).value_or(frame)});
            known = std::prev(cut.cend());
        }
        sendToMember(r, FrameTag, known->second);
    }
}

void ParallelCanvas::sendToMember(int member, int tag, const QByteArray &bytes)
{
    m_backlog[member].bytes += bytes.size();
    m_comm.isend(member, tag, bytes).onFinished(this, [this, member, n = qint64(bytes.size())] {
        drained(member, n);
    });
}

bool ParallelCanvas::admitFrame(int member)
{
    Backlog &backlog = m_backlog[member];
    if (!backlog.lagging && backlog.bytes > m_maxBacklog) {
        backlog.lagging = true;
        qCInfo(lcMmpe) << "parallel canvas: rank" << member << "is behind by" << backlog.bytes
                       << "bytes; skipping its frames until it has the latest picture";
        Q_EMIT memberLaggingChanged(member, true);
    }
    if (!backlog.lagging)
        return true;
    backlog.missed = true;
    ++m_framesSkipped;
    return false;
}

// Frames resume only once the replay is out: sent after it on the same link,
// they cannot reach the member before it.
void ParallelCanvas::drained(int member, qint64 bytes)
{
    Backlog &backlog = m_backlog[member];
    backlog.bytes -= bytes;
    if (backlog.bytes > 0 || !backlog.lagging)
        return;
    if (std::exchange(backlog.missed, false)) {
        sendReplay(member);
        return;
    }
    backlog.lagging = false;
    qCInfo(lcMmpe) << "parallel canvas: rank" << member << "caught up";
    Q_EMIT memberLaggingChanged(member, false);
}

bool ParallelCanvas::applyFrame(const QByteArray &bytes)
{
    auto batch = m_decoder.decode(bytes);
    if (!batch) {
        refuse(m_root, batch.error());
        return false;
    }
    // Frames the replay already holds are skipped.
    if (m_scene.currentFrame() && batch->frame <= *m_scene.currentFrame())
        return false;
    if (auto ok = m_scene.appendBatch(*batch); !ok) {
        refuse(m_root, ok.error());
        return false;
    }
    if (!isRoot())
        m_commandsReceived += quint64(batch->commands.size());
    Q_EMIT frameReady(batch->frame);
    // What precedes a clear is never drawn nor replayed: memory stays bounded
    // by what is on screen however long the canvas runs. After the signal, so
    // its handlers still see the frame as it arrived.
    m_scene.discardBeforeLastClear();
    return true;
}

void ParallelCanvas::sendReplay(int member)
{
    CanvasEncoder encoder; // a fresh receiver starts from the defaults
    const CanvasViewport viewport = m_viewports.value(member);
    CanvasState state;
    for (CanvasBatch batch : m_scene.replay()) {
        if (!viewport.isWhole()) {
            batch.commands = viewport.filter(batch.commands, state);
            batch.commands.append(CanvasCommand::endFrame());
        }
        auto bytes = encoder.encode(batch);
        if (!bytes) {
            qCWarning(lcMmpe).noquote() << "parallel canvas: cannot encode the replay:" << bytes.error().toString();
            break;
        }
        sendToMember(member, ReplayTag, *bytes);
    }
    sendToMember(member, ReplayTag, QByteArray());
}

// ---------------------------------------------------------------- barrier

QCoro::Task<ParallelCanvas::Flip> ParallelCanvas::flipTogether()
{
    const Communicator comm = m_comm;
    const int root = m_root;
    // 1. The root learns how many frames each member has ended, and waits
    //    until all of them have arrived (point-to-point from one member
    //    arrives in order, but not in step with the collective).
    auto counts = co_await comm.gather(m_submitted, root);
    if (!counts)
        co_return Flip{0, counts.error()};
    quint32 frame = 0;
    if (comm.rank() == root) {
        auto missing = [&] {
            for (int r = 0; r < counts->size(); ++r)
                if (m_received.value(r) < counts->at(r))
                    return true;
            return false;
        };
        while (missing())
            co_await qCoro(this, &ParallelCanvas::submissionArrived);
        frame = m_scene.currentFrame().value_or(0);
    }
    // 2. Everyone learns the frame number, and waits until it is applied here.
    auto flip = co_await comm.bcast(frame, root);
    if (!flip)
        co_return Flip{0, flip.error()};
    frame = *flip;
    if (m_mode == Mode::Broadcast)
        while (frame > 0 && m_scene.currentFrame().value_or(0) < frame)
            co_await qCoro(this, &ParallelCanvas::frameReady);
    co_return Flip{frame, {}};
}

} // namespace mmpi
