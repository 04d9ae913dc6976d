#include "launchenvironment.h"

#include "cpubinding.h"

#include <mmpi/core/logging.h>
#include <mmpi/transport/listenport.h>
#include <mmpi/transport/transportregistry.h>

#include <QCoreApplication>
#include <QDir>
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
    // Without --respawn only the root's address is fixed; the others are
    // whatever the transport gives and travel in the rank table.
    const int fixed = options.respawns > 0 ? options.nodes : 1;
    if (options.transport == u"tcp"_s) {
        // With --rank-address a rank may live in another network namespace,
        // where a port free here is as good a guess as any.
        for (int rank = 0; rank < fixed; ++rank) {
            const auto port = env.holdPort();
            if (!port)
                return port.error();
            env.m_listenAddresses.append(tcpAddress(options.rankAddresses.value(rank, u"127.0.0.1"_s), *port));
        }
        for (int rank = fixed; rank < int(options.rankAddresses.size()); ++rank)
            env.m_listenAddresses.append(tcpAddress(options.rankAddresses.at(rank), 0));
        env.m_rootAddress = env.m_listenAddresses.constFirst();
        if (fixed == 1 && options.rankAddresses.isEmpty())
            env.m_listenAddresses.clear(); // MMPI_ROOT_ADDRESS says it all
    } else {
        env.m_rootAddress = localRootAddress(options.transport);
        if (fixed > 1)
            for (int rank = 0; rank < fixed; ++rank)
                env.m_listenAddresses.append(rank == 0 ? env.m_rootAddress : u"%1-r%2"_s.arg(env.m_rootAddress).arg(rank));
    }
    env.m_everyAddressFixed = fixed > 1 && env.m_listenAddresses.size() == fixed;
    env.m_rankHosts = options.rankAddresses;
    env.m_replacements = QList<int>(fixed, 0);
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
    // A node looks beside itself for shared transport plugins; an app built
    // elsewhere finds this prefix's through mmpirun (the user's path first).
    env.m_common.insert(u"MMPI_PLUGIN_PATH"_s, TransportRegistry::searchPaths().join(QDir::listSeparator()));
    // The binding is mmpirun's own (as mpirun's): the nodes are not told it.
    env.m_cpus = planBinding(options.binding, options.nodes, allowedCpus());
    if (options.transport == u"sim"_s) {
        env.m_transportOptions = options.transportOptions;
        env.m_transportOptions.insert(u"worldSize"_s, options.nodes);
    }
    // The key is deliberately not logged.
    qCDebug(lcTools) << "world" << worldName << "of" << options.nodes << "node(s), root at" << env.m_rootAddress;
    return env;
}

Result<quint16> LaunchEnvironment::holdPort()
{
    auto holder = listenForLater(QHostAddress::LocalHost);
    if (!holder->isListening())
        return Error(ErrorCode::ListenFailed, u"cannot find a free TCP port on 127.0.0.1: %1"_s
                                                  .arg(holder->errorString()));
    const quint16 port = holder->serverPort();
    m_portHolders.push_back(std::move(holder));
    return port;
}

bool LaunchEnvironment::knowsEveryAddress() const
{
    return m_everyAddressFixed;
}

// Not the old node's address: survivors still reconnecting to the old node
// would reach the replacement there and take it for the node they lost.
void LaunchEnvironment::moveToFreshAddress(int rank)
{
    if (!m_everyAddressFixed || rank >= m_replacements.size())
        return;
    const int generation = ++m_replacements[rank];
    const QString transport = m_common.value(u"MMPI_TRANSPORT"_s);
    if (transport != u"tcp"_s) {
        m_listenAddresses[rank] = u"%1-r%2-%3"_s.arg(m_rootAddress).arg(rank).arg(generation);
        return;
    }
    const auto port = holdPort();
    // Without a port known in advance a later replacement of rank 0 could
    // not find this node; any other replacement still can.
    if (!port)
        m_everyAddressFixed = false;
    m_listenAddresses[rank] = tcpAddress(m_rankHosts.value(rank, u"127.0.0.1"_s), port ? *port : 0);
    releasePorts();
}

QProcessEnvironment LaunchEnvironment::forReplacement(int rank, const QList<int> &contacts)
{
    moveToFreshAddress(rank);
    QProcessEnvironment env = forRank(rank, false);
    env.insert(u"MMPI_REJOIN"_s, u"1"_s);
    // Through the members running now, in turn: the root may be gone too,
    // or a replacement of it listens at a fresh address.
    QStringList addresses;
    for (int contact : contacts)
        if (contact != rank && contact < m_listenAddresses.size())
            addresses << m_listenAddresses.at(contact);
    if (!addresses.isEmpty()) {
        env.insert(u"MMPI_ROOT_ADDRESS"_s, addresses.takeFirst());
        env.insert(u"MMPI_REJOIN_CONTACTS"_s, addresses.join(u','));
    }
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

void LaunchEnvironment::releasePorts()
{
    for (const auto &holder : m_portHolders)
        holder->close();
    m_portHolders.clear();
}

} // namespace mmpi::tools
