// TcpBeacon: discovery for the tcp transport. An advertising node sends a small
// UDP datagram to a list of targets (broadcast addresses, 127.0.0.1) every
// interval; the discovering node listens on the beacon port and reports each
// well-formed advert of its world. Datagrams are untrusted input: anything
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

    Result<void> startAdvertising(const TcpAdvert &advert, const QList<QHostAddress> &targets,
                                  quint16 port, int intervalMs);
    void stopAdvertising();
    Result<void> startListening(const QString &worldName, quint16 port);
    void stopListening();

Q_SIGNALS:
    void peerDiscovered(const mmpi::PeerAdvert &advert);

private:
    void sendAdvert();
    void readDatagrams();
    void handleDatagram(const QNetworkDatagram &datagram);

    // Advertising.
    QByteArray m_datagram;
    QList<QHostAddress> m_targets;
    quint16 m_targetPort = 0;
    QTimer m_sendTimer;
    QUdpSocket *m_sender = nullptr;
    // Listening.
    QString m_worldName;
    QUdpSocket *m_receiver = nullptr;
};

} // namespace mmpi
