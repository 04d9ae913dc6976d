// TcpTransport: links over TCP between hosts of an IP network (or processes on
// one host over loopback), and discovery by DNS-SD (through avahi-daemon
// where it runs, AvahiClient, else its own multicast DNS responder,
// MdnsResponder) and by UDP beacon (TcpBeacon). A discovered world's root
// announces the world both ways, each on an instance of its own, beside
// the discovery of its nodes.
// Addresses: "tcp://host:port", "tcp://[v6-host]:port". Options and defaults:
// docs/transports.md.
#pragma once

#include "avahiclient.h"
#include "mdnsresponder.h"
#include "tcpbeacon.h"

#include <mmpi/transport/optionreader.h>
#include <mmpi/transport/transport.h>
#include <mmpi/wire/framedecoder.h>

#include <QTcpServer>

namespace mmpi {

class TcpTransport : public Transport
{
    Q_OBJECT
public:
    explicit TcpTransport(QObject *parent = nullptr);
    ~TcpTransport() override;

    QString name() const override { return QStringLiteral("tcp"); }
    Result<void> configure(const QVariantMap &options) override;

    Result<QString> listen(const QString &address) override;
    QString listenAddress() const override;
    void stopListening() override;
    Result<Link *> connectTo(const QString &address) override;

    bool supportsDiscovery() const override { return true; }
    // Each chunk costs a header read and a wake-up on the way; over loopback
    // 256 KiB chunks carried a 4 MiB message 15-20 % faster than 64 KiB
    // ones, and 512 KiB a 1 MiB broadcast 12 % faster again (ping-pong 6 %)
    // once waiting threads read fragments themselves. A message sent at once
    // goes into the socket whole anyway, so a small one behind it waits for
    // the socket buffer, not for the chunk.
    int preferredChunkSize() const override { return 512 * 1024; }
    // Loopback when it listens on a loopback address, else Wi-Fi.
    LinkMedium expectedLink() const override;
    Result<void> advertise(const PeerAdvert &advert) override;
    Result<void> advertiseTo(const PeerAdvert &advert, const QStringList &contacts) override;
    void stopAdvertising() override;
    Result<void> startDiscovery(const QString &worldName) override;
    void stopDiscovery() override;
    bool supportsServiceDiscovery() const override { return true; }
    // DiscoveryFailed when this node listens on loopback only (other hosts
    // could not reach the address), or the responder cannot open.
    Result<void> publishService(const PeerAdvert &advert) override;
    void stopPublishing() override;
    Result<void> browseServices(const QString &worldName) override;
    void stopBrowsing() override;
    bool supportsWorldAnnouncements() const override { return true; }
    // DiscoveryFailed only when neither the beacon nor DNS-SD can carry it.
    Result<void> announceWorld(const WorldAnnouncement &announcement) override;
    void stopAnnouncingWorld() override;
    Result<void> browseWorlds() override;
    void stopBrowsingWorlds() override;

private:
    struct Options
    {
        QString listenHost = QStringLiteral("127.0.0.1");
        quint16 beaconPort = 47474;
        // World announcements go to a port of their own: a unicast datagram to
        // a port that several sockets share reaches only one of them, and a
        // browser must not take a root's beacons.
        quint16 lobbyPort = 47475;
        QList<QHostAddress> beaconTargets; // empty: TcpBeacon::defaultTargets()
        QStringList interfaces;            // empty: InterfaceFilter's default rule
        int beaconInterval = 500;
        quint16 mdnsPort = MdnsResponder::DefaultPort;
        QString dnsSdBackend = QStringLiteral("auto"); // auto, avahi, builtin
        int connectTimeout = 5000;
        DecoderLimits limits;
        int socketBuffer = OptionReader::DefaultSocketBuffer;
        QByteArray loopbackCongestion = QByteArrayLiteral("cubic");
    };

    // The hosts a beacon lists: the listen host, or when listening on every
    // interface the addresses of the interfaces the filter keeps.
    QList<QHostAddress> advertisedHosts(const QString &listenHost) const;
    Result<void> startBeacon(const PeerAdvert &advert, const QList<QHostAddress> &targets, quint16 port);
    // DiscoveryFailed naming the loopback listen host, if it is one.
    Result<void> checkNotLoopback(const QString &what) const;
    // Whether DNS-SD goes through avahi-daemon (option dnsSdBackend; auto:
    // when it runs); DiscoveryFailed for "avahi" without a daemon.
    Result<bool> useAvahi() const;
    // The kept interfaces that can multicast; DiscoveryFailed when none.
    Result<QList<int>> multicastInterfaceIndexes() const;
    // Where DNS-SD goes: avahi-daemon on these interfaces, or (none) the
    // built-in responder; the errors of useAvahi() and multicastInterfaceIndexes().
    Result<std::optional<QList<int>>> avahiInterfaces() const;
    // `responder` on the interfaces and port the options say.
    MdnsResponder &configured(MdnsResponder &responder) const;
    void handleServiceFound(const DnsSdService &service, const QHostAddress &sender);
    // DNS-SD's part of announcing and browsing worlds.
    Result<void> publishWorld(const DnsSdService &service);
    Result<void> browseWorldServices();
    void handleWorldService(const DnsSdService &service, const QHostAddress &sender, int ttlSeconds);
    void handleWorldServiceGone(DnsSdService::Kind kind, const QString &rootId);
    void handleWorldBeacon(const TcpAdvert &advert, const QHostAddress &sender);
    // The beacon advert or DNS-SD service that says `announcement`.
    Result<TcpAdvert> worldAdvert(const WorldAnnouncement &announcement) const;
    void acceptPendingLinks();
    void handleAcceptError(QAbstractSocket::SocketError error);

    Options m_options;
    QTcpServer m_server;
    TcpBeacon m_beacon;
    MdnsResponder m_mdns;
    AvahiClient m_avahi;
    // World announcements, apart from the node discovery above.
    TcpBeacon m_worldBeacon;
    MdnsResponder m_worldMdns;
    AvahiClient m_worldAvahi;
    bool m_publishedByAvahi = false;
    bool m_browsingByAvahi = false;
    QString m_browsedWorld;
};

} // namespace mmpi
