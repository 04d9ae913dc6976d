#include "launchenvironment.h"

#include <mmpi/core/logging.h>

#include <QCoreApplication>
#include <QHostAddress>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTcpServer>

#include <array>

namespace mmpi::tools {

namespace {

using namespace Qt::StringLiterals;

// 32 bytes from the system's cryptographic generator, as 64 lower-case hex digits.
QString makeWorldKey()
{
    std::array<quint32, 8> words;
    QRandomGenerator::system()->fillRange(words.data(), qsizetype(words.size()));
    const QByteArray key(reinterpret_cast<const char *>(words.data()), qsizetype(sizeof(words)));
    return QString::fromLatin1(key.toHex());
}

// The local and sim transports both name a local server; only the scheme differs.
QString localRootAddress(const QString &scheme)
{
    const quint32 salt = QRandomGenerator::system()->generate();
    return u"%1://mmpi-%2-%3"_s.arg(scheme).arg(QCoreApplication::applicationPid())
        .arg(salt, 8, 16, QLatin1Char('0'));
}

QString tcpAddress(const QString &host, quint16 port)
{
    return host.contains(u':') ? u"tcp://[%1]:%2"_s.arg(host).arg(port) : u"tcp://%1:%2"_s.arg(host).arg(port);
}

} // namespace

LaunchEnvironment::LaunchEnvironment(LaunchEnvironment &&) noexcept = default;
LaunchEnvironment &LaunchEnvironment::operator=(LaunchEnvironment &&) noexcept = default;
LaunchEnvironment::~LaunchEnvironment() = default;

Result<LaunchEnvironment> LaunchEnvironment::create(const LaunchOptions &options)
{
    LaunchEnvironment env;
    if (options.transport == u"tcp"_s) {
        env.m_portHolder = std::make_unique<QTcpServer>();
        if (!env.m_portHolder->listen(QHostAddress::LocalHost, 0))
            return Error(ErrorCode::ListenFailed, u"cannot find a free TCP port on 127.0.0.1: %1"_s
                                                      .arg(env.m_portHolder->errorString()));
        // With --rank-address rank 0 may live in another network namespace,
        // where this port, free here, is as good a guess as any.
        const quint16 port = env.m_portHolder->serverPort();
        env.m_rootAddress = tcpAddress(options.rankAddresses.value(0, u"127.0.0.1"_s), port);
        for (int rank = 0; rank < int(options.rankAddresses.size()); ++rank)
            env.m_listenAddresses.append(rank == 0 ? env.m_rootAddress : tcpAddress(options.rankAddresses.at(rank), 0));
    } else {
        env.m_rootAddress = localRootAddress(options.transport);
    }
    const QString worldName = options.worldName.isEmpty()
        ? u"mmpirun-%1"_s.arg(QCoreApplication::applicationPid())
        : options.worldName;

    env.m_common = QProcessEnvironment::systemEnvironment();
    env.m_common.insert(u"MMPI_SIZE"_s, QString::number(options.nodes));
    env.m_common.insert(u"MMPI_TRANSPORT"_s, options.transport);
    env.m_common.insert(u"MMPI_ROOT_ADDRESS"_s, env.m_rootAddress);
    env.m_common.insert(u"MMPI_WORLD_KEY"_s, makeWorldKey());
    env.m_common.insert(u"MMPI_WORLD_NAME"_s, worldName);
    env.m_common.insert(u"MMPI_FORMATION_TIMEOUT_MS"_s, QString::number(options.formationTimeout.count()));
    env.m_common.insert(u"MMPI_LAUNCHER"_s, u"mmpirun"_s);
    // Options meant for another job's transport must not leak into this one.
    env.m_common.remove(u"MMPI_TRANSPORT_OPTIONS"_s);
    env.m_common.remove(u"MMPI_LISTEN_ADDRESS"_s);
    if (options.transport == u"sim"_s) {
        env.m_transportOptions = options.transportOptions;
        env.m_transportOptions.insert(u"worldSize"_s, options.nodes);
    }
    // The key is deliberately not logged.
    qCDebug(lcTools) << "world" << worldName << "of" << options.nodes << "node(s), root at" << env.m_rootAddress;
    return env;
}

QProcessEnvironment LaunchEnvironment::forReplacement(int rank) const
{
    QProcessEnvironment env = forRank(rank, false);
    env.insert(u"MMPI_REJOIN"_s, u"1"_s);
    return env;
}

QProcessEnvironment LaunchEnvironment::forRank(int rank, bool withFaults) const
{
    QProcessEnvironment env = m_common;
    env.insert(u"MMPI_RANK"_s, QString::number(rank));
    if (rank < m_listenAddresses.size())
        env.insert(u"MMPI_LISTEN_ADDRESS"_s, m_listenAddresses.at(rank));
    if (!m_transportOptions.isEmpty()) {
        // The sim transport picks the faults of its own rank out of the script.
        QVariantMap options = m_transportOptions;
        options.insert(u"rank"_s, rank);
        // A scripted fault would strike the replacement again.
        if (!withFaults)
            options.remove(u"faults"_s);
        env.insert(u"MMPI_TRANSPORT_OPTIONS"_s,
                   QString::fromUtf8(QJsonDocument(QJsonObject::fromVariantMap(options)).toJson(QJsonDocument::Compact)));
    }
    return env;
}

void LaunchEnvironment::releaseRootPort()
{
    if (m_portHolder)
        m_portHolder->close();
    m_portHolder.reset();
}

} // namespace mmpi::tools
