#include "bttransport.h"

#include "btaddress.h"
#include "btlink.h"
#ifdef MMPI_BLUEZ_BONDING
#include "bluezbonding.h"
#endif
#include "kernelrfcommopener.h"
#include "qtbtscanner.h"
#include "qtsocketopener.h"

#include <mmpi/core/logging.h>
#include <mmpi/transport/optionreader.h>

#include <QBluetoothAddress>
#include <QBluetoothLocalDevice>

namespace mmpi {

namespace {

constexpr auto ForceVersionVariable = "BLUETOOTH_FORCE_DBUS_LE_VERSION";

int securityLevel(OptionReader &reader)
{
    const QString value = reader.string(QStringLiteral("security"), QStringLiteral("encrypt"));
    if (value == u"none")
        return 1;
    if (value == u"encrypt")
        return 2;
    if (value == u"mitm")
        return 3;
    reader.reject(QStringLiteral("security"), QStringLiteral("'%1' is not none, encrypt or mitm").arg(value));
    return 2;
}

QList<quint64> deviceList(OptionReader &reader, const QString &key)
{
    QList<quint64> devices;
    const QStringList texts = reader.stringList(key, {});
    for (const QString &text : texts) {
        auto device = parseBtDevice(text.trimmed());
        if (!device)
            reader.reject(key, device.error().message);
        else
            devices << *device;
    }
    return devices;
}

QString serverErrorText(QBluetoothServer::Error error)
{
    switch (error) {
    case QBluetoothServer::Error::PoweredOffError:
        return QStringLiteral("the Bluetooth adapter is powered off");
    case QBluetoothServer::Error::InputOutputError:
        return QStringLiteral("input/output error (channel in use?)");
    case QBluetoothServer::Error::ServiceAlreadyRegisteredError:
        return QStringLiteral("the service is already registered");
    case QBluetoothServer::Error::UnsupportedProtocolError:
        return QStringLiteral("RFCOMM is not supported here");
    case QBluetoothServer::Error::MissingPermissionsError:
        return QStringLiteral("missing Bluetooth permissions");
    default:
        return QStringLiteral("unknown error (no Bluetooth adapter?)");
    }
}

} // namespace

void BtTransport::preferKernelSockets()
{
    // With bluetoothd >= 5.46 Qt 6.4 would use its D-Bus client socket, which
    // registers a client profile for the UUID and fails ("UUID already
    // registered") on a node that also serves it. An app's own value wins.
    if (!qEnvironmentVariableIsSet(ForceVersionVariable))
        qputenv(ForceVersionVariable, "5.45");
}

BtTransport::BtTransport(QObject *parent)
    : Transport(parent)
{
    preferKernelSockets();
    m_options.peerCache = BtPeerCache::defaultPath();
#ifndef Q_OS_LINUX
    m_options.connector = Connector::Qt;
#endif
}

BtTransport::~BtTransport()
{
    stopDiscovery();
    stopAdvertising();
}

Result<void> BtTransport::configure(const QVariantMap &options)
{
    OptionReader reader(name(), options);
    Options parsed = m_options;
    const QString adapter = reader.string(QStringLiteral("adapter"), QString());
    if (!adapter.isEmpty()) {
        auto device = parseBtDevice(adapter);
        if (!device)
            reader.reject(QStringLiteral("adapter"), device.error().message);
        parsed.adapter = device ? *device : 0;
    }
    parsed.expectedPeers = int(reader.integer(QStringLiteral("expectedPeers"), 0, 0, 4095));
    parsed.knownPeers = deviceList(reader, QStringLiteral("knownPeers"));
    const QString cache = reader.string(QStringLiteral("peerCache"), QString());
    parsed.peerCache = cache.isEmpty() ? BtPeerCache::defaultPath() : cache == u"none" ? QString() : cache;
    parsed.connectTimeout = int(reader.integer(QStringLiteral("connectTimeout"), 20000, 100, 600000));
    parsed.policy.retries = int(reader.integer(QStringLiteral("connectRetries"), 4, 0, 20));
    parsed.policy.firstBackoffMs = int(reader.integer(QStringLiteral("retryBackoff"), 300, 10, 60000));
    parsed.policy.maxBackoffMs = std::max(parsed.policy.firstBackoffMs, 8 * parsed.policy.firstBackoffMs);
    parsed.maxLinks = int(reader.integer(QStringLiteral("maxLinks"), 7, 1, 100));
    parsed.securityLevel = securityLevel(reader);
    parsed.settleTime = int(reader.integer(QStringLiteral("settleTime"), 500, 0, 60000));
    const QString connector = reader.string(QStringLiteral("connector"),
                                            m_options.connector == Connector::Kernel ? QStringLiteral("kernel")
                                                                                      : QStringLiteral("qt"));
    if (connector == u"kernel")
        parsed.connector = Connector::Kernel;
    else if (connector == u"qt")
        parsed.connector = Connector::Qt;
    else
        reader.reject(QStringLiteral("connector"), QStringLiteral("'%1' is not kernel or qt").arg(connector));
    const QString visibility = reader.string(QStringLiteral("visibility"), QStringLiteral("discoverable"));
    if (visibility == u"discoverable" || visibility == u"keep")
        parsed.makeDiscoverable = visibility == u"discoverable";
    else
        reader.reject(QStringLiteral("visibility"),
                      QStringLiteral("'%1' is not discoverable or keep").arg(visibility));
    const QString bonding = reader.string(QStringLiteral("bonding"), QStringLiteral("allow"));
    if (bonding == u"allow" || bonding == u"keep")
        parsed.bond = bonding == u"allow";
    else
        reader.reject(QStringLiteral("bonding"), QStringLiteral("'%1' is not allow or keep").arg(bonding));
    parsed.limits = reader.decoderLimits();
    if (auto ok = reader.finish(); !ok)
        return ok;
    m_options = parsed;
    return success();
}

quint64 BtTransport::localDevice() const
{
    if (m_options.adapter != 0)
        return m_options.adapter;
    return QBluetoothLocalDevice().address().toUInt64();
}

Result<QString> BtTransport::listen(const QString &address)
{
    if (m_server && m_server->isListening())
        return Error(ErrorCode::ListenFailed, QStringLiteral("already listening at %1").arg(listenAddress()));
    BtEndpoint endpoint{m_options.adapter, 0};
    if (!address.isEmpty()) {
        auto parsed = parseBtAddress(address, true);
        if (!parsed)
            return parsed.error();
        endpoint = *parsed;
    }
    delete m_server;
    m_server = new QBluetoothServer(QBluetoothServiceInfo::RfcommProtocol, this);
    // One pending connection at a time (Android's default too): incoming
    // connects are taken in turn.
    m_server->setMaxPendingConnections(1);
    QBluetooth::SecurityFlags flags = QBluetooth::Security::NoSecurity;
    if (m_options.securityLevel >= 2)
        flags = QBluetooth::Security::Authentication | QBluetooth::Security::Encryption;
    if (m_options.securityLevel >= 3)
        flags |= QBluetooth::Security::Secure;
    m_server->setSecurityFlags(flags);
    connect(m_server, &QBluetoothServer::newConnection, this, &BtTransport::acceptPendingLinks);
    connect(m_server, &QBluetoothServer::errorOccurred, this, [this](QBluetoothServer::Error error) {
        Q_EMIT errorOccurred(Error(ErrorCode::LinkError, QStringLiteral("bluetooth server at %1: %2")
                                                              .arg(listenAddress(), serverErrorText(error))));
    });
    const QBluetoothAddress local = endpoint.device ? QBluetoothAddress(endpoint.device) : QBluetoothAddress();
    if (!m_server->listen(local, endpoint.channel)) {
        const QString why = serverErrorText(m_server->error());
        delete m_server;
        m_server = nullptr;
        return Error(ErrorCode::ListenFailed, QStringLiteral("cannot listen on RFCOMM channel %1 of adapter %2: %3")
                                                  .arg(endpoint.channel)
                                                  .arg(endpoint.device ? formatBtDevice(endpoint.device)
                                                                       : QStringLiteral("(default)"),
                                                       why));
    }
    if (endpoint.device == 0)
        m_options.adapter = localDevice();
    qCInfo(lcTransport).noquote() << "bluetooth: listening at" << listenAddress();
    if (m_options.bond)
        allowBonding();
    if (m_options.makeDiscoverable)
        makeReachable();
    return listenAddress();
}

// BlueZ (with kernel connection control) pages in only devices it has
// paired with unless the adapter is discoverable: a stranger could neither
// find this node by inquiry nor open SDP or RFCOMM to it. A server of a world
// that forms by discovery must therefore be discoverable (on Android this asks
// the user). Asynchronous; bluetoothd ends it after its DiscoverableTimeout
// (180 s by default), when the world has long formed and peers have paired.
void BtTransport::makeReachable()
{
    if (!m_local)
        m_local = new QBluetoothLocalDevice(QBluetoothAddress(m_options.adapter), this);
    if (!m_local->isValid()) {
        qCWarning(lcTransport).noquote() << "bluetooth: no local adapter" << formatBtDevice(m_options.adapter)
                                         << "to make discoverable";
        return;
    }
    if (m_local->hostMode() == QBluetoothLocalDevice::HostDiscoverable)
        return;
    qCInfo(lcTransport).noquote() << "bluetooth: making adapter" << formatBtDevice(m_options.adapter)
                                  << "discoverable (option visibility)";
    m_local->setHostMode(QBluetoothLocalDevice::HostDiscoverable);
}

// Before the first link pairs: a pairing made while the adapter is not
// pairable is forgotten when the link drops (bluezbonding.h).
void BtTransport::allowBonding()
{
#ifdef MMPI_BLUEZ_BONDING
    if (m_bonding)
        return;
    m_bonding = std::make_unique<BluezBonding>(m_options.adapter);
    switch (m_bonding->outcome()) {
    case BluezBonding::Outcome::AlreadyBondable:
        qCDebug(lcTransport).noquote() << "bluetooth: adapter" << m_bonding->detail() << "is pairable: links bond";
        return;
    case BluezBonding::Outcome::MadeBondable:
        qCInfo(lcTransport).noquote() << "bluetooth: made adapter" << m_bonding->detail()
                                      << "pairable while this world runs, so that its links bond (option bonding)";
        return;
    case BluezBonding::Outcome::Unavailable:
    case BluezBonding::Outcome::Refused:
        qCWarning(lcTransport).noquote()
            << "bluetooth: cannot make the adapter pairable (" << m_bonding->detail()
            << "): links will not bond, and a device back in range must pair again, which BlueZ refuses by default "
               "(docs/guide/bluetooth.md, \"Bonding\")";
        return;
    }
#endif
}

QString BtTransport::listenAddress() const
{
    if (!m_server || !m_server->isListening())
        return {};
    return formatBtAddress({m_options.adapter, quint8(m_server->serverPort())});
}

void BtTransport::stopListening()
{
    stopAdvertising();
    if (m_server)
        m_server->close();
}

Error BtTransport::linkLimitError() const
{
    return {ErrorCode::ConnectFailed,
            QStringLiteral("this device already has %1 Bluetooth links, the most it may have (a piconet allows 7 "
                           "active links per device; option maxLinks): a world over Bluetooth holds at most %2 nodes")
                .arg(m_links.size())
                .arg(m_options.maxLinks + 1)};
}

BtSocketOpener *BtTransport::makeOpener() const
{
    if (m_options.connector == Connector::Qt)
        return new QtSocketOpener(m_options.connectTimeout);
    return new KernelRfcommOpener(m_options.adapter, m_options.securityLevel, m_options.connectTimeout);
}

Result<Link *> BtTransport::connectTo(const QString &address)
{
    auto endpoint = parseBtAddress(address);
    if (!endpoint)
        return endpoint.error();
    if (m_links.size() >= m_options.maxLinks)
        return linkLimitError();
    auto *dialer = new BtDialer(makeOpener(), m_options.policy, m_reached.contains(endpoint->device));
    BtLink *link = BtLink::dial(*endpoint, dialer, m_options.limits, this);
    connect(link, &BtLink::peerReached, this, [this](quint64 device) { m_reached.insert(device); });
    track(link);
    return link;
}

void BtTransport::track(Link *link)
{
    m_links.insert(link);
    auto forget = [this, link] { m_links.remove(link); };
    connect(link, &QObject::destroyed, this, forget);
    connect(link, &Link::stateChanged, this, [forget](Link::State state) {
        if (state == Link::State::Closed)
            forget();
    });
}

void BtTransport::acceptPendingLinks()
{
    QPointer<BtTransport> self(this);
    while (self && m_server && m_server->hasPendingConnections()) {
        QBluetoothSocket *socket = m_server->nextPendingConnection();
        if (m_links.size() >= m_options.maxLinks) {
            const Error error = linkLimitError();
            qCWarning(lcTransport).noquote() << "bluetooth: refusing a link from"
                                             << socket->peerAddress().toString() << ":" << error.message;
            socket->abort();
            socket->deleteLater();
            Q_EMIT errorOccurred(error);
            continue;
        }
        BtLink *link = BtLink::accept(socket, m_options.limits, this);
        m_reached.insert(link->peerDevice());
        track(link);
        qCDebug(lcTransport).noquote() << "bluetooth: accepted a link from" << link->peerAddress();
        Q_EMIT incomingLink(link);
    }
}

Result<void> BtTransport::advertise(const PeerAdvert &advert)
{
    if (!m_server || !m_server->isListening())
        return Error(ErrorCode::DiscoveryFailed, QStringLiteral("cannot advertise mmpiNode: not listening"));
    if (advert.worldName.isEmpty() || advert.nodeId.isEmpty() || advert.worldName.size() > 255
        || advert.nodeId.size() > 255)
        return Error(ErrorCode::DiscoveryFailed,
                     QStringLiteral("cannot advertise mmpiNode: world name and node id must be 1-255 characters"));
    stopAdvertising();
    m_service = btServiceInfo(advert.worldName, advert.nodeId, quint8(m_server->serverPort()));
    if (!m_service.registerService(QBluetoothAddress(m_options.adapter)))
        return Error(ErrorCode::DiscoveryFailed,
                     QStringLiteral("cannot register the mmpiNode SDP service on adapter %1 (is bluetoothd running "
                                    "and the adapter powered?)")
                         .arg(formatBtDevice(m_options.adapter)));
    qCInfo(lcTransport).noquote() << "bluetooth: advertising world" << advert.worldName << "node" << advert.nodeId
                                  << "at" << listenAddress();
    return success();
}

void BtTransport::stopAdvertising()
{
    if (m_service.isRegistered())
        m_service.unregisterService();
}

Result<void> BtTransport::startDiscovery(const QString &worldName)
{
    stopDiscovery();
    m_discoveryWorld = worldName;
    m_scanner = new QtBtScanner(m_options.adapter, this);
    m_discovery = new BtDiscovery(m_scanner, this);
    BtDiscovery::Settings settings;
    settings.expectedPeers = m_options.expectedPeers;
    settings.settleMs = m_options.settleTime;
    m_discovery->setSettings(settings);
    BtPeerCache cache(m_options.peerCache);
    QList<quint64> remembered = m_options.knownPeers;
    for (quint64 device : cache.devices(worldName))
        if (!remembered.contains(device))
            remembered << device;
    m_discovery->setRemembered(remembered);
    connect(m_discovery, &BtDiscovery::candidateFound, this, [this](const BtServiceRecord &record) {
        Q_EMIT peerDiscovered({record.worldName, record.nodeId, formatBtAddress({record.device, record.channel}), {}});
    });
    connect(m_discovery, &BtDiscovery::completed, this, [this] {
        BtPeerCache cache(m_options.peerCache);
        for (const BtServiceRecord &record : m_discovery->candidates())
            cache.remember(m_discoveryWorld, record.device);
    });
    connect(m_discovery, &BtDiscovery::progressChanged, this, [this](const BtDiscovery::Progress &p) {
        qCInfo(lcTransport).noquote() << "bluetooth: discovery progress: devices seen" << p.devicesSeen
                                      << "services found" << p.servicesFound << "seconds left" << p.secondsLeft;
        Q_EMIT discoveryProgress(p.devicesSeen, p.servicesFound, p.secondsLeft);
    });
    connect(m_discovery, &BtDiscovery::failed, this, &Transport::errorOccurred);
    if (!remembered.isEmpty())
        qCInfo(lcTransport).noquote() << "bluetooth: asking" << remembered.size() << "remembered device(s) first";
    m_discovery->start(worldName);
    return success();
}

void BtTransport::stopDiscovery()
{
    if (m_discovery) {
        m_discovery->stop();
        // Remembered so the next formation of this group skips the inquiry.
        BtPeerCache cache(m_options.peerCache);
        for (const BtServiceRecord &record : m_discovery->candidates())
            cache.remember(m_discoveryWorld, record.device);
    }
    delete m_discovery;
    m_discovery = nullptr;
    delete m_scanner;
    m_scanner = nullptr;
}

} // namespace mmpi
