// World, the QML face of mmpi::World: forms a world from properties (or from
// the environment mmpirun sets), mirrors its state, rank, size and per-node
// status, and hands the other QML types communicators of their own
// ("channels") once the world is formed.
#pragma once

#include <mmpi/comm/communicator.h>
#include <mmpi/world/world.h>

#include <QCoroQmlTask>
#include <QHash>
#include <QJSValue>
#include <QObject>
#include <QPointer>
#include <QQmlParserStatus>
#include <QtQml/qqmlregistration.h>

#include <array>
#include <memory>

namespace mmpi {

class NodeListModel;

}
Q_MOC_INCLUDE("nodelistmodel.h")
namespace mmpi {

class QmlWorld : public QObject, public QQmlParserStatus
{
    Q_OBJECT
    Q_INTERFACES(QQmlParserStatus)
    QML_NAMED_ELEMENT(World)

    // ---- how to form (read when start() is called)
    Q_PROPERTY(Mode mode READ mode WRITE setMode NOTIFY settingsChanged)
    Q_PROPERTY(QString transport READ transport WRITE setTransport NOTIFY settingsChanged)
    Q_PROPERTY(QVariantMap transportOptions READ transportOptions WRITE setTransportOptions NOTIFY settingsChanged)
    Q_PROPERTY(QString worldName READ worldName WRITE setWorldName NOTIFY settingsChanged)
    Q_PROPERTY(QString key READ key WRITE setKey NOTIFY settingsChanged)
    Q_PROPERTY(int expectedSize READ expectedSize WRITE setExpectedSize NOTIFY settingsChanged)
    Q_PROPERTY(int minimumSize READ minimumSize WRITE setMinimumSize NOTIFY settingsChanged)
    Q_PROPERTY(int requestedRank READ requestedRank WRITE setRequestedRank NOTIFY settingsChanged)
    Q_PROPERTY(QString rootAddress READ rootAddress WRITE setRootAddress NOTIFY settingsChanged)
    Q_PROPERTY(QString listenAddress READ listenAddress WRITE setListenAddress NOTIFY settingsChanged)
    Q_PROPERTY(int formationTimeout READ formationTimeout WRITE setFormationTimeout NOTIFY settingsChanged)
    Q_PROPERTY(int discoveryTimeout READ discoveryTimeout WRITE setDiscoveryTimeout NOTIFY settingsChanged)
    // Discovered worlds: a join code's text (WorldConfig::joinCode), the
    // root's addresses a person typed (WorldConfig::rootAddresses; a Lobby
    // fills them in) and how long DNS-SD and the beacon are tried before
    // the next step (WorldConfig::dnsSdTimeout, beaconTimeout).
    Q_PROPERTY(QString joinCode READ joinCode WRITE setJoinCode NOTIFY settingsChanged)
    Q_PROPERTY(QStringList rootAddresses READ rootAddresses WRITE setRootAddresses NOTIFY settingsChanged)
    Q_PROPERTY(int dnsSdTimeout READ dnsSdTimeout WRITE setDnsSdTimeout NOTIFY settingsChanged)
    Q_PROPERTY(int beaconTimeout READ beaconTimeout WRITE setBeaconTimeout NOTIFY settingsChanged)
    Q_PROPERTY(int heartbeatInterval READ heartbeatInterval WRITE setHeartbeatInterval NOTIFY settingsChanged)
    Q_PROPERTY(int heartbeatTimeout READ heartbeatTimeout WRITE setHeartbeatTimeout NOTIFY settingsChanged)
    Q_PROPERTY(int reconnectGracePeriod READ reconnectGracePeriod WRITE setReconnectGracePeriod NOTIFY settingsChanged)
    // The root asks a person to confirm each joining device (WorldConfig::
    // confirmJoins; Lobby.pendingJoins lists the requests), waiting up to
    // confirmTimeout ms for each answer. Needs a key or a join code.
    Q_PROPERTY(bool confirmJoins READ confirmJoins WRITE setConfirmJoins NOTIFY settingsChanged)
    Q_PROPERTY(int confirmTimeout READ confirmTimeout WRITE setConfirmTimeout NOTIFY settingsChanged)
    Q_PROPERTY(bool autoStart READ autoStart WRITE setAutoStart NOTIFY settingsChanged)
    // Whether mmpirun started this process (MMPI_RANK is set).
    Q_PROPERTY(bool launched READ launched CONSTANT)

