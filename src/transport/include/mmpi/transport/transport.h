// mmpi::Transport: one way of reaching peers (local sockets, TCP, Bluetooth
// RFCOMM, simulated radio). It listens, connects, and optionally advertises and
// discovers `mmpiNode` services. Implementations are Qt plugins loaded through
// TransportRegistry. A Transport lives in the progress thread.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/transport/link.h>
#include <mmpi/transport/linkmedium.h>

#include <QObject>
#include <QStringList>
#include <QVariantMap>

namespace mmpi {

// What a node advertises so a root can find it.
struct PeerAdvert
{
    QString worldName;
    QString nodeId;  // stable identity of the node for this run (a UUID)
    QString address; // where the node listens, as the discoverer can reach it
    // Further addresses of the node (one with several interfaces), tried in
    // this order when `address` cannot be reached.
    QStringList alternateAddresses;
    // The world size the node was started for (DNS-SD's TXT record carries
    // it; 0 where the advert does not say).
    int sizeWanted = 0;
    bool operator==(const PeerAdvert &) const = default;
};

// What the root of a discovered world tells devices that have not chosen
// a world yet (Transport::announceWorld), and what a browser hears of it.
struct WorldAnnouncement
{
    // How an announcement came: a transport may carry it more than one way.
    enum class Channel { DnsSd, Beacon };

    QString worldName;
    QString rootId;   // the root's node id: one announcement per root
    QString hostName; // the root's host, for a person to tell roots apart
    // Where the root listens, best first, in the transport's terms.
    QStringList addresses;
    int joined = 0; // nodes in so far, the root included
    int wanted = 0; // the size the root expects
    Channel channel = Channel::DnsSd;
    // How long it holds unless heard again; 0: the root withdrew it.
    int ttlSeconds = 0;
    bool operator==(const WorldAnnouncement &) const = default;
};

class Transport : public QObject
{
    Q_OBJECT
public:
    explicit Transport(QObject *parent = nullptr);
    ~Transport() override;

    // Plugin name, e.g. "tcp".
    virtual QString name() const = 0;

    // Transport-specific options (see docs/transports.md). Unknown keys and
    // wrong value types are a BadConfiguration error naming the key.
    virtual Result<void> configure(const QVariantMap &options);

    // Accept links at `address` (empty: choose one). Returns the address peers
    // should use, e.g. "tcp://127.0.0.1:40123" or "local://mmpi-1234-abcd".
    virtual Result<QString> listen(const QString &address) = 0;
    virtual QString listenAddress() const = 0;
    virtual void stopListening() = 0;

    // Start connecting. The returned link (parented to this transport; the
    // caller may reparent or delete it) reports Connected, or an error and
    // Closed. A malformed address is an immediate BadAddress error.
    virtual Result<Link *> connectTo(const QString &address) = 0;

    // The chunk size a large message is best cut into on this transport's
    // links (WorldConfig::chunkSize 0 takes it); 0: no preference.
    virtual int preferredChunkSize() const { return 0; }

    // The medium this transport's links run over, as configured (asked after
    // configure() and listen()). Default: Wi-Fi, the medium a transport that
    // reaches other devices most likely has.
    virtual LinkMedium expectedLink() const;

    // Discovery. Default: not supported (DiscoveryFailed error).
    virtual bool supportsDiscovery() const;
    // Announce this node until stopAdvertising(); `advert.address` is the
    // listen address (a discoverer may substitute the host it saw).
    virtual Result<void> advertise(const PeerAdvert &advert);
    // As advertise(), but the adverts go only to `contacts`, a discoverer's
    // own addresses in the transport's terms (tcp: "tcp://<ip>:<beacon
    // port>", from a join code), for networks that carry no broadcast.
    // While advertise() runs they go to `contacts` as well as to where they
    // went: a discovery step keeps going once the next one starts.
    // Default: DiscoveryFailed.
    virtual Result<void> advertiseTo(const PeerAdvert &advert, const QStringList &contacts);
    virtual void stopAdvertising();
    // Report adverts of `worldName` through peerDiscovered() until
    // stopDiscovery(). The same node may be reported more than once.
    virtual Result<void> startDiscovery(const QString &worldName);
    virtual void stopDiscovery();

    // Service discovery (DNS-SD over multicast DNS, RFC 6762/6763), a way
    // of its own beside advertise()/startDiscovery(), so that a world can
    // try one and then the other (World::DiscoveryStep). Default: not
    // offered (publishService() and browseServices() fail with
    // DiscoveryFailed). Nodes found are reported through serviceDiscovered().
    virtual bool supportsServiceDiscovery() const;
    // Publish this node as a service of `advert.worldName` until stopPublishing().
    virtual Result<void> publishService(const PeerAdvert &advert);
    virtual void stopPublishing();
    // Report published nodes of `worldName` through serviceDiscovered()
    // until stopBrowsing(). The same node may be reported more than once.
    virtual Result<void> browseServices(const QString &worldName);
    virtual void stopBrowsing();

    // World announcements, for a lobby listing the worlds nearby. The root
    // of a discovered world announces it until stopAnnouncingWorld(); a
    // later call with the same rootId updates it (joined). A browser hears
    // every world announced, of any name, through worldAnnounced() until
    // stopBrowsingWorlds(); a withdrawn one comes with ttlSeconds 0.
    // Default: not offered (DiscoveryFailed).
    virtual bool supportsWorldAnnouncements() const;
    virtual Result<void> announceWorld(const WorldAnnouncement &announcement);
    virtual void stopAnnouncingWorld();
    virtual Result<void> browseWorlds();
    virtual void stopBrowsingWorlds();

Q_SIGNALS:
    // A peer connected to us. The receiver takes ownership of the link.
    void incomingLink(mmpi::Link *link);
    void peerDiscovered(const mmpi::PeerAdvert &advert);
    // A node found by service discovery (browseServices()).
    void serviceDiscovered(const mmpi::PeerAdvert &advert);
    // A world announced (browseWorlds()); heard again at every refresh.
    void worldAnnounced(const mmpi::WorldAnnouncement &announcement);
    // How discovery is going, for a lobby (it takes 10-20 s over Bluetooth):
    // devices seen (any service), nodes of the world found, seconds until the
    // current search round ends (-1: the transport does not know).
    void discoveryProgress(int devicesSeen, int nodesFound, int secondsLeft);
    // Trouble that concerns the transport as a whole (e.g. the server socket
    // failed); per-link trouble is reported on the link.
    void errorOccurred(const mmpi::Error &error);
};

} // namespace mmpi

Q_DECLARE_METATYPE(mmpi::PeerAdvert)
Q_DECLARE_METATYPE(mmpi::WorldAnnouncement)
