// TcpBeacon: discovery for the tcp transport. An advertising node sends a small
// UDP datagram to a list of targets (broadcast addresses, 127.0.0.1) every
// interval; the discovering node listens on the beacon port and reports each
// well-formed advert of its world. The root of a discovered world sends its
// world announcement the same way, and a browser listens for those of every
// world (startListeningForWorlds). Datagrams are untrusted input: anything
// malformed is dropped with a debug log. Layout: TcpAdvert.
#pragma once

#include "tcpadvert.h"

#include <mmpi/core/result.h>
#include <mmpi/transport/interfacefilter.h>
#include <mmpi/transport/transport.h>

#include <QHostAddress>
#include <QTimer>

class QNetworkDatagram;
class QUdpSocket;

namespace mmpi {

class TcpBeacon : public QObject
{
    Q_OBJECT
public:
    // Broadcast address of every interface `filter` keeps, and 127.0.0.1
    // (broadcasts do not reach the loopback interface, and nodes on this
    // machine should still find each other).
    static QList<QHostAddress> defaultTargets(const InterfaceFilter &filter);

    explicit TcpBeacon(QObject *parent = nullptr);
    ~TcpBeacon() override;

    // Again while advertising: the new advert replaces the old one.
    Result<void> startAdvertising(const TcpAdvert &advert, const QList<QHostAddress> &targets,
                                  quint16 port, int intervalMs);
    // While advertising: the same advert goes to `targets` on `port` too
    // (a join code's root beside the broadcasts, which keep going). False
    // when not advertising.
    bool addTargets(const QList<QHostAddress> &targets, quint16 port);
    // A world announcement ends with a goodbye (time to live 0).
    void stopAdvertising();
    Result<void> startListening(const QString &worldName, quint16 port);
    // World announcements of every world, instead of one world's adverts.
    Result<void> startListeningForWorlds(quint16 port);
    void stopListening();

Q_SIGNALS:
    void peerDiscovered(const mmpi::PeerAdvert &advert);
    void worldAnnounced(const mmpi::TcpAdvert &advert, const QHostAddress &sender);

private:
    Result<void> bindReceiver(quint16 port);
    void stopSending();
    void appendTargets(const QList<QHostAddress> &targets, quint16 port);
    void sendAdvert();
    void readDatagrams();
    void handleDatagram(const QNetworkDatagram &datagram);

    // Advertising.
    TcpAdvert m_advert;
    QByteArray m_datagram;
    QList<std::pair<QHostAddress, quint16>> m_targets;
    QTimer m_sendTimer;
    QUdpSocket *m_sender = nullptr;
    // Listening.
    QString m_worldName;
    bool m_worlds = false;
    QUdpSocket *m_receiver = nullptr;
};

} // namespace mmpi
