#include "qmlworld.h"

#include "androidpermissions.h"
#include "nodelistmodel.h"
#include "qmllogging.h"
#include "qmlresult.h"

#include <QCoreApplication>
#include <QCoroQml>
#include <QCryptographicHash>
#include <QMetaEnum>
#include <QJsonArray>
#include <QJsonDocument>

#include <mutex>

namespace mmpi {

namespace {

void registerQmlTask()
{
    static std::once_flag once;
    std::call_once(once, [] { QCoro::Qml::registerTypes(); });
}

QList<int> allRanks(int size)
{
    QList<int> ranks;
    for (int r = 0; r < size; ++r)
        ranks << r;
    return ranks;
}

} // namespace

QmlWorld::QmlWorld(QObject *parent) : QObject(parent), m_nodes(new NodeListModel(this))
{
    registerQmlTask();
    m_settings.rank = NoRank;
    m_settings.size = 2;
    // Destroyed later with the QML engine, the world would only drop its
    // links, and every peer would report this node lost.
    if (const QCoreApplication *app = QCoreApplication::instance())
        connect(app, &QCoreApplication::aboutToQuit, this, &QmlWorld::leaveOnQuit);
}

QmlWorld::~QmlWorld()
{
    Q_EMIT detaching();
    // The channels' communicators refer to the world: drop them first.
    m_channels.clear();
    m_comm = Communicator();
}

// ---------------------------------------------------------------- settings

void QmlWorld::setMode(Mode mode) { if (m_mode != mode) { m_mode = mode; Q_EMIT settingsChanged(); } }
void QmlWorld::setTransport(const QString &t) { if (m_settings.transport != t) { m_settings.transport = t; Q_EMIT settingsChanged(); } }
void QmlWorld::setTransportOptions(const QVariantMap &o) { m_settings.transportOptions = o; Q_EMIT settingsChanged(); }
void QmlWorld::setWorldName(const QString &n) { if (m_settings.worldName != n) { m_settings.worldName = n; Q_EMIT settingsChanged(); } }
void QmlWorld::setKey(const QString &k) { if (m_key != k) { m_key = k; Q_EMIT settingsChanged(); } }
void QmlWorld::setExpectedSize(int s) { if (m_settings.size != s) { m_settings.size = s; Q_EMIT settingsChanged(); } }
void QmlWorld::setMinimumSize(int s) { if (m_settings.minimumSize != s) { m_settings.minimumSize = s; Q_EMIT settingsChanged(); } }
void QmlWorld::setRequestedRank(int r) { if (m_settings.rank != r) { m_settings.rank = r; Q_EMIT settingsChanged(); } }
void QmlWorld::setRootAddress(const QString &a) { if (m_settings.rootAddress != a) { m_settings.rootAddress = a; Q_EMIT settingsChanged(); } }
void QmlWorld::setListenAddress(const QString &a) { if (m_settings.listenAddress != a) { m_settings.listenAddress = a; Q_EMIT settingsChanged(); } }
void QmlWorld::setFormationTimeout(int ms) { m_settings.formationTimeout = std::chrono::milliseconds(ms); Q_EMIT settingsChanged(); }
void QmlWorld::setDiscoveryTimeout(int ms) { m_settings.discoveryTimeout = std::chrono::milliseconds(ms); Q_EMIT settingsChanged(); }
void QmlWorld::setJoinCode(const QString &code) { m_settings.joinCode = code; Q_EMIT settingsChanged(); }
void QmlWorld::setRootAddresses(const QStringList &a) { if (m_settings.rootAddresses != a) { m_settings.rootAddresses = a; Q_EMIT settingsChanged(); } }
void QmlWorld::setBeaconTimeout(int ms) { m_settings.beaconTimeout = std::chrono::milliseconds(ms); Q_EMIT settingsChanged(); }
void QmlWorld::setDnsSdTimeout(int ms) { m_settings.dnsSdTimeout = std::chrono::milliseconds(ms); Q_EMIT settingsChanged(); }
void QmlWorld::setHeartbeatInterval(int ms) { m_settings.heartbeatInterval = std::chrono::milliseconds(ms); Q_EMIT settingsChanged(); }
void QmlWorld::setHeartbeatTimeout(int ms) { m_settings.heartbeatTimeout = std::chrono::milliseconds(ms); Q_EMIT settingsChanged(); }
void QmlWorld::setReconnectGracePeriod(int ms) { m_settings.reconnectGracePeriod = std::chrono::milliseconds(ms); Q_EMIT settingsChanged(); }
void QmlWorld::setConfirmJoins(bool on) { if (m_settings.confirmJoins != on) { m_settings.confirmJoins = on; Q_EMIT settingsChanged(); } }
void QmlWorld::setConfirmTimeout(int ms) { m_settings.confirmTimeout = std::chrono::milliseconds(ms); Q_EMIT settingsChanged(); }
void QmlWorld::setAutoStart(bool on) { if (m_autoStart != on) { m_autoStart = on; Q_EMIT settingsChanged(); } }

bool QmlWorld::launched() const
{
    return WorldConfig::isLaunched();
}

int QmlWorld::rank() const
{
    return m_state == State::Formed || m_state == State::Closing || m_state == State::Closed ? m_world->rank() : NoRank;
}

int QmlWorld::size() const
{
    return m_state == State::Formed || m_state == State::Closing || m_state == State::Closed ? m_world->size() : 0;
}

Result<WorldConfig> QmlWorld::buildConfig() const
{
    if (m_mode == Mode::Auto && WorldConfig::isLaunched())
        return WorldConfig::fromEnvironment();
    WorldConfig config = m_settings;
    config.mode = m_mode == Mode::Launched ? WorldConfig::Mode::Launched : WorldConfig::Mode::Discovered;
    // The key a person types is stretched to the 32 bytes the handshake's HMAC uses.
    if (!m_key.isEmpty())
        config.worldKey = QCryptographicHash::hash(m_key.toUtf8(), QCryptographicHash::Sha256);
    if (auto ok = config.validate(); !ok)
        return ok.error();
    return config;
}

void QmlWorld::componentComplete()
{
    if (m_autoStart)
        start();
}

// ---------------------------------------------------------------- life cycle

bool QmlWorld::start()
{
    if (m_started) {
        setError(Error(ErrorCode::BadConfiguration, QStringLiteral("World.start() was called already")));
        return false;
    }
    auto config = buildConfig();
    if (!config) {
        qCWarning(lcQml).noquote() << "World refuses to start:" << config.error().toString();
        fail(config.error());
        return false;
    }
    m_started = true;
    setState(State::Forming);
    const QStringList permissions = AndroidPermissions::neededFor(config->transport);
    if (permissions.isEmpty()) {
        formWith(*config);
        return true;
    }
    // Android: the user answers the permission dialogs first. The task
    // runs on by itself (a QCoro task outlives its handle).
    formAfterPermissions(permissions, *config);
    return true;
}

QCoro::Task<> QmlWorld::formAfterPermissions(QStringList permissions, WorldConfig config)
{
    QPointer<QmlWorld> self(this);
    const Result<void> granted = co_await AndroidPermissions::request(permissions);
    if (!self)
        co_return;
    if (!granted)
        self->fail(granted.error());
    else
        self->formWith(config);
}

void QmlWorld::formWith(const WorldConfig &config)
{
    m_world = std::make_unique<World>();
    auto comm = Communicator::world(*m_world);
    if (!comm) {
        fail(comm.error());
        return;
    }
    m_comm = *comm;
    connectWorld();
    m_world->form(config);
}

void QmlWorld::connectWorld()
{
    World *w = m_world.get();
    connect(w, &World::formationProgress, this, [this](int joined, int expected) {
        m_joined = joined;
        Q_EMIT joinedChanged();
        Q_EMIT formationProgress(joined, expected);
    });
    connect(w, &World::discoveryProgress, this, [this](int devices, int nodes, int secondsLeft) {
        m_discovery = {devices, nodes, secondsLeft};
        Q_EMIT discoveryProgress(devices, nodes, secondsLeft);
    });
    const auto stepName = [](World::DiscoveryStep step) {
        return QString::fromLatin1(QMetaEnum::fromType<World::DiscoveryStep>().valueToKey(int(step)));
    };
    connect(w, &World::discoveryStepStarted, this,
            [this, stepName](World::DiscoveryStep step) { Q_EMIT discoveryStepStarted(stepName(step)); });
    connect(w, &World::discoveryStepGaveUp, this, [this, stepName](World::DiscoveryStep step, const Error &reason) {
        Q_EMIT discoveryStepGaveUp(stepName(step), reason.message);
    });
    connect(w, &World::formed, this, &QmlWorld::reserveChannels);
    connect(w, &World::stateChanged, this, [this](World::State s) {
        if (s == World::State::Closing || s == World::State::Closed)
            setState(State(int(s)));
        else if (s == World::State::Failed)
            fail(m_world->error());
    });
    connect(w, &World::nodeSuspect, this, [this](int r) { m_nodes->refresh(r); Q_EMIT nodeSuspect(r); });
    connect(w, &World::nodeAlive, this, [this](int r) { m_nodes->refresh(r); Q_EMIT nodeAlive(r); });
    connect(w, &World::nodeUnreachable, this, [this](int r, World::FailureClass c) {
        m_nodes->refresh(r);
        Q_EMIT nodeUnreachable(r, FailureClass(int(c)));
    });
    connect(w, &World::nodeReturned, this, [this](int r) { m_nodes->refresh(r); Q_EMIT nodeReturned(r); });
    connect(w, &World::nodeLeft, this, [this](int r) {
        m_nodes->markGone(r, NodeListModel::Status::Left);
        recountJoined();
        Q_EMIT nodeLeft(r);
    });
    connect(w, &World::nodeLost, this, [this](int r, World::FailureClass c, const Error &reason) {
        m_nodes->markGone(r, NodeListModel::Status::Lost);
        recountJoined();
        Q_EMIT nodeLost(r, FailureClass(int(c)), reason.message);
    });
    connect(w, &World::linkQualityChanged, m_nodes, &NodeListModel::refresh);
    connect(w, &World::nodeRejoined, this, [this](int r) {
        welcomeReplacement(r);
        m_nodes->replaceNode(r);
        recountJoined();
        Q_EMIT nodeRejoined(r);
    });
    connect(w, &World::spareNotFound, this,
            [this](int r, const Error &reason) { Q_EMIT spareNotFound(r, reason.message); });
    connect(w, &World::verificationCodeChanged, this, [this](int r) {
        m_nodes->refresh(r);
        Q_EMIT verificationCodeChanged(r);
    });
    connect(w, &World::joinRequested, this, &QmlWorld::joinRequested);
    connect(w, &World::joinRequestEnded, this, &QmlWorld::joinRequestEnded);
}

QString QmlWorld::verificationCode(int rank) const
{
    if (!m_world)
        return {};
    const auto code = m_world->verificationCode(rank);
    return code ? *code : QString();
}

void QmlWorld::inviteSpare(int rank)
{
    if (!m_world) {
        Q_EMIT spareNotFound(rank, QStringLiteral("no spare invited: the world was not started"));
        return;
    }
    m_world->inviteSpare(rank);
}

// Every rank proposes the lowest communicator id it has not used; the
// largest is free everywhere, and claiming the block above it keeps later
// dup()/split() ids out of it. The channels are then the same on every
// device whatever order the QML objects attach in.
void QmlWorld::reserveChannels()
{
    if (m_world->isReplacement())
        return awaitChannels();
    const auto proposal = m_comm.allreduce(qint64(m_comm.unusedId()), ReduceOp<qint64>(Op::Max));
    proposal.request().onFinished(this, [this, proposal] {
        const auto base = proposal.wait();
        if (!base) {
            fail(base.error());
            return;
        }
        adoptChannels(quint32(*base));
    });
}

// A node that took a lost rank comes after the channels were reserved: the
// lowest member that was there tells it where they are.
void QmlWorld::awaitChannels()
{
    auto service = Communicator::service(*m_world);
    if (!service)
        return fail(service.error());
    const auto block = service->recv<qint64>(AnySource, ChannelsTag);
    block.request().onFinished(this, [this, block] {
        const auto base = block.wait();
        if (!base)
            return fail(base.error());
        adoptChannels(quint32(*base));
    });
}

void QmlWorld::adoptChannels(quint32 base)
{
    m_channelBase = base;
    if (auto claim = m_comm.createGroup(allRanks(m_comm.size()), m_channelBase + ChannelBlock - 1); !claim)
        return fail(claim.error());
    m_nodes->reset(m_world.get());
    recountJoined();
    setState(State::Formed);
    Q_EMIT formed();
}

void QmlWorld::welcomeReplacement(int rank)
{
    if (m_state != State::Formed)
        return;
    for (int r = 0; r < m_comm.size(); ++r) {
        if (r == rank || m_nodes->isGone(r))
            continue;
        if (r != m_comm.rank())
            return; // a lower member speaks
        if (auto service = Communicator::service(*m_world))
            service->isend(rank, ChannelsTag, qint64(m_channelBase));
        return;
    }
}

void QmlWorld::close()
{
    if (m_world && (m_state == State::Forming || m_state == State::Formed))
        m_world->close();
}

// The app ends normally: leave as close() does, goodbyes first, so that the
// peers see this node leave (nodeLeft) rather than lose it. The app quits
// once the world is closed, or after WorldConfig::closeTimeout at most
// (the peers' own goodbyes are waited for that long). One that close()d the
// world just before quitting waits here for that close to finish.
void QmlWorld::leaveOnQuit()
{
    if (!m_world)
        return;
    const World::State state = m_world->state();
    if (state != World::State::Forming && state != World::State::Formed && state != World::State::Closing)
        return;
    qCDebug(lcQml) << "the application is quitting: leaving the world";
    m_world->closeAndWait();
}

void QmlWorld::setState(State state)
{
    if (m_state == state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

void QmlWorld::setError(const Error &error)
{
    m_error = error;
    Q_EMIT errorStringChanged();
    Q_EMIT errorOccurred(error.message);
}

void QmlWorld::fail(const Error &error)
{
    setError(error);
    setState(State::Failed);
}

void QmlWorld::recountJoined()
{
    int alive = 0;
    for (int r = 0; r < m_nodes->rowCount(); ++r)
        if (!m_nodes->isGone(r))
            ++alive;
    if (alive != m_joined) {
        m_joined = alive;
        Q_EMIT joinedChanged();
    }
}

// ---------------------------------------------------------------- channels

Result<Communicator> QmlWorld::channel(int number, const QObject *owner)
{
    if (number < 0 || number >= ChannelBlock - 1)
        return Error(ErrorCode::InvalidTag, QStringLiteral("channel %1 is out of range 0..%2 (apps use 0..%3)")
                                                .arg(number).arg(ChannelBlock - 2).arg(UserChannels - 1));
    if (m_state != State::Formed)
        return Error(ErrorCode::NotFormed, QStringLiteral("the world is not formed yet"));
    const QPointer<const QObject> holder = m_channelOwners.value(number);
    if (holder && holder != owner)
        return Error(ErrorCode::BadConfiguration,
                     QStringLiteral("channel %1 is in use by another object (%2); give each its own channel")
                         .arg(number).arg(QString::fromLatin1(holder->metaObject()->className())));
    if (!m_channels.contains(number)) {
        auto comm = m_comm.createGroup(allRanks(m_comm.size()), m_channelBase + quint32(number));
        if (!comm)
            return comm.error();
        m_channels.insert(number, *comm);
    }
    m_channelOwners.insert(number, owner);
    return m_channels.value(number);
}

void QmlWorld::releaseChannel(int number, const QObject *owner)
{
    if (m_channelOwners.value(number) == owner)
        m_channelOwners.remove(number);
}

Result<Communicator> QmlWorld::collectiveChannel()
{
    return channel(CollectiveChannel, this);
}

// ---------------------------------------------------------------- collectives

QCoro::QmlTask QmlWorld::barrier()
{
    auto comm = collectiveChannel();
    if (!comm) {
        QVariant failed = qmlresult::failed(comm.error());
        return QCoro::QmlTask([](QVariant v) -> QCoro::Task<QVariant> { co_return v; }(failed));
    }
    return barrierTask(*comm);
}

QCoro::Task<QVariant> QmlWorld::barrierTask(Communicator comm)
{
    const auto op = comm.barrier();
    const Result<void> done = co_await op;
    if (!done)
        co_return QVariant(qmlresult::failed(done.error()));
    co_return QVariant(qmlresult::ok());
}

QCoro::QmlTask QmlWorld::broadcast(const QJSValue &value, int root)
{
    auto comm = collectiveChannel();
    if (!comm) {
        QVariant failed = qmlresult::failed(comm.error());
        return QCoro::QmlTask([](QVariant v) -> QCoro::Task<QVariant> { co_return v; }(failed));
    }
    // Wrapped in an array so that plain numbers and strings are JSON too.
    const QByteArray encoded = QJsonDocument(QJsonArray{QJsonValue::fromVariant(value.toVariant())}).toJson(QJsonDocument::Compact);
    return broadcastTask(*comm, encoded, root);
}

QCoro::Task<QVariant> QmlWorld::broadcastTask(Communicator comm, QByteArray encoded, int root)
{
    const auto op = comm.bcast(encoded, root);
    const Result<QByteArray> got = co_await op;
    if (!got)
        co_return QVariant(qmlresult::failed(got.error()));
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(*got, &parseError);
    if (!doc.isArray() || doc.array().size() != 1) {
        const Error bad(ErrorCode::ProtocolViolation,
                        QStringLiteral("broadcast: the root's value is not the JSON this module sends (%1)")
                            .arg(parseError.errorString()));
        co_return QVariant(qmlresult::failed(bad));
    }
    co_return QVariant(qmlresult::ok({{QStringLiteral("value"), doc.array().at(0).toVariant()}}));
}

} // namespace mmpi
