// TcpBeacon: discovery for the tcp transport. An advertising node sends a small
// UDP datagram to a list of targets (broadcast addresses, 127.0.0.1) every
// interval; the discovering node listens on the beacon port and reports each
// well-formed advert of its world. Datagrams are untrusted input: anything
// malformed is dropped with a debug log. Layout: docs/guide/transports.md.
#pragma once

#include <mmpi/core/result.h>
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
    // What one datagram says.
    struct Advert
    {
        QString worldName;
        QString nodeId;
        QString host; // listen host as the node knows it (may be 0.0.0.0)
        quint16 port = 0;
        bool operator==(const Advert &) const = default;
    };
    static constexpr char Magic[] = "MMPB";
    static constexpr quint8 Version = 1;
    static constexpr int MaxDatagramSize = 512;

    // DiscoveryFailed if a field is empty or the datagram would be too large.
    static Result<QByteArray> encode(const Advert &advert);
    // DiscoveryFailed with the reason the datagram is not a valid advert.
    static Result<Advert> decode(QByteArrayView datagram);
    // Broadcast address of every up, broadcast-capable IPv4 interface, and
    // 127.0.0.1 (broadcasts do not reach the loopback interface).
    static QList<QHostAddress> defaultTargets();

    explicit TcpBeacon(QObject *parent = nullptr);
    ~TcpBeacon() override;

    Result<void> startAdvertising(const Advert &advert, const QList<QHostAddress> &targets,
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
