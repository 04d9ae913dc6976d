#include <mmpi/world/worldconfig.h>

#include <mmpi/world/joincode.h>
#include <mmpi/world/rootaddress.h>

#include <mmpi/wire/frame.h>

#include <QJsonDocument>
#include <algorithm>
#include <QJsonObject>
#include <QMetaEnum>
#include <QProcessEnvironment>

#include <optional>

namespace mmpi {

namespace {

Error badConfig(const QString &message)
{
    return {ErrorCode::BadConfiguration, message};
}

Result<int> intVariable(const QProcessEnvironment &env, const char *name)
{
    const QString text = env.value(QLatin1String(name));
    if (text.isEmpty())
        return badConfig(QStringLiteral("%1 is not set (was this node started by mmpirun?)")
                             .arg(QLatin1String(name)));
    bool ok = false;
    const int value = text.toInt(&ok);
    if (!ok)
        return badConfig(QStringLiteral("%1='%2' is not an integer").arg(QLatin1String(name), text));
    return value;
}

// Leaves `field` as it is when the variable is not set.
template <typename T>
Result<void> readOptional(const QProcessEnvironment &env, const char *name, T &field)
{
    if (!env.contains(QLatin1String(name)))
        return success();
    const auto value = intVariable(env, name);
    if (!value)
        return value.error();
    field = T(*value);
    return success();
}

} // namespace

Result<void> WorldConfig::validateDiscoverySteps() const
{
    const auto name = [](DiscoveryStep step) {
        return QString::fromLatin1(QMetaEnum::fromType<DiscoveryStep>().valueToKey(int(step)));
    };
    if (mode == Mode::Discovered && discoverySteps.isEmpty())
        return badConfig(QStringLiteral("a discovered world needs at least one discovery step"));
    for (qsizetype i = 0; i < discoverySteps.size(); ++i) {
        const DiscoveryStep step = discoverySteps[i];
        if (name(step).isEmpty())
            return badConfig(QStringLiteral("discovery step %1 is not a step").arg(int(step)));
        if (discoverySteps.indexOf(step) != i)
            return badConfig(QStringLiteral("discovery step %1 is listed twice").arg(name(step)));
        // Those wait for a person and never give up: a step after them
        // would never start. Together at the end they all run at once.
        if (i > 0 && waitsForPerson(discoverySteps[i - 1]) && !waitsForPerson(step))
            return badConfig(QStringLiteral("discovery step %1 comes after %2, which waits for a person, so it "
                                            "would never start: JoinCode and Address go last")
                                 .arg(name(step), name(discoverySteps[i - 1])));
    }
    return success();
}

Result<void> WorldConfig::validateRootAddresses() const
{
    if (rootAddresses.isEmpty())
        return success();
    if (mode != Mode::Discovered)
        return badConfig(QStringLiteral("typed root addresses are for discovered worlds (a launched node has "
                                        "rootAddress)"));
    if (rootAddresses.size() > RootAddress::MaxAddresses)
        return Error(ErrorCode::BadAddress, QStringLiteral("%1 root addresses, more than %2")
                                                .arg(rootAddresses.size()).arg(RootAddress::MaxAddresses));
    const quint16 defaultPort = RootAddress::beaconPort(transportOptions);
    std::optional<std::pair<QString, quint16>> first;
    for (const QString &text : rootAddresses) {
        const auto address = RootAddress::parse(text, defaultPort);
        if (!address)
            return address.error();
        // A root hears adverts on one port (Transport::advertiseTo).
        if (first && first->second != address->port())
            return Error(ErrorCode::BadAddress,
                         QStringLiteral("root addresses '%1' and '%2' name ports %3 and %4: a root hears adverts "
                                        "on one port")
                             .arg(first->first, text.trimmed()).arg(first->second).arg(address->port()));
        if (!first)
            first = {text.trimmed(), address->port()};
    }
    return success();
}

Result<void> WorldConfig::validate() const
{
    if (size < 1 || size > MaxSize)
        return badConfig(QStringLiteral("world size %1 is out of range 1..%2").arg(size).arg(MaxSize));
    if (mode == Mode::Discovered && rank != 0 && rank != NoRank)
        return badConfig(QStringLiteral("in a discovered world the rank is 0 (the root) or NoRank (-1)"));
    if (mode == Mode::Launched && (rank < 0 || rank >= size))
        return badConfig(QStringLiteral("rank %1 is out of range 0..%2").arg(rank).arg(size - 1));
    if (mode == Mode::Launched && !isRoot() && rootAddress.isEmpty())
        return badConfig(QStringLiteral("rank %1 needs the root's address").arg(rank));
    if (rejoin && mode != Mode::Launched)
        return badConfig(QStringLiteral("only a launched node can rejoin a world"));
    if (rejoin && rootAddress.isEmpty())
        return badConfig(QStringLiteral("a node that rejoins needs the address of a member to rejoin through"));
    if (minimumSize < 0 || minimumSize > size)
        return badConfig(QStringLiteral("minimum size %1 is out of range 0..%2").arg(minimumSize).arg(size));
    if (worldName.isEmpty())
        return badConfig(QStringLiteral("the world needs a name"));
    if (transport.isEmpty())
        return badConfig(QStringLiteral("no transport given"));
    if (chunkSize != 0 && (chunkSize < 1024 || chunkSize > 16 * 1024 * 1024))
        return badConfig(QStringLiteral("chunk size %1 is out of range 1 KiB..16 MiB (0: the transport's choice)")
                             .arg(chunkSize));
    // With chunkSize 0 the limits below hold for the smallest chunk the
    // transport's choice is clamped to.
    const int chunk = chunkSize != 0 ? chunkSize : 1024;
    if (maxMessageSize < chunk)
        return badConfig(QStringLiteral("maximum message size %1 is below the chunk size %2")
                             .arg(maxMessageSize).arg(chunk));
    if (maxUnexpectedBytes < chunk)
        return badConfig(QStringLiteral("unexpected-message limit %1 is below the chunk size %2")
                             .arg(maxUnexpectedBytes).arg(chunk));
    if (formationTimeout.count() <= 0 || handshakeTimeout.count() <= 0 || beaconTimeout.count() <= 0
        || dnsSdTimeout.count() <= 0)
        return badConfig(QStringLiteral("timeouts must be positive"));
    if (confirmJoins && worldKey.isEmpty() && joinCode.isEmpty())
        return badConfig(QStringLiteral("confirmJoins needs a world key or a join code (a typed root address "
                                        "carries no key): without one anyone may join, and a confirmation would "
                                        "protect nothing"));
    if (confirmTimeout.count() <= 0)
        return badConfig(QStringLiteral("confirm timeout %1 ms is not positive").arg(confirmTimeout.count()));
    if (!joinCode.isEmpty()) {
        if (mode != Mode::Discovered)
            return badConfig(QStringLiteral("a join code is for discovered worlds"));
        if (auto code = JoinCode::parse(joinCode); !code)
            return code.error();
    }
    if (auto steps = validateDiscoverySteps(); !steps)
        return steps;
    if (auto addresses = validateRootAddresses(); !addresses)
        return addresses;
    if (heartbeatInterval.count() != 0) {
        // Below 10 ms a heartbeat would be traffic of its own; the timeout
        // must leave a heartbeat time to arrive before the peer is suspect
        // (at half the timeout), with room for a late one.
        if (heartbeatInterval.count() < 10 || heartbeatInterval.count() > 3600000)
            return badConfig(QStringLiteral("heartbeat interval %1 ms is out of range 10 ms..1 h (0 turns "
                                            "heartbeats off)").arg(heartbeatInterval.count()));
        if (heartbeatTimeout < 3 * heartbeatInterval || heartbeatTimeout.count() > 24LL * 3600000)
            return badConfig(QStringLiteral("heartbeat timeout %1 ms is out of range %2 ms (3 heartbeat "
                                            "intervals)..24 h")
                                 .arg(heartbeatTimeout.count()).arg(3 * heartbeatInterval.count()));
    }
    if (reconnectGracePeriod.count() < 0 || reconnectGracePeriod.count() > 24LL * 3600000)
        return badConfig(QStringLiteral("reconnect grace period %1 ms is out of range 0..24 h (0 turns "
                                        "reconnection off)").arg(reconnectGracePeriod.count()));
    // Room for a few whole fragments, or a big message would crawl one
    // fragment per ack.
    if (replayBufferSize < 4LL * (chunk + FrameHeaderSize) || replayBufferSize > 1024LL * 1024 * 1024)
        return badConfig(QStringLiteral("replay buffer of %1 bytes is out of range %2 (4 chunks of %3 bytes)..1 GiB; "
                                        "set replayBufferSize (MMPI_REPLAY_BUFFER_BYTES) within it, or a smaller "
                                        "chunkSize (MMPI_CHUNK_BYTES)")
                             .arg(replayBufferSize).arg(4LL * (chunk + FrameHeaderSize)).arg(chunk));
    return success();
}

int WorldConfig::effectiveChunkSize(int preferred) const
{
    if (chunkSize != 0)
        return chunkSize;
    const qint64 room = std::min({replayBufferSize / 4 - FrameHeaderSize, maxMessageSize, maxUnexpectedBytes});
    return int(std::clamp<qint64>(preferred > 0 ? preferred : DefaultChunkSize, 1024, std::max<qint64>(room, 1024)));
}

bool WorldConfig::isLaunched()
{
    return qEnvironmentVariableIsSet("MMPI_RANK");
}

Result<WorldConfig> WorldConfig::fromEnvironment()
{
    const auto env = QProcessEnvironment::systemEnvironment();
    WorldConfig config;
    config.mode = Mode::Launched;
    const auto rank = intVariable(env, "MMPI_RANK");
    if (!rank)
        return rank.error();
    const auto size = intVariable(env, "MMPI_SIZE");
    if (!size)
        return size.error();
    config.rank = *rank;
    config.size = *size;
    config.transport = env.value(QStringLiteral("MMPI_TRANSPORT"), config.transport);
    config.rootAddress = env.value(QStringLiteral("MMPI_ROOT_ADDRESS"));
    config.worldName = env.value(QStringLiteral("MMPI_WORLD_NAME"), config.worldName);
    const QString key = env.value(QStringLiteral("MMPI_WORLD_KEY"));
    const auto decoded = QByteArray::fromHex(key.toLatin1());
    if (decoded.toHex() != key.toLatin1().toLower())
        return badConfig(QStringLiteral("MMPI_WORLD_KEY is not a hex string"));
    config.worldKey = decoded;
    // Each optional; unset leaves the default.
    for (auto ok : {readOptional(env, "MMPI_FORMATION_TIMEOUT_MS", config.formationTimeout),
                    readOptional(env, "MMPI_HEARTBEAT_INTERVAL_MS", config.heartbeatInterval),
                    readOptional(env, "MMPI_HEARTBEAT_TIMEOUT_MS", config.heartbeatTimeout),
                    readOptional(env, "MMPI_RECONNECT_GRACE_MS", config.reconnectGracePeriod),
                    readOptional(env, "MMPI_REPLAY_BUFFER_BYTES", config.replayBufferSize),
                    readOptional(env, "MMPI_CHUNK_BYTES", config.chunkSize)})
        if (!ok)
            return ok.error();
    if (env.contains(QStringLiteral("MMPI_TRANSPORT_OPTIONS"))) {
        QJsonParseError parseError;
        const QJsonDocument options =
            QJsonDocument::fromJson(env.value(QStringLiteral("MMPI_TRANSPORT_OPTIONS")).toUtf8(), &parseError);
        if (!options.isObject())
            return badConfig(QStringLiteral("MMPI_TRANSPORT_OPTIONS is not a JSON object (%1)")
                                 .arg(parseError.error == QJsonParseError::NoError ? QStringLiteral("not an object")
                                                                                    : parseError.errorString()));
        // The transport's configure() judges the keys and values.
        config.transportOptions = options.object().toVariantMap();
    }
    config.listenAddress = env.value(QStringLiteral("MMPI_LISTEN_ADDRESS"));
    config.rejoin = env.value(QStringLiteral("MMPI_REJOIN")) == QLatin1String("1");
    // Comma-separated: no transport's address holds a comma.
    config.rejoinContacts = env.value(QStringLiteral("MMPI_REJOIN_CONTACTS")).split(u',', Qt::SkipEmptyParts);
    if (config.isRoot() && !config.rejoin) {
        // The root listens where the others join it (a replacement of rank 0
        // joins through a survivor at MMPI_ROOT_ADDRESS instead).
        if (!config.listenAddress.isEmpty() && config.listenAddress != config.rootAddress)
            return badConfig(QStringLiteral("MMPI_LISTEN_ADDRESS='%1' of rank 0 is not MMPI_ROOT_ADDRESS='%2'")
                                 .arg(config.listenAddress, config.rootAddress));
        config.listenAddress = config.rootAddress;
    }
    if (auto valid = config.validate(); !valid)
        return valid.error();
    return config;
}

} // namespace mmpi
