#include <mmpi/world/worldconfig.h>

#include <mmpi/wire/frame.h>

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcessEnvironment>

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

} // namespace

Result<void> WorldConfig::validate() const
{
    if (size < 1 || size > 4096)
        return badConfig(QStringLiteral("world size %1 is out of range 1..4096").arg(size));
    if (mode == Mode::Discovered && rank != 0 && rank != NoRank)
        return badConfig(QStringLiteral("in a discovered world the rank is 0 (the root) or NoRank (-1)"));
    if (mode == Mode::Launched && (rank < 0 || rank >= size))
        return badConfig(QStringLiteral("rank %1 is out of range 0..%2").arg(rank).arg(size - 1));
    if (mode == Mode::Launched && !isRoot() && rootAddress.isEmpty())
        return badConfig(QStringLiteral("rank %1 needs the root's address").arg(rank));
    if (minimumSize < 0 || minimumSize > size)
        return badConfig(QStringLiteral("minimum size %1 is out of range 0..%2").arg(minimumSize).arg(size));
    if (worldName.isEmpty())
        return badConfig(QStringLiteral("the world needs a name"));
    if (transport.isEmpty())
        return badConfig(QStringLiteral("no transport given"));
    if (chunkSize < 1024 || chunkSize > 16 * 1024 * 1024)
        return badConfig(QStringLiteral("chunk size %1 is out of range 1 KiB..16 MiB").arg(chunkSize));
    if (maxMessageSize < chunkSize)
        return badConfig(QStringLiteral("maximum message size %1 is below the chunk size %2")
                             .arg(maxMessageSize).arg(chunkSize));
    if (maxUnexpectedBytes < chunkSize)
        return badConfig(QStringLiteral("unexpected-message limit %1 is below the chunk size %2")
                             .arg(maxUnexpectedBytes).arg(chunkSize));
    if (formationTimeout.count() <= 0 || handshakeTimeout.count() <= 0)
        return badConfig(QStringLiteral("timeouts must be positive"));
    return success();
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
    if (env.contains(QStringLiteral("MMPI_FORMATION_TIMEOUT_MS"))) {
        const auto timeout = intVariable(env, "MMPI_FORMATION_TIMEOUT_MS");
        if (!timeout)
            return timeout.error();
        config.formationTimeout = std::chrono::milliseconds(*timeout);
    }
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
    if (config.isRoot())
        config.listenAddress = config.rootAddress;
    if (auto valid = config.validate(); !valid)
        return valid.error();
    return config;
}

} // namespace mmpi
