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

#ifdef MMPI_QT_UNIX_DISPATCHER
#include <QtCore/private/qeventdispatcher_unix_p.h>
#endif

#include <atomic>

namespace mmpi {

namespace {

// Starts the thread that owns every link, on Qt's own poll() loop where Qt
// would give it GLib's: GLib signals its wake-up descriptor whenever a socket
// notifier is switched on or off, which a QAbstractSocket does twice for each
// buffered write, so every frame sent cost two more passes of the loop (a
// poll() and a read() each). 1-byte round trips over tcp, both nodes on one
// CPU: 45-47 us with GLib's loop, 40-42 us with Qt's (ZeroMQ: 41 us).
// Android, iOS and Windows have no GLib loop; the choice is Linux's.
void startProgressThread(QThread &thread)
{
#ifdef MMPI_QT_UNIX_DISPATCHER
    thread.setEventDispatcher(new QEventDispatcherUNIX);
#endif
    thread.start();
}

} // namespace

MessageSink::~MessageSink() = default;

void MessageSink::takeFrame(Frame &&frame)
{
    handleFrame(frame);
}

void MessageSink::handlePeerRejoined(int) {}

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
    d->sends = engine->sendQueue();
    d->detector = engine->failureDetector();
    connect(engine, &detail::Engine::stateChanged, this, &World::handleEngineState);
    connect(engine, &detail::Engine::formationProgress, this, &World::formationProgress);
    connect(engine, &detail::Engine::discoveryProgress, this, &World::discoveryProgress);
    connect(engine, &detail::Engine::discoveryStepStarted, this, &World::discoveryStepStarted);
    connect(engine, &detail::Engine::discoveryStepGaveUp, this, &World::discoveryStepGaveUp);
    connect(engine, &detail::Engine::formed, this, [this, engine](int rank, const QList<NodeInfo> &nodes,
                                                                  bool replacement) {
        d->replacement = replacement;
        {
            QMutexLocker lock(&d->mutex);
            d->nodes = nodes;
            d->expectedLink = engine->expectedLink();
        }
        d->streams = engine->streams();
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
    connectJoinRequests(engine);
    d->state = State::Forming;
    startProgressThread(d->thread);
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
    connect(engine, &detail::Engine::peerVerified, this, [this](int rank, const QString &code) {
        {
            QMutexLocker lock(&d->mutex);
            d->verificationCodes.insert(rank, code);
        }
        QMetaObject::invokeMethod(this, [this, rank] { Q_EMIT verificationCodeChanged(rank); }, Qt::QueuedConnection);
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

// Direct connections: the set of open requests changes before the app hears
// of the change, so an answer given in the signal's slot finds its request.
void World::connectJoinRequests(detail::Engine *engine)
{
    connect(engine, &detail::Engine::joinRequested, this,
            [this](int id, const QString &nodeId, const QString &address, const QString &code) {
        {
            QMutexLocker lock(&d->mutex);
            d->openJoinRequests.insert(id);
        }
        QMetaObject::invokeMethod(this, [=, this] { Q_EMIT joinRequested(id, nodeId, address, code); },
                                  Qt::QueuedConnection);
    }, Qt::DirectConnection);
    connect(engine, &detail::Engine::joinRequestEnded, this, [this](int id) {
        {
            QMutexLocker lock(&d->mutex);
            d->openJoinRequests.remove(id);
        }
        QMetaObject::invokeMethod(this, [this, id] { Q_EMIT joinRequestEnded(id); }, Qt::QueuedConnection);
    }, Qt::DirectConnection);
}

Result<void> World::confirmJoin(int requestId)
{
    return answerJoin(requestId, true);
}

Result<void> World::rejectJoin(int requestId)
{
    return answerJoin(requestId, false);
}

Result<void> World::answerJoin(int requestId, bool confirmed)
{
    {
        QMutexLocker lock(&d->mutex);
        if (!d->openJoinRequests.contains(requestId))
            return Error{ErrorCode::UnknownJoinRequest,
                         QStringLiteral("no join request %1 is waiting for an answer").arg(requestId)};
    }
    detail::Engine *engine = d->engine;
    QMetaObject::invokeMethod(engine, [engine, requestId, confirmed] { engine->answerJoin(requestId, confirmed); },
                              Qt::QueuedConnection);
    return success();
}

std::optional<World::StreamPosition> World::streamPosition(int rank) const
{
    if (d->state != State::Formed || rank < 0 || rank >= d->streams.size() || !d->streams[rank])
        return std::nullopt;
    const auto &stream = d->streams[rank];
    return StreamPosition{stream->sent(), stream->received()};
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

Result<void> World::sendFrame(int destination, Frame frame, SendCompletion done, Completion when)
{
    if (d->state != State::Formed)
        return Error{ErrorCode::NotFormed, QStringLiteral("cannot send: the world is not formed")};
    const int size = d->size;
    if (destination < 0 || destination >= size)
        return Error{ErrorCode::InvalidRank,
                     QStringLiteral("rank %1 is not in this world of %2").arg(destination).arg(size)};
    // Written later, by the progress thread: a view of the caller's items
    // becomes a copy, unless its owner keeps them.
    if (!frame.owner)
        frame.payload = BufferPool::owned(std::move(frame.payload));
    if (d->sends->post({destination, std::move(frame), std::move(done), when == Completion::Departed}))
        QMetaObject::invokeMethod(d->engine, &detail::Engine::sendPosted, Qt::QueuedConnection);
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

Result<QString> World::verificationCode(int rank) const
{
    QMutexLocker lock(&d->mutex);
    const auto code = d->verificationCodes.constFind(rank);
    if (code == d->verificationCodes.cend() || code->isEmpty())
        return Error{ErrorCode::InvalidRank, QStringLiteral("this node has had no link to rank %1").arg(rank)};
    return *code;
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