    // ---- what happened
    Q_PROPERTY(State state READ state NOTIFY stateChanged)
    Q_PROPERTY(int rank READ rank NOTIFY formed)
    Q_PROPERTY(int size READ size NOTIFY formed)
    Q_PROPERTY(bool isRoot READ isRoot NOTIFY formed)
    // This node took a lost member's rank in a formed world (World::isReplacement).
    Q_PROPERTY(bool replacement READ isReplacement NOTIFY formed)
    // While forming: nodes joined so far (as far as this node knows). Once
    // formed: nodes not lost and not gone.
    Q_PROPERTY(int joined READ joined NOTIFY joinedChanged)
    // The root of a discovered world while it searches, for a lobby: devices
    // seen, nodes of this world found, seconds left in the search round (-1:
    // the transport does not say). 0 before the first report.
    Q_PROPERTY(int discoveredDevices READ discoveredDevices NOTIFY discoveryProgress)
    Q_PROPERTY(int discoveredNodes READ discoveredNodes NOTIFY discoveryProgress)
    Q_PROPERTY(int discoverySecondsLeft READ discoverySecondsLeft NOTIFY discoveryProgress)
    Q_PROPERTY(QString errorString READ errorString NOTIFY errorStringChanged)
    Q_PROPERTY(mmpi::NodeListModel *nodes READ nodes CONSTANT)

public:
    enum class Mode {
        Auto,       // launched by mmpirun: its environment; otherwise Discovered
        Launched,   // rank, size and root address from the properties
        Discovered, // requestedRank 0 is the root, -1 a node that waits to be found
    };
    Q_ENUM(Mode)
    // As mmpi::World::State; Formed comes once the channels are agreed.
    enum class State { Idle, Forming, Formed, Closing, Closed, Failed };
    Q_ENUM(State)
    // As mmpi::World::FailureClass.
    enum class FailureClass { Normal, Range, NodeTerm };
    Q_ENUM(FailureClass)

    // Channels: communicators of all ranks with ids agreed at formation, so
    // QML objects may attach in any order on each device. 0..UserChannels-1
    // are the app's (ParallelCanvas, Ticker); the rest are the module's own.
    static constexpr int UserChannels = 200;
    static constexpr int PlayerChannel = 200;
    static constexpr int CollectiveChannel = 201;
    static constexpr int ChannelBlock = 256;
    // On Communicator::service(): where the channels are, for a replacement.
    static constexpr int ChannelsTag = 2;

    explicit QmlWorld(QObject *parent = nullptr);
    ~QmlWorld() override;

    Mode mode() const { return m_mode; }
    void setMode(Mode mode);
    QString transport() const { return m_settings.transport; }
    void setTransport(const QString &transport);
    QVariantMap transportOptions() const { return m_settings.transportOptions; }
    void setTransportOptions(const QVariantMap &options);
    QString worldName() const { return m_settings.worldName; }
    void setWorldName(const QString &name);
    QString key() const { return m_key; }
    void setKey(const QString &key);
    int expectedSize() const { return m_settings.size; }
    void setExpectedSize(int size);
    int minimumSize() const { return m_settings.minimumSize; }
    void setMinimumSize(int size);
    int requestedRank() const { return m_settings.rank; }
    void setRequestedRank(int rank);
    QString rootAddress() const { return m_settings.rootAddress; }
    void setRootAddress(const QString &address);
    QString listenAddress() const { return m_settings.listenAddress; }
    void setListenAddress(const QString &address);
    int formationTimeout() const { return int(m_settings.formationTimeout.count()); }
    void setFormationTimeout(int ms);
    int discoveryTimeout() const { return int(m_settings.discoveryTimeout.count()); }
    void setDiscoveryTimeout(int ms);
    QString joinCode() const { return m_settings.joinCode; }
    void setJoinCode(const QString &code);
    QStringList rootAddresses() const { return m_settings.rootAddresses; }
    void setRootAddresses(const QStringList &addresses);
    int beaconTimeout() const { return int(m_settings.beaconTimeout.count()); }
    void setBeaconTimeout(int ms);
    int dnsSdTimeout() const { return int(m_settings.dnsSdTimeout.count()); }
    void setDnsSdTimeout(int ms);
    int heartbeatInterval() const { return int(m_settings.heartbeatInterval.count()); }
    void setHeartbeatInterval(int ms);
    int heartbeatTimeout() const { return int(m_settings.heartbeatTimeout.count()); }
    void setHeartbeatTimeout(int ms);
    int reconnectGracePeriod() const { return int(m_settings.reconnectGracePeriod.count()); }
    void setReconnectGracePeriod(int ms);
    bool confirmJoins() const { return m_settings.confirmJoins; }
    void setConfirmJoins(bool on);
    int confirmTimeout() const { return int(m_settings.confirmTimeout.count()); }
    void setConfirmTimeout(int ms);
    bool autoStart() const { return m_autoStart; }
    void setAutoStart(bool on);
    bool launched() const;

    State state() const { return m_state; }
    int rank() const;
    int size() const;
    bool isRoot() const { return rank() == 0; }
    bool isReplacement() const { return m_world && m_world->isReplacement(); }
    int joined() const { return m_joined; }
    int discoveredDevices() const { return m_discovery[0]; }
    int discoveredNodes() const { return m_discovery[1]; }
    int discoverySecondsLeft() const { return m_discovery[2]; }
    QString errorString() const { return m_error.message; }
    NodeListModel *nodes() const { return m_nodes; }

