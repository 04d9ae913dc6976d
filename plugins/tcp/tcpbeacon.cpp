#include "tcpbeacon.h"

#include <mmpi/core/logging.h>

#include <QNetworkDatagram>
#include <QPointer>
#include <QUdpSocket>

namespace mmpi {

QList<QHostAddress> TcpBeacon::defaultTargets(const InterfaceFilter &filter)
{
    QList<QHostAddress> targets = filter.broadcastAddresses();
    if (!targets.contains(QHostAddress(QHostAddress::LocalHost)))
        targets << QHostAddress(QHostAddress::LocalHost);
    return targets;
}

TcpBeacon::TcpBeacon(QObject *parent)
    : QObject(parent), m_sendTimer(this)
{
    connect(&m_sendTimer, &QTimer::timeout, this, &TcpBeacon::sendAdvert);
}

TcpBeacon::~TcpBeacon() = default;

Result<void> TcpBeacon::startAdvertising(const TcpAdvert &advert, const QList<QHostAddress> &targets,
                                         quint16 port, int intervalMs)
{
    auto datagram = TcpAdvert::encode(advert);
    if (!datagram)
        return datagram.error();
    stopSending(); // replaced, not withdrawn: no goodbye
    m_advert = advert;
    m_datagram = *datagram;
    m_sender = new QUdpSocket(this);
    appendTargets(targets, port);
    m_sendTimer.start(intervalMs);
    sendAdvert(); // a discoverer that is already listening need not wait an interval
    return success();
}

bool TcpBeacon::addTargets(const QList<QHostAddress> &targets, quint16 port)
{
    if (!m_sender)
        return false;
    appendTargets(targets, port);
    sendAdvert(); // as when it started: the new targets need not wait an interval
    return true;
}

void TcpBeacon::appendTargets(const QList<QHostAddress> &targets, quint16 port)
{
    for (const QHostAddress &target : targets)
        if (!m_targets.contains(std::pair(target, port)))
            m_targets.append({target, port});
}

void TcpBeacon::stopAdvertising()
{
    // A world announcement's goodbye, so browsers drop it now, not when it times out.
    if (m_sender && m_advert.world) {
        TcpAdvert goodbye = m_advert;
        goodbye.world->ttlSeconds = 0;
        if (const auto bytes = TcpAdvert::encode(goodbye)) {
            m_datagram = *bytes;
            sendAdvert();
        }
    }
    stopSending();
}

void TcpBeacon::stopSending()
{
    m_sendTimer.stop();
    m_advert = {};
    m_targets.clear();
    if (m_sender)
        m_sender->deleteLater();
    m_sender = nullptr;
}

Result<void> TcpBeacon::startListening(const QString &worldName, quint16 port)
{
    if (auto bound = bindReceiver(port); !bound)
        return bound;
    m_worldName = worldName;
    m_worlds = false;
    return success();
}

Result<void> TcpBeacon::startListeningForWorlds(quint16 port)
{
    if (auto bound = bindReceiver(port); !bound)
        return bound;
    m_worldName.clear();
    m_worlds = true;
    return success();
}

Result<void> TcpBeacon::bindReceiver(quint16 port)
{
    stopListening();
    auto *receiver = new QUdpSocket(this);
    // Shared, so that discoverers of several worlds on one machine can coexist.
    if (!receiver->bind(QHostAddress::AnyIPv4, port, QUdpSocket::ShareAddress | QUdpSocket::ReuseAddressHint)) {
        const QString reason = receiver->errorString();
        delete receiver;
        return Error(ErrorCode::DiscoveryFailed,
                     QStringLiteral("cannot listen for tcp beacons on UDP port %1: %2").arg(port).arg(reason));
    }
    m_receiver = receiver;
    connect(receiver, &QUdpSocket::readyRead, this, &TcpBeacon::readDatagrams);
    return success();
}

void TcpBeacon::stopListening()
{
    // deleteLater: this may run from a peerDiscovered slot inside readDatagrams().
    if (m_receiver) {
        m_receiver->disconnect(this);
        m_receiver->deleteLater();
    }
    m_receiver = nullptr;
}

void TcpBeacon::sendAdvert()
{
    for (const auto &[target, port] : std::as_const(m_targets)) {
        if (m_sender->writeDatagram(m_datagram, target, port) < 0)
            qCDebug(lcTransport).noquote() << "beacon to" << target.toString() << "port" << port
                                           << "not sent:" << m_sender->errorString();
    }
}

void TcpBeacon::readDatagrams()
{
    QPointer<TcpBeacon> self(this);
    while (self && m_receiver && m_receiver->hasPendingDatagrams()) {
        // One byte over the limit is enough to tell an oversized datagram.
        const QNetworkDatagram datagram = m_receiver->receiveDatagram(TcpAdvert::MaxDatagramSize + 1);
        if (!datagram.isValid())
            return;
        handleDatagram(datagram);
    }
}

void TcpBeacon::handleDatagram(const QNetworkDatagram &datagram)
{
    const QString sender = datagram.senderAddress().toString();
    auto advert = TcpAdvert::decode(datagram.data());
    if (!advert) {
        qCDebug(lcTransport).noquote() << "ignoring a datagram from" << sender << ":"
                                       << advert.error().message;
        return;
    }
    if (m_worlds) {
        if (advert->world)
            Q_EMIT worldAnnounced(*advert, datagram.senderAddress());
        return;
    }
    if (advert->world || advert->worldName != m_worldName)
        return;
    QStringList addresses = advert->addressesFrom(datagram.senderAddress());
    const QString first = addresses.takeFirst();
    Q_EMIT peerDiscovered({advert->worldName, advert->nodeId, first, addresses});
}

} // namespace mmpi
