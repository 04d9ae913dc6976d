#include "tcptransport.h"

#include "tcpaddress.h"
#include "tcplink.h"

#include <mmpi/core/logging.h>
#include <mmpi/transport/optionreader.h>

#include <QRegularExpression>
#include <QSysInfo>

namespace mmpi {

namespace {

QList<QHostAddress> parseTargets(OptionReader &reader, const QStringList &texts)
{
    QList<QHostAddress> targets;
    for (const QString &text : texts) {
        const QHostAddress target(text);
        if (target.isNull())
            reader.reject(QStringLiteral("beaconTargets"), QStringLiteral("'%1' is not an IP address").arg(text));
        targets << target;
    }
    return targets;
}

} // namespace

TcpTransport::TcpTransport(QObject *parent)
    : Transport(parent), m_server(this), m_beacon(this), m_mdns(this), m_avahi(this), m_worldBeacon(this),
      m_worldMdns(this), m_worldAvahi(this)
{
    connect(&m_worldBeacon, &TcpBeacon::worldAnnounced, this, &TcpTransport::handleWorldBeacon);
    connect(&m_worldMdns, &MdnsResponder::serviceFound, this,
            [this](const DnsSdService &service, const QHostAddress &sender) {
                handleWorldService(service, sender, int(DnsSdService::WorldTtl));
            });
    // The daemon keeps the records alive itself and says when one goes
    // (ItemRemove): what it found holds until then.
    connect(&m_worldAvahi, &AvahiClient::serviceFound, this,
            [this](const DnsSdService &service, const QHostAddress &sender) {
                handleWorldService(service, sender, AvahiClient::HeldUntilRemoved);
            });
    connect(&m_worldMdns, &MdnsResponder::serviceGone, this, &TcpTransport::handleWorldServiceGone);
    connect(&m_worldAvahi, &AvahiClient::serviceGone, this, &TcpTransport::handleWorldServiceGone);
    connect(&m_avahi, &AvahiClient::serviceFound, this, &TcpTransport::handleServiceFound);
    qRegisterMetaType<mmpi::DnsSdService>();
    connect(&m_mdns, &MdnsResponder::serviceFound, this, &TcpTransport::handleServiceFound);
    connect(&m_server, &QTcpServer::newConnection, this, &TcpTransport::acceptPendingLinks);
    connect(&m_server, &QTcpServer::acceptError, this, &TcpTransport::handleAcceptError);
    connect(&m_beacon, &TcpBeacon::peerDiscovered, this, &Transport::peerDiscovered);
}

TcpTransport::~TcpTransport() = default;

Result<void> TcpTransport::configure(const QVariantMap &options)
{
    OptionReader reader(name(), options);
    Options parsed;
    parsed.listenHost = reader.string(QStringLiteral("listenHost"), parsed.listenHost);
    if (!listenHostAddress(parsed.listenHost))
        reader.reject(QStringLiteral("listenHost"),
                      QStringLiteral("'%1' is not an IP address, 'any' or 'localhost'").arg(parsed.listenHost));
    parsed.beaconPort = quint16(reader.integer(QStringLiteral("beaconPort"), parsed.beaconPort, 1, 65535));
    parsed.lobbyPort = quint16(reader.integer(QStringLiteral("lobbyPort"), parsed.lobbyPort, 1, 65535));
    parsed.beaconTargets = parseTargets(reader, reader.stringList(QStringLiteral("beaconTargets"), {}));
    parsed.interfaces = reader.stringList(QStringLiteral("interfaces"), {});
    for (const QString &interface : std::as_const(parsed.interfaces))
        if (interface.isEmpty() || interface.size() > 64)
            reader.reject(QStringLiteral("interfaces"), QStringLiteral("'%1' is not an interface name").arg(interface));
    parsed.beaconInterval = int(reader.integer(QStringLiteral("beaconInterval"), parsed.beaconInterval, 10, 60000));
    parsed.mdnsPort = quint16(reader.integer(QStringLiteral("mdnsPort"), parsed.mdnsPort, 1, 65535));
    parsed.dnsSdBackend = reader.string(QStringLiteral("dnsSdBackend"), parsed.dnsSdBackend);
    if (!QStringList{QStringLiteral("auto"), QStringLiteral("avahi"), QStringLiteral("builtin")}.contains(
            parsed.dnsSdBackend))
        reader.reject(QStringLiteral("dnsSdBackend"),
                      QStringLiteral("'%1' is not auto, avahi or builtin").arg(parsed.dnsSdBackend));
    parsed.connectTimeout = int(reader.integer(QStringLiteral("connectTimeout"), parsed.connectTimeout, 1, 600000));
    parsed.limits = reader.decoderLimits();
    parsed.socketBuffer = reader.socketBufferSize();
    const QString congestion = reader.string(QStringLiteral("loopbackCongestionControl"),
                                             QString::fromLatin1(parsed.loopbackCongestion));
    // A kernel TCP_CONGESTION name (at most 15 characters), or empty.
    static const QRegularExpression algorithm(QStringLiteral("^[A-Za-z0-9_-]{0,15}$"));
    if (!algorithm.match(congestion).hasMatch())
        reader.reject(QStringLiteral("loopbackCongestionControl"),
                      QStringLiteral("'%1' is not a congestion control name (such as cubic or reno; empty: "
                                     "the system's)").arg(congestion));
    parsed.loopbackCongestion = congestion.toLatin1();
    if (auto ok = reader.finish(); !ok)
        return ok;
    m_options = parsed;
    return success();
}

Result<QString> TcpTransport::listen(const QString &address)
{
    if (m_server.isListening())
        return Error(ErrorCode::ListenFailed, QStringLiteral("already listening at %1").arg(listenAddress()));
    TcpEndpoint endpoint{m_options.listenHost, 0};
    if (!address.isEmpty()) {
        auto parsed = parseTcpAddress(address);
        if (!parsed)
            return parsed.error();
        endpoint = *parsed;
    }
    const auto host = listenHostAddress(endpoint.host);
    if (!host)
        return Error(ErrorCode::BadAddress, QStringLiteral("cannot listen on '%1': the host must be an IP "
                                                           "address, 'any' or 'localhost'").arg(endpoint.host));
    if (!m_server.listen(*host, endpoint.port))
        return Error(ErrorCode::ListenFailed, QStringLiteral("cannot listen on %1: %2")
                                                  .arg(formatTcpAddress(endpoint.host, endpoint.port),
                                                       m_server.errorString()));
    // Accepted sockets inherit the listener's congestion control.
    if (host->isLoopback())
        setTcpCongestionControl(m_server.socketDescriptor(), m_options.loopbackCongestion, listenAddress());
    qCDebug(lcTransport).noquote() << "listening at" << listenAddress();
    return listenAddress();
}

LinkMedium TcpTransport::expectedLink() const
{
    if (m_server.isListening())
        return m_server.serverAddress().isLoopback() ? LinkMedium::loopback() : LinkMedium::wifi();
    const auto host = listenHostAddress(m_options.listenHost);
    return host && host->isLoopback() ? LinkMedium::loopback() : LinkMedium::wifi();
}

QString TcpTransport::listenAddress() const
{
    if (!m_server.isListening())
        return {};
    return formatTcpAddress(m_server.serverAddress(), m_server.serverPort());
}

void TcpTransport::stopListening()
{
    m_server.close();
}

Result<Link *> TcpTransport::connectTo(const QString &address)
{
    auto endpoint = parseTcpAddress(address);
    if (!endpoint)
        return endpoint.error();
    if (endpoint->port == 0)
        return Error(ErrorCode::BadAddress, QStringLiteral("cannot connect to '%1': port 0").arg(address));
    return TcpLink::connectTo(*endpoint, m_options.connectTimeout, m_options.limits, m_options.socketBuffer,
                              m_options.loopbackCongestion, this);
}

QList<QHostAddress> TcpTransport::advertisedHosts(const QString &listenHost) const
{
    const QHostAddress host(listenHost);
    if (!isAnyHost(listenHost))
        return {host};
    QList<QHostAddress> hosts;
    const bool v4Only = host == QHostAddress(QHostAddress::AnyIPv4);
    for (const QHostAddress &address : InterfaceFilter(m_options.interfaces).addresses()) {
        if (hosts.size() < TcpAdvert::MaxHosts && (!v4Only || address.protocol() == QAbstractSocket::IPv4Protocol))
            hosts << address;
    }
    // No usable interface to name: a discoverer takes the sender's address.
    if (hosts.isEmpty())
        hosts << (host.isNull() ? QHostAddress(QHostAddress::AnyIPv4) : host);
    return hosts;
}

Result<void> TcpTransport::advertise(const PeerAdvert &advert)
{
    const QList<QHostAddress> targets = m_options.beaconTargets.isEmpty()
                                            ? TcpBeacon::defaultTargets(InterfaceFilter(m_options.interfaces))
                                            : m_options.beaconTargets;
    return startBeacon(advert, targets, m_options.beaconPort);
}

Result<void> TcpTransport::advertiseTo(const PeerAdvert &advert, const QStringList &contacts)
{
    QList<QHostAddress> targets;
    quint16 port = 0;
    for (const QString &contact : contacts) {
        auto endpoint = parseTcpAddress(contact);
        if (!endpoint)
            return endpoint.error();
        const QHostAddress target(endpoint->host);
        // One beacon port for all: a root listens for beacons on one port.
        if (target.isNull() || endpoint->port == 0 || (port != 0 && endpoint->port != port))
            return Error(ErrorCode::BadAddress,
                         QStringLiteral("'%1' is not a beacon address (tcp://<ip>:<port>, one port for all)")
                             .arg(contact));
        targets << target;
        port = endpoint->port;
    }
    if (targets.isEmpty())
        return Error(ErrorCode::DiscoveryFailed, QStringLiteral("no address to send beacons to"));
    // Beside the broadcasts of an earlier step, which go on: a root that
    // comes late on a network that carries them still hears this node.
    if (m_beacon.addTargets(targets, port))
        return success();
    return startBeacon(advert, targets, port);
}

Result<void> TcpTransport::startBeacon(const PeerAdvert &advert, const QList<QHostAddress> &targets, quint16 port)
{
    auto endpoint = parseTcpAddress(advert.address.isEmpty() ? listenAddress() : advert.address);
    if (!endpoint)
        return endpoint.error();
    const QList<QHostAddress> hosts = advertisedHosts(endpoint->host);
    qCDebug(lcTransport).noquote() << "beacon of" << advert.nodeId << "lists" << hosts << "to" << targets
                                   << "port" << port;
    const TcpAdvert beacon{advert.worldName, advert.nodeId, hosts, endpoint->port, std::nullopt};
    return m_beacon.startAdvertising(beacon, targets, port, m_options.beaconInterval);
}

void TcpTransport::stopAdvertising()
{
    m_beacon.stopAdvertising();
}

Result<void> TcpTransport::startDiscovery(const QString &worldName)
{
    return m_beacon.startListening(worldName, m_options.beaconPort);
}

void TcpTransport::stopDiscovery()
{
    m_beacon.stopListening();
}

Result<void> TcpTransport::checkNotLoopback(const QString &what) const
{
    const QString host = m_server.isListening() ? m_server.serverAddress().toString() : m_options.listenHost;
    const auto address = listenHostAddress(host);
    if (address && address->isLoopback())
        return Error(ErrorCode::DiscoveryFailed,
                     QStringLiteral("no DNS-SD %1: this node listens on loopback (%2), which other devices cannot "
                                    "reach (tcp option listenHost 'any' or an interface's address)")
                         .arg(what, host));
    return success();
}

Result<bool> TcpTransport::useAvahi() const
{
    if (m_options.dnsSdBackend == QLatin1String("builtin"))
        return false;
    const bool available = AvahiClient::isAvailable();
    if (!available && m_options.dnsSdBackend == QLatin1String("avahi"))
        return Error(ErrorCode::DiscoveryFailed, QStringLiteral("no avahi-daemon running on the system D-Bus "
                                                                "(tcp option dnsSdBackend 'avahi')"));
    return available;
}

Result<std::optional<QList<int>>> TcpTransport::avahiInterfaces() const
{
    const auto avahi = useAvahi();
    if (!avahi)
        return avahi.error();
    if (!*avahi)
        return std::optional<QList<int>>();
    const auto indexes = multicastInterfaceIndexes();
    if (!indexes)
        return indexes.error();
    return std::optional<QList<int>>(*indexes);
}

MdnsResponder &TcpTransport::configured(MdnsResponder &responder) const
{
    responder.setInterfaces(InterfaceFilter(m_options.interfaces));
    responder.setPort(m_options.mdnsPort);
    return responder;
}

Result<QList<int>> TcpTransport::multicastInterfaceIndexes() const
{
    QList<int> indexes;
    for (const QNetworkInterface &interface : InterfaceFilter(m_options.interfaces).interfaces())
        if (interface.flags() & QNetworkInterface::CanMulticast)
            indexes << interface.index();
    if (indexes.isEmpty())
        return Error(ErrorCode::DiscoveryFailed, QStringLiteral("no interface for multicast DNS: the interface "
                                                                "rule keeps none that can multicast"));
    return indexes;
}

Result<void> TcpTransport::publishService(const PeerAdvert &advert)
{
    if (auto ok = checkNotLoopback(QStringLiteral("adverts")); !ok)
        return ok;
    auto endpoint = parseTcpAddress(advert.address.isEmpty() ? listenAddress() : advert.address);
    if (!endpoint)
        return endpoint.error();
    DnsSdService service;
    service.worldHash = DnsSdService::hashOf(advert.worldName);
    service.nodeId = advert.nodeId;
    service.sizeWanted = advert.sizeWanted;
    service.hosts = advertisedHosts(endpoint->host).mid(0, DnsSdService::MaxHosts);
    service.port = endpoint->port;
    stopPublishing();
    const auto avahi = avahiInterfaces();
    if (!avahi)
        return avahi.error();
    if (*avahi) {
        if (auto published = m_avahi.publish(service, **avahi); !published)
            return published;
        m_publishedByAvahi = true;
        qCDebug(lcTransport).noquote() << "DNS-SD: publishing" << advert.nodeId << "through avahi-daemon with"
                                       << service.hosts << "port" << service.port;
        return success();
    }
    if (auto published = configured(m_mdns).publish(service); !published)
        return published;
    qCDebug(lcTransport).noquote() << "DNS-SD: publishing" << advert.nodeId << "with" << service.hosts << "port"
                                   << service.port << "on" << m_mdns.interfaceNames();
    return success();
}

void TcpTransport::stopPublishing()
{
    if (m_publishedByAvahi)
        m_avahi.unpublish();
    m_publishedByAvahi = false;
    m_mdns.unpublish();
}

Result<void> TcpTransport::browseServices(const QString &worldName)
{
    if (auto ok = checkNotLoopback(QStringLiteral("browsing")); !ok)
        return ok;
    stopBrowsing();
    const auto avahi = avahiInterfaces();
    if (!avahi)
        return avahi.error();
    if (*avahi) {
        if (auto browsing = m_avahi.browse(DnsSdService::hashOf(worldName), **avahi); !browsing)
            return browsing;
        m_browsingByAvahi = true;
        m_browsedWorld = worldName;
        qCDebug(lcTransport).noquote() << "DNS-SD: browsing for world" << worldName << "through avahi-daemon";
        return success();
    }
    if (auto browsing = configured(m_mdns).browse(DnsSdService::hashOf(worldName)); !browsing)
        return browsing;
    m_browsedWorld = worldName;
    qCDebug(lcTransport).noquote() << "DNS-SD: browsing for world" << worldName << "on" << m_mdns.interfaceNames();
    return success();
}

void TcpTransport::stopBrowsing()
{
    if (m_browsingByAvahi)
        m_avahi.stopBrowsing();
    m_browsingByAvahi = false;
    m_mdns.stopBrowsing();
    m_browsedWorld.clear();
}

void TcpTransport::handleServiceFound(const DnsSdService &service, const QHostAddress &sender)
{
    if (m_browsedWorld.isEmpty() || !service.transports.contains(name()))
        return;
    QStringList addresses = service.addressesFrom(sender);
    if (addresses.isEmpty())
        return;
    const QString first = addresses.takeFirst();
    Q_EMIT serviceDiscovered({m_browsedWorld, service.nodeId, first, addresses, service.sizeWanted});
}

Result<TcpAdvert> TcpTransport::worldAdvert(const WorldAnnouncement &announcement) const
{
    const QString address = announcement.addresses.isEmpty() ? listenAddress() : announcement.addresses.first();
    auto endpoint = parseTcpAddress(address);
    if (!endpoint)
        return endpoint.error();
    // Three beacons may go astray before a browser lets the world go.
    const int ttl = std::max(2, (3 * m_options.beaconInterval + 999) / 1000);
    const QString host = QSysInfo::machineHostName().left(TcpAdvert::MaxHostNameSize);
    return TcpAdvert{announcement.worldName, announcement.rootId,
                     advertisedHosts(endpoint->host).mid(0, TcpAdvert::MaxHosts), endpoint->port,
                     TcpAdvert::World{host, announcement.joined, announcement.wanted, ttl}};
}

Result<void> TcpTransport::announceWorld(const WorldAnnouncement &announcement)
{
    const auto advert = worldAdvert(announcement);
    if (!advert)
        return advert.error();
    const QList<QHostAddress> targets = m_options.beaconTargets.isEmpty()
                                            ? TcpBeacon::defaultTargets(InterfaceFilter(m_options.interfaces))
                                            : m_options.beaconTargets;
    const auto beacon = m_worldBeacon.startAdvertising(*advert, targets, m_options.lobbyPort, m_options.beaconInterval);
    DnsSdService service;
    service.kind = DnsSdService::Kind::World;
    service.worldHash = DnsSdService::hashOf(advert->worldName);
    service.worldName = advert->worldName;
    service.nodeId = advert->nodeId;
    service.hostLabel = advert->world->hostName;
    service.joined = advert->world->joined;
    service.sizeWanted = advert->world->wanted;
    service.hosts = advert->hosts;
    service.port = advert->port;
    const auto dnsSd = publishWorld(service);
    if (!dnsSd)
        qCDebug(lcTransport).noquote() << "world" << advert->worldName << "not announced by DNS-SD:"
                                       << dnsSd.error().message;
    if (!beacon && !dnsSd)
        return Error(ErrorCode::DiscoveryFailed, QStringLiteral("cannot announce world '%1': %2; %3")
                                                     .arg(advert->worldName, beacon.error().message,
                                                          dnsSd.error().message));
    return success();
}

Result<void> TcpTransport::publishWorld(const DnsSdService &service)
{
    if (auto ok = checkNotLoopback(QStringLiteral("world announcement")); !ok)
        return ok;
    const auto avahi = avahiInterfaces();
    if (!avahi)
        return avahi.error();
    qCDebug(lcTransport).noquote() << "DNS-SD: announcing world" << service.worldName
                                   << (*avahi ? "through avahi-daemon" : "");
    return *avahi ? m_worldAvahi.publish(service, **avahi) : configured(m_worldMdns).publish(service);
}

void TcpTransport::stopAnnouncingWorld()
{
    m_worldBeacon.stopAdvertising();
    m_worldMdns.unpublish();
    m_worldAvahi.unpublish();
}

Result<void> TcpTransport::browseWorlds()
{
    stopBrowsingWorlds();
    const auto beacon = m_worldBeacon.startListeningForWorlds(m_options.lobbyPort);
    const auto dnsSd = browseWorldServices();
    if (!dnsSd)
        qCDebug(lcTransport).noquote() << "worlds not browsed by DNS-SD:" << dnsSd.error().message;
    if (!beacon && !dnsSd)
        return Error(ErrorCode::DiscoveryFailed, QStringLiteral("cannot browse worlds: %1; %2")
                                                     .arg(beacon.error().message, dnsSd.error().message));
    return success();
}

Result<void> TcpTransport::browseWorldServices()
{
    // Browsing needs no address of this node's own, so loopback is no reason to refuse.
    const auto avahi = avahiInterfaces();
    if (!avahi)
        return avahi.error();
    qCDebug(lcTransport) << "DNS-SD: browsing worlds" << (*avahi ? "through avahi-daemon" : "");
    return *avahi ? m_worldAvahi.browse({}, **avahi, DnsSdService::Kind::World)
                  : configured(m_worldMdns).browse({}, DnsSdService::Kind::World);
}

void TcpTransport::stopBrowsingWorlds()
{
    m_worldBeacon.stopListening();
    m_worldMdns.stopBrowsing();
    m_worldAvahi.stopBrowsing();
}

void TcpTransport::handleWorldService(const DnsSdService &service, const QHostAddress &sender, int ttlSeconds)
{
    if (service.kind != DnsSdService::Kind::World || !service.transports.contains(name()))
        return;
    Q_EMIT worldAnnounced({service.worldName, service.nodeId, service.hostLabel, service.addressesFrom(sender),
                           service.joined, service.sizeWanted, WorldAnnouncement::Channel::DnsSd, ttlSeconds});
}

void TcpTransport::handleWorldServiceGone(DnsSdService::Kind kind, const QString &rootId)
{
    if (kind != DnsSdService::Kind::World)
        return;
    WorldAnnouncement gone;
    gone.rootId = rootId;
    gone.channel = WorldAnnouncement::Channel::DnsSd;
    Q_EMIT worldAnnounced(gone);
}

void TcpTransport::handleWorldBeacon(const TcpAdvert &advert, const QHostAddress &sender)
{
    const TcpAdvert::World &world = *advert.world;
    Q_EMIT worldAnnounced({advert.worldName, advert.nodeId, world.hostName, advert.addressesFrom(sender), world.joined,
                           world.wanted, WorldAnnouncement::Channel::Beacon, world.ttlSeconds});
}

void TcpTransport::acceptPendingLinks()
{
    QPointer<TcpTransport> self(this);
    while (self && m_server.hasPendingConnections()) {
        QTcpSocket *socket = m_server.nextPendingConnection();
        Link *link = TcpLink::accept(socket, m_options.limits, m_options.socketBuffer, m_options.loopbackCongestion,
                                     this);
        qCDebug(lcTransport).noquote() << "accepted a link from" << link->peerAddress();
        Q_EMIT incomingLink(link);
    }
}

void TcpTransport::handleAcceptError(QAbstractSocket::SocketError)
{
    Q_EMIT errorOccurred(Error(ErrorCode::LinkError,
                               QStringLiteral("cannot accept a link at %1: %2")
                                   .arg(listenAddress(), m_server.errorString())));
}

} // namespace mmpi