    // Starts forming (once). False, with errorString, when the settings are
    // refused or it was started before.
    Q_INVOKABLE bool start();
    // Leaves the world (goodbyes); state Closing, then Closed. Done by
    // itself when the application quits (QCoreApplication::aboutToQuit).
    Q_INVOKABLE void close();
    // Collective, on the module's own channel: resolves {ok, error, code}
    // once every rank has entered.
    Q_INVOKABLE QCoro::QmlTask barrier();
    // Collective: every rank gets the root's `value` (JSON-like: numbers,
    // strings, lists, objects); resolves {ok, value, error, code}.
    Q_INVOKABLE QCoro::QmlTask broadcast(const QJSValue &value, int root = 0);
    // REBUILD with a spare (World::inviteSpare): offer `rank`, a node this
    // one has lost, to a device that advertises this world and is in none.
    // nodeRejoined(rank) when one takes it, spareNotFound(rank, reason) if not.
    Q_INVOKABLE void inviteSpare(int rank);
    // The six digits of this node's link to `rank` (World::verificationCode),
    // "" while there is none. A joining device shows verificationCode(0)
    // while the root's person compares it.
    Q_INVOKABLE QString verificationCode(int rank) const;

    // ---- C++ side, for the other QML types and the app
    // The underlying world (nullptr before start()).
    World *world() const { return m_world.get(); }
    // The world communicator (null before start()).
    Communicator communicator() const { return m_comm; }
    // Channel `number`'s communicator, claimed by `owner` (one owner per
    // channel at a time). Errors: NotFormed before Formed, InvalidTag for a
    // number out of range, BadConfiguration if another object holds it.
    Result<Communicator> channel(int number, const QObject *owner);
    // Gives a channel back (the owner is being destroyed or detached).
    void releaseChannel(int number, const QObject *owner);
    // The configuration start() would use.
    Result<WorldConfig> buildConfig() const;

    void classBegin() override {}
    void componentComplete() override;

Q_SIGNALS:
    void settingsChanged();
    // Emitted first thing in the destructor: objects holding a channel let
    // go of it while the world still exists.
    void detaching();
    void stateChanged(mmpi::QmlWorld::State state);
    void formed();
    void joinedChanged();
    void errorStringChanged();
    void errorOccurred(const QString &message);
    void formationProgress(int joined, int expected);
    // The root of a discovered world while it searches (World::discoveryProgress).
    void discoveryProgress(int devicesSeen, int nodesFound, int secondsLeft);
    // A step of a discovered world's search began, or gave up with its
    // reason (World::discoveryStepStarted/GaveUp): "DnsSd", "Beacon",
    // "JoinCode", "Address".
    void discoveryStepStarted(const QString &step);
    void discoveryStepGaveUp(const QString &step, const QString &reason);
    void nodeSuspect(int rank);
    void nodeAlive(int rank);
    void nodeUnreachable(int rank, mmpi::QmlWorld::FailureClass failureClass);
    void nodeReturned(int rank);
    void nodeLeft(int rank);
    void nodeLost(int rank, mmpi::QmlWorld::FailureClass failureClass, const QString &reason);
    // A new node took `rank` (REBUILD); nodes lists it.
    void nodeRejoined(int rank);
    void spareNotFound(int rank, const QString &reason);
    void verificationCodeChanged(int rank);
    // The root of a world that confirms joins (World::joinRequested).
    void joinRequested(int requestId, const QString &nodeId, const QString &address,
                       const QString &verificationCode);
    void joinRequestEnded(int requestId);

private:
    QCoro::Task<> formAfterPermissions(QStringList permissions, WorldConfig config);
    void formWith(const WorldConfig &config);
    void leaveOnQuit();
    void connectWorld();
    void reserveChannels();
    void awaitChannels();
    void adoptChannels(quint32 base);
    void welcomeReplacement(int rank);
    void setState(State state);
    void fail(const Error &error);
    void setError(const Error &error);
    void recountJoined();
    Result<Communicator> collectiveChannel();
    QCoro::Task<QVariant> barrierTask(Communicator comm);
    QCoro::Task<QVariant> broadcastTask(Communicator comm, QByteArray encoded, int root);

    Mode m_mode = Mode::Auto;
    WorldConfig m_settings;
    QString m_key;
    bool m_autoStart = false;
    bool m_started = false;

    std::unique_ptr<World> m_world;
    Communicator m_comm;
    State m_state = State::Idle;
    Error m_error;
    int m_joined = 0;
    std::array<int, 3> m_discovery{0, 0, 0}; // devices, nodes, seconds left
    NodeListModel *m_nodes;
    quint32 m_channelBase = 0;
    QHash<int, QPointer<const QObject>> m_channelOwners;
    QHash<int, Communicator> m_channels;
};

} // namespace mmpi
