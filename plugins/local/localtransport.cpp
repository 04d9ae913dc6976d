#include "localtransport.h"

#include "localaddress.h"
#include "locallink.h"

#include <mmpi/core/logging.h>
#include <mmpi/transport/optionreader.h>

#include <QCoreApplication>
#include <QLocalSocket>
#include <QPointer>
#include <QRandomGenerator>

namespace mmpi {

namespace {

// A live server accepts a local connection at once, and a missing or stale
// one refuses it at once; the wait only bounds the unexpected.
constexpr int ProbeTimeoutMs = 1000;

} // namespace

LocalTransport::LocalTransport(QObject *parent)
    : Transport(parent), m_server(this), m_rendezvous(this)
{
    // Only processes of the same user may connect.
    m_server.setSocketOptions(QLocalServer::UserAccessOption);
    connect(&m_server, &QLocalServer::newConnection, this, &LocalTransport::acceptPendingLinks);
    connect(&m_rendezvous, &LocalRendezvous::peerDiscovered, this, &Transport::peerDiscovered);
    connect(&m_rendezvous, &LocalRendezvous::discoveryProgress, this, &Transport::discoveryProgress);
}

LocalTransport::~LocalTransport() = default;

Result<void> LocalTransport::configure(const QVariantMap &options)
{
    OptionReader reader(name(), options);
    const QString directory = reader.string(QStringLiteral("discoveryDir"), QString());
    const int interval = int(reader.integer(QStringLiteral("discoveryInterval"), 200, 10, 60000));
    const DecoderLimits limits = reader.decoderLimits();
    const int socketBuffer = reader.socketBufferSize();
    if (auto ok = reader.finish(); !ok)
        return ok;
    m_socketBuffer = socketBuffer;
    m_rendezvous.setDirectory(directory);
    m_rendezvous.setPollInterval(interval);
    m_limits = limits;
    return success();
}

Result<QString> LocalTransport::listen(const QString &address)
{
    if (m_server.isListening())
        return Error(ErrorCode::ListenFailed, QStringLiteral("already listening at %1").arg(listenAddress()));
    QString serverName = uniqueServerName();
    if (!address.isEmpty()) {
        auto parsed = parseLocalAddress(address);
        if (!parsed)
            return parsed.error();
        serverName = *parsed;
    }
    if (auto listening = listenOn(serverName); !listening)
        return listening.error();
    qCDebug(lcTransport).noquote() << "listening at" << listenAddress() << "(" << m_server.fullServerName() << ")";
    return listenAddress();
}

Result<void> LocalTransport::listenOn(const QString &serverName)
{
    const QString address = formatLocalAddress(serverName);
    // QLocalServer (with access options) renames its new socket over an
    // existing one, even a live server's, so a taken name is checked first.
    if (isServing(serverName))
        return Error(ErrorCode::ListenFailed,
                     QStringLiteral("cannot listen on %1: another server is listening there").arg(address));
    if (m_server.listen(serverName))
        return success();
    // Where it does not rename, the socket file of a crashed process must
    // not block the name for good.
    if (m_server.serverError() == QAbstractSocket::AddressInUseError) {
        qCInfo(lcTransport).noquote() << "removing the stale local socket of" << address;
        QLocalServer::removeServer(serverName);
        if (m_server.listen(serverName))
            return success();
    }
    return Error(ErrorCode::ListenFailed,
                 QStringLiteral("cannot listen on %1: %2").arg(address, m_server.errorString()));
}

// The server asked sees a link that closes at once; that happens only when
// two servers want the same name, which is an error anyway.
bool LocalTransport::isServing(const QString &serverName)
{
    QLocalSocket probe;
    probe.connectToServer(serverName);
    const bool alive = probe.waitForConnected(ProbeTimeoutMs);
    probe.abort();
    return alive;
}

QString LocalTransport::uniqueServerName()
{
    return QStringLiteral("mmpi-%1-%2")
        .arg(QCoreApplication::applicationPid())
        .arg(QRandomGenerator::global()->generate(), 8, 16, QLatin1Char('0'));
}

QString LocalTransport::listenAddress() const
{
    return m_server.isListening() ? formatLocalAddress(m_server.serverName()) : QString();
}

void LocalTransport::stopListening()
{
    m_server.close();
}

Result<Link *> LocalTransport::connectTo(const QString &address)
{
    auto serverName = parseLocalAddress(address);
    if (!serverName)
        return serverName.error();
    return LocalLink::connectTo(*serverName, m_limits, m_socketBuffer, this);
}

Result<void> LocalTransport::advertise(const PeerAdvert &advert)
{
    PeerAdvert filled = advert;
    if (filled.address.isEmpty())
        filled.address = listenAddress();
    if (auto address = parseLocalAddress(filled.address); !address)
        return address.error();
    return m_rendezvous.advertise(filled);
}

void LocalTransport::stopAdvertising()
{
    m_rendezvous.stopAdvertising();
}

Result<void> LocalTransport::startDiscovery(const QString &worldName)
{
    return m_rendezvous.startDiscovery(worldName);
}

void LocalTransport::stopDiscovery()
{
    m_rendezvous.stopDiscovery();
}

void LocalTransport::acceptPendingLinks()
{
    QPointer<LocalTransport> self(this);
    while (self && m_server.hasPendingConnections()) {
        QLocalSocket *socket = m_server.nextPendingConnection();
        // A local peer has no address; name it after our server and a count.
        const QString peer = QStringLiteral("%1 (incoming #%2)").arg(listenAddress()).arg(++m_acceptedCount);
        Link *link = LocalLink::accept(socket, peer, m_limits, m_socketBuffer, this);
        qCDebug(lcTransport).noquote() << "accepted" << peer;
        Q_EMIT incomingLink(link);
    }
}

} // namespace mmpi
