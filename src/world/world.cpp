#include <mmpi/world/world.h>

#include "engine.h"
#include "worldprivate.h"

#include <mmpi/core/logging.h>
#include <mmpi/wire/bufferpool.h>

#include <QEventLoop>
#include <QTimer>
#include <QMutex>
#include <QThread>
#include <QUuid>

#include <atomic>

namespace mmpi {

namespace {

// A message up to this size goes to the link from the sending thread, in
// fragments but at once: handing it to the progress thread would cost two
// thread wake-ups (to start writing, and to report it written), a tenth of a
// 1 MiB transfer. Larger ones go through the engine, so that other frames to
// the same peer never wait behind more than this many bytes.
constexpr qsizetype DirectBulkLimit = 1024 * 1024;

} // namespace

MessageSink::~MessageSink() = default;

void MessageSink::takeFrame(Frame &&frame)
{
    handleFrame(frame);
}

void MessageSink::handlePeerRejoined(int) {}

bool MessageSink::acceptsFromAnyThread(const FrameHeader &) const
{
    return false;
}

char *MessageSink::placeFor(const FrameHeader &, qint64)
{
    return nullptr;
}

void MessageSink::handleMessageAbandoned(int, const Error &) {}

void MessageSink::handlePlacedProgress(int, qint64) {}

World::World(QObject *parent) : QObject(parent), d(std::make_unique<WorldPrivate>())
{
    d->thread.setObjectName(QStringLiteral("mmpi-progress"));
}

World::~World()
{
    if (d->engine) {
        detail::Engine *engine = d->engine;
        // The engine and its sockets must die in the thread they live in.
        QMetaObject::invokeMethod(engine, [engine] {
            engine->shutdown();
            delete engine;
        }, Qt::BlockingQueuedConnection);
        d->engine = nullptr;
    }
    d->thread.quit();
    d->thread.wait();
}

void World::form(const WorldConfig &config)
{
    Error problem;
    if (d->state != State::Idle)
        problem = {ErrorCode::BadConfiguration, QStringLiteral("form() was already called on this world")};
    else if (auto valid = config.validate(); !valid)
        problem = valid.error();
    if (problem.isError()) {
        {
            QMutexLocker lock(&d->mutex);
            d->error = problem;
        }
        qCWarning(lcWorld).noquote() << "cannot form world:" << problem.toString();
        if (d->state == State::Idle) {
            d->state = State::Failed;
            Q_EMIT stateChanged(State::Failed);
        }
        Q_EMIT errorOccurred(problem);
        return;
    }

    d->chunkSize = config.effectiveChunkSize(0); // until the transport has chosen
    d->waitSpin = config.waitSpin;
    d->waitSpinMax = config.waitSpinMax;
    {
        QMutexLocker lock(&d->mutex);
        d->config = config;
    }
    auto *engine = new detail::Engine(config, d->nodeId);
    engine->setMessagePlacement([this](const FrameHeader &header, qint64 bytes) -> char * {
        auto sink = messageSink();
        return sink ? sink->placeFor(header, bytes) : nullptr;
    });
    engine->setPlacedProgress([this](int rank, qint64 bytes) {
        if (auto sink = messageSink())
            sink->handlePlacedProgress(rank, bytes);
    });
    engine->moveToThread(&d->thread);
    d->engine = engine;
    d->detector = engine->failureDetector();
    connect(engine, &detail::Engine::stateChanged, this, &World::handleEngineState);
    connect(engine, &detail::Engine::formationProgress, this, &World::formationProgress);
    connect(engine, &detail::Engine::discoveryProgress, this, &World::discoveryProgress);
    connect(engine, &detail::Engine::formed, this, [this, engine](int rank, const QList<NodeInfo> &nodes,
                                                                  bool replacement) {
        d->replacement = replacement;
        {
            QMutexLocker lock(&d->mutex);
            d->nodes = nodes;
            d->expectedLink = engine->expectedLink();
        }
        d->paths = engine->directPaths();
        d->chunkSize = engine->chunkSize();
        d->rank = rank;
        d->size = int(nodes.size());
        // State, rank and size are all in place before anyone hears of it.
        handleEngineState(State::Formed);
        Q_EMIT formed();
    });
    // Kept here, reported with the state: error() is set whenever state()
    // says Failed, and errorOccurred() follows stateChanged(Failed).
    connect(engine, &detail::Engine::failed, this, [this](const Error &error) {
        QMutexLocker lock(&d->mutex);
        d->error = error;
    });
    connect(engine, &detail::Engine::peerRefused, this, &World::peerRefused);
    connect(engine, &detail::Engine::spareNotFound, this, &World::spareNotFound);
    // Queued to this thread, in the order the engine emitted them.
    connect(engine, &detail::Engine::nodeSuspect, this, &World::nodeSuspect);
    connect(engine, &detail::Engine::nodeAlive, this, &World::nodeAlive);
    connect(engine, &detail::Engine::nodeUnreachable, this, &World::nodeUnreachable);
    connect(engine, &detail::Engine::nodeReturned, this, &World::nodeReturned);
    connect(engine, &detail::Engine::linkQualityChanged, this, &World::linkQualityChanged);
    connectEngineTraffic(engine);
    d->state = State::Forming;
    d->thread.start();
    QMetaObject::invokeMethod(engine, &detail::Engine::start, Qt::QueuedConnection);
}

// Direct connections: these run on the progress thread, so the sink hears of
// frames and departures even while this object's thread is blocked.
void World::connectEngineTraffic(detail::Engine *engine)
{
    connect(engine, &detail::Engine::frameReceived, this, [this](Frame &frame) {
        if (auto sink = messageSink())
            return sink->takeFrame(std::move(frame));
        QMetaObject::invokeMethod(this, [this, frame] { Q_EMIT frameReceived(frame); }, Qt::QueuedConnection);
    }, Qt::DirectConnection);
    connect(engine, &detail::Engine::messageAbandoned, this, [this](int rank, const Error &reason) {
        if (auto sink = messageSink())
            sink->handleMessageAbandoned(rank, reason);
    }, Qt::DirectConnection);
    connect(engine, &detail::Engine::nodeLeft, this, [this](int rank) {
        if (auto sink = messageSink())
            sink->handlePeerGone(rank, {ErrorCode::PeerLeft, QStringLiteral("rank %1 left the world").arg(rank)});
        QMetaObject::invokeMethod(this, [this, rank] { Q_EMIT nodeLeft(rank); }, Qt::QueuedConnection);
    }, Qt::DirectConnection);
    connect(engine, &detail::Engine::nodeRejoined, this, [this](int rank, const NodeInfo &info) {
        {
            QMutexLocker lock(&d->mutex);
            if (rank >= 0 && rank < d->nodes.size())
                d->nodes[rank] = info;
        }
        if (auto sink = messageSink())
            sink->handlePeerRejoined(rank);
        QMetaObject::invokeMethod(this, [this, rank] { Q_EMIT nodeRejoined(rank); }, Qt::QueuedConnection);
    }, Qt::DirectConnection);
    connect(engine, &detail::Engine::nodeLost, this, [this](int rank, FailureClass failureClass, const Error &reason) {
        if (auto sink = messageSink())
            sink->handlePeerGone(rank, reason);
        QMetaObject::invokeMethod(this, [this, rank, failureClass, reason] {
            Q_EMIT nodeLost(rank, failureClass, reason);
        }, Qt::QueuedConnection);
    }, Qt::DirectConnection);
}

std::optional<World::StreamPosition> World::streamPosition(int rank) const
{
    const auto found = d->pathsFrom(rank);
    if (rank < 0 || found.isEmpty())
        return std::nullopt;
    return StreamPosition{found.front().second->sent(), found.front().second->received()};
}

void World::setMessageSink(std::shared_ptr<MessageSink> sink)
{
    QMutexLocker lock(&d->mutex);
    d->sink = std::move(sink);
}

std::shared_ptr<MessageSink> World::messageSink() const
{
    return d->currentSink();
}

std::shared_ptr<MessageSink> WorldPrivate::currentSink() const
{
    QMutexLocker lock(&mutex);
    return sink;
}

WorldPrivate::PathList WorldPrivate::pathsFrom(int source) const
{
    PathList found;
    if (state != World::State::Formed)
        return found;
    for (int r = 0; r < paths.size(); ++r)
        if ((source < 0 || source == r) && paths[r])
            found.append({r, paths[r]});
    return found;
}

std::shared_ptr<MessageSink> WorldPrivate::sinkTakingHere(int from, const detail::DirectPath &path,
                                                          const FrameHeader &h) const
{
    if (h.kind != FrameKind::Data || path.readBacklog() != 0 || h.source != from || h.destination != rank)
        return nullptr;
    auto target = currentSink();
    return target && target->acceptsFromAnyThread(h) ? target : nullptr;
}

// A fragment's header names its message as the Data frame would.
FrameHeader WorldPrivate::messageHeader(const FrameHeader &h)
{
    FrameHeader message = h;
    if (message.kind == FrameKind::Fragment)
        message.kind = FrameKind::Data;
    return message;
}

char *WorldPrivate::placeRead(int from, detail::DirectPath &path, const FrameHeader &h)
{
    const auto target = sinkTakingHere(from, path, messageHeader(h));
    if (!target)
        return nullptr;
    if (h.kind == FrameKind::Fragment)
        return path.placeNextFragment(h, placementOf(*target));
    return target->placeFor(h, qint64(h.payloadLength));
}

// Captures one pointer: no allocation per fragment.
detail::MessagePlacement WorldPrivate::placementOf(MessageSink &sink)
{
    return [s = &sink](const FrameHeader &h, qint64 bytes) { return s->placeFor(h, bytes); };
}

// A fragment the sink takes here goes into the path's message in progress,
// which the progress thread may have begun or may finish: no hand-off for a
// large message, however its fragments fall between the two threads.
bool WorldPrivate::assembleRead(int from, detail::DirectPath &path, MessageSink &sink, const Frame &fragment)
{
    detail::Engine *progress = engine;
    bool placed = false;
    auto assembly = path.addFragment(fragment, placementOf(sink), placed);
    if (!assembly) {
        if (placed)
            sink.handleMessageAbandoned(from, assembly.error());
        QMetaObject::invokeMethod(progress, [progress, from, e = assembly.error()] { progress->closeLink(from, e); },
                                  Qt::QueuedConnection);
        return false;
    }
    progress->noteHeard(from);
    if (assembly->message)
        sink.takeFrame(std::move(*assembly->message));
    else if (assembly->placedBytes > 0)
        sink.handlePlacedProgress(from, assembly->placedBytes);
    return true;
}

bool WorldPrivate::deliverRead(int from, const std::shared_ptr<detail::DirectPath> &path, Frame &&frame)
{
    detail::Engine *progress = engine;
    const FrameHeader &h = frame.header;
    bool ackDue = false;
    if (auto ok = path->accept(h, ackDue); !ok) {
        QMetaObject::invokeMethod(progress, [progress, from, e = ok.error()] { progress->closeLink(from, e); },
                                  Qt::QueuedConnection);
        return false;
    }
    if (ackDue && !path->trySendAck(rank.load()))
        QMetaObject::invokeMethod(progress, [progress, from] { progress->sendAck(from); }, Qt::QueuedConnection);
    // An ack is taken here too: handed over, it woke the progress thread on
    // this CPU and sent the peer's next frames that way until it had run.
    if (h.kind == FrameKind::Ack && path->readBacklog() == 0 && path->tryAcknowledge(frame)) {
        progress->noteHeard(from);
        return true;
    }
    if (const auto target = sinkTakingHere(from, *path, messageHeader(h))) {
        if (h.kind == FrameKind::Fragment)
            return assembleRead(from, *path, *target, frame);
        progress->noteHeard(from);
        target->takeFrame(std::move(frame));
        return true;
    }
    // Everything else (control, heartbeats, frames the sink takes only on
    // the progress thread) goes through the engine as if its link had
    // delivered it, and holds back the peer's later frames until it has.
    path->deferRead();
    QMetaObject::invokeMethod(progress, [progress, from, path, f = std::move(frame)] {
        progress->handleFrameReadElsewhere(from, f);
        path->deferredReadHandled();
    }, Qt::QueuedConnection);
    return false;
}

void World::close()
{
    if (!d->engine) {
        if (d->state != State::Closed) {
            d->state = State::Closed;
            Q_EMIT stateChanged(State::Closed);
        }
        return;
    }
    QMetaObject::invokeMethod(d->engine, &detail::Engine::close, Qt::QueuedConnection);
}

void World::handleEngineState(State state)
{
    if (d->state.exchange(state) == state)
        return;
    // The large buffers kept for this world's messages go back to the system.
    if (state == State::Closed || state == State::Failed)
        BufferPool::clear();
    Q_EMIT stateChanged(state);
    if (state == State::Failed)
        Q_EMIT errorOccurred(error());
}

World::State World::state() const { return d->state; }
int World::rank() const { return d->rank; }
int World::size() const { return d->size; }
QString World::nodeId() const { return d->nodeId; }

Error World::error() const
{
    QMutexLocker lock(&d->mutex);
    return d->error;
}

QString World::errorString() const
{
    return error().message;
}

QList<NodeInfo> World::nodes() const
{
    QMutexLocker lock(&d->mutex);
    return d->nodes;
}

Result<void> World::sendFrame(int destination, Frame frame, SendCompletion done)
{
    if (sendFrameNow(destination, frame)) {
        if (done)
            done({});
        return success();
    }
    return sendFrameLater(destination, std::move(frame), std::move(done));
}

Result<void> World::sendFrameLater(int destination, Frame frame, SendCompletion done)
{
    if (d->state != State::Formed)
        return Error{ErrorCode::NotFormed, QStringLiteral("cannot send: the world is not formed")};
    const int size = d->size;
    if (destination < 0 || destination >= size)
        return Error{ErrorCode::InvalidRank,
                     QStringLiteral("rank %1 is not in this world of %2").arg(destination).arg(size)};
    const auto path = destination == d->rank ? nullptr : d->paths.value(destination);
    if (path && isBorrowed(frame.payload) && sendHeadNow(destination, path, frame, done))
        return success();
    // Queued past this call: a view of the caller's items becomes a copy,
    // unless its owner keeps them.
    if (!frame.owner)
        frame.payload = BufferPool::owned(std::move(frame.payload));
    if (!path)
        return queueFrame(destination, std::move(frame), std::move(done));
    // Counted until the engine has put it on the link, so that no later
    // frame takes the direct path past it.
    path->aboutToQueue();
    return queueFrame(destination, std::move(frame), handedOverThen(path, std::move(done)));
}

SendCompletion World::handedOverThen(const std::shared_ptr<detail::DirectPath> &path, SendCompletion done)
{
    return [path, done = std::move(done)](const Error &error) {
        path->handedOver();
        if (done)
            done(error);
    };
}

// A large message of the caller's own bytes: what the link takes at once
// leaves from the caller's memory, and only then is the message copied; the
// progress thread sends the rest from the copy. True if it went (whole or
// started).
bool World::sendHeadNow(int destination, const std::shared_ptr<detail::DirectPath> &path, Frame &frame,
                        SendCompletion &done)
{
    if (frame.header.kind != FrameKind::Data || frame.payload.size() <= d->chunkSize)
        return false;
    const FrameHeader before = frame.header;
    frame.header.source = d->rank;
    frame.header.destination = destination;
    detail::Engine *engine = d->engine;
    const auto queueRest = [&](Frame message, qint64 offset) {
        QMetaObject::invokeMethod(engine, [engine, destination, message = std::move(message), offset,
                                           then = handedOverThen(path, std::move(done))]() mutable {
            engine->sendRest(destination, std::move(message), offset, std::move(then));
        }, Qt::QueuedConnection);
    };
    switch (path->trySendHead(frame, d->chunkSize, queueRest)) {
    case detail::DirectPath::Head::NotSent:
        frame.header = before;
        return false;
    case detail::DirectPath::Head::Whole:
        if (done)
            done({});
        return true;
    case detail::DirectPath::Head::Started:
        return true;
    }
    return false;
}

bool World::sendFrameNow(int destination, Frame &frame)
{
    const bool bulk = frame.payload.size() > d->chunkSize;
    if (d->state != State::Formed || destination < 0 || destination >= d->size || destination == d->rank
        || (bulk && (frame.header.kind != FrameKind::Data || frame.payload.size() > DirectBulkLimit)))
        return false;
    const auto &path = d->paths.at(destination);
    if (!path)
        return false;
    const FrameHeader before = frame.header;
    frame.header.source = d->rank;
    frame.header.destination = destination;
    if (bulk ? path->trySendFragmented(frame, d->chunkSize) : path->trySend(frame))
        return true;
    frame.header = before;
    return false;
}

Result<void> World::queueFrame(int destination, Frame frame, SendCompletion done)
{
    detail::Engine *engine = d->engine;
    QMetaObject::invokeMethod(engine, [engine, destination, f = std::move(frame), done = std::move(done)]() mutable {
        engine->sendFrame(destination, std::move(f), std::move(done));
    }, Qt::QueuedConnection);
    return success();
}

// At once on the progress thread: a sink that pauses a link while it is
// delivering frames stops the delivery right after the current frame.
void World::setReceiving(int rank, bool enabled)
{
    detail::Engine *engine = d->engine;
    if (!engine)
        return;
    if (QThread::currentThread() == &d->thread)
        return engine->setReceiving(rank, enabled);
    QMetaObject::invokeMethod(engine, [engine, rank, enabled] { engine->setReceiving(rank, enabled); },
                              Qt::QueuedConnection);
}

bool World::isReplacement() const
{
    return d->replacement;
}

void World::inviteSpare(int rank)
{
    detail::Engine *engine = d->engine;
    if (!engine) {
        Q_EMIT spareNotFound(rank, {ErrorCode::NotFormed, QStringLiteral("no spare invited: the world is not formed")});
        return;
    }
    QMetaObject::invokeMethod(engine, [engine, rank] { engine->inviteSpare(rank); }, Qt::QueuedConnection);
}

Result<LinkQuality> World::linkQuality(int rank) const
{
    const int size = d->size;
    if (size == 0 || !d->detector)
        return Error{ErrorCode::NotFormed, QStringLiteral("no link quality: the world is not formed")};
    if (rank < 0 || rank >= size)
        return Error{ErrorCode::InvalidRank, QStringLiteral("rank %1 is not in this world of %2").arg(rank).arg(size)};
    if (rank == d->rank)
        return Error{ErrorCode::InvalidRank, QStringLiteral("rank %1 is this node, which has no link to itself").arg(rank)};
    const auto quality = d->detector->quality(rank, detail::FailureDetector::Clock::now());
    if (!quality)
        return Error{ErrorCode::InvalidRank, QStringLiteral("rank %1 has no link").arg(rank)};
    return *quality;
}

LinkMedium World::expectedLink() const
{
    QMutexLocker lock(&d->mutex);
    return d->expectedLink;
}

WorldConfig World::config() const
{
    QMutexLocker lock(&d->mutex);
    return d->config;
}

void World::closeAndWait()
{
    QEventLoop loop;
    connect(this, &World::stateChanged, &loop, [&](State state) {
        if (state == State::Closed)
            loop.quit();
    });
    // The engine closes by its own timeout; this bound only guards a bug.
    QTimer::singleShot(config().closeTimeout + std::chrono::seconds(5), &loop, &QEventLoop::quit);
    close();
    if (d->state != State::Closed)
        loop.exec();
}

Result<void> World::waitForFormed()
{
    const auto outcome = [this]() -> std::optional<Result<void>> {
        switch (d->state.load()) {
        case State::Formed:
            return success();
        case State::Idle:
            return Error{ErrorCode::NotFormed, QStringLiteral("form() has not been called")};
        case State::Forming:
            return std::nullopt;
        default:
            return error().isError() ? error()
                                     : Error{ErrorCode::NotFormed, QStringLiteral("the world is closed")};
        }
    };
    if (auto done = outcome())
        return *done;
    QEventLoop loop;
    connect(this, &World::stateChanged, &loop, [&](State state) {
        if (state != State::Forming)
            loop.quit();
    });
    loop.exec();
    return outcome().value_or(Error{ErrorCode::NotFormed, QStringLiteral("formation did not finish")});
}

} // namespace mmpi
