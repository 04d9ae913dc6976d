// BtTransport: MMPI over classic Bluetooth. A QBluetoothServer (RFCOMM) with
// the mmpiNode SDP record (world name and node id in its attributes),
// discovery by inquiry + SDP (BtDiscovery), RFCOMM links (BtLink) with
// retried connects, and the remembered addresses of earlier worlds.
// Addresses "bt://AA:BB:CC:DD:EE:FF/<channel>"; options: docs/bluetooth.md.
#pragma once

#include "btconnectpolicy.h"
#include "btdiscovery.h"
#include "btpeercache.h"

#include <mmpi/transport/transport.h>
#include <mmpi/wire/framedecoder.h>

#include <QBluetoothLocalDevice>
#include <QBluetoothServer>
#include <QBluetoothServiceInfo>
#include <QPointer>
#include <QSet>

#include <memory>

namespace mmpi {

class BluezBonding;
class BtSocketOpener;

class BtTransport : public Transport
{
    Q_OBJECT
public:
    explicit BtTransport(QObject *parent = nullptr);
    ~BtTransport() override;

    // Qt must pick its kernel-socket RFCOMM backend before any of its
    // Bluetooth objects exist (docs/bluetooth.md, "Facts").
    static void preferKernelSockets();

    QString name() const override { return QStringLiteral("bluetooth"); }
    Result<void> configure(const QVariantMap &options) override;
    LinkMedium expectedLink() const override { return LinkMedium::classicBluetooth(); }

    Result<QString> listen(const QString &address) override;
    QString listenAddress() const override;
    void stopListening() override;
    Result<Link *> connectTo(const QString &address) override;

    bool supportsDiscovery() const override { return true; }
    Result<void> advertise(const PeerAdvert &advert) override;
    void stopAdvertising() override;
    Result<void> startDiscovery(const QString &worldName) override;
    void stopDiscovery() override;

    int activeLinks() const { return int(m_links.size()); }

    // Discovery progress is Transport::discoveryProgress (devices seen by
    // inquiry, mmpiNode services of the world found, inquiry time left).

private:
    enum class Connector { Kernel, Qt };
    struct Options
    {
        quint64 adapter = 0;
        int expectedPeers = 0;
        QList<quint64> knownPeers;
        QString peerCache; // empty: none
        int connectTimeout = 20000;
        BtConnectPolicy policy;
        int maxLinks = 7;
        int securityLevel = 2; // BT_SECURITY_MEDIUM: authenticated pairing + encryption
        int settleTime = 500;
        Connector connector = Connector::Kernel;
        bool makeDiscoverable = true; // option visibility
        bool bond = true;             // option bonding
        DecoderLimits limits;
    };

    BtSocketOpener *makeOpener() const;
    void acceptPendingLinks();
    void track(Link *link);
    Error linkLimitError() const;
    quint64 localDevice() const;
    void makeReachable();
    void allowBonding();

    Options m_options;
    QBluetoothServer *m_server = nullptr;
    QBluetoothLocalDevice *m_local = nullptr;
    QBluetoothServiceInfo m_service;
    BtScanner *m_scanner = nullptr;
    BtDiscovery *m_discovery = nullptr;
    QString m_discoveryWorld;
    QSet<Link *> m_links;
    QSet<quint64> m_reached; // devices a link was made with: pairing done
#ifdef MMPI_BLUEZ_BONDING
    std::unique_ptr<BluezBonding> m_bonding;
#endif
};

} // namespace mmpi
