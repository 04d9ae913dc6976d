#include <mmpi/transport/transport.h>

#include <mmpi/transport/optionreader.h>

namespace mmpi {

namespace {

Error noDiscovery(const QString &transport)
{
    return Error(ErrorCode::DiscoveryFailed,
                 QStringLiteral("transport %1 does not support discovery").arg(transport));
}

} // namespace

// The numbers and where they come from, once: the radios' are the sim
// transport's `wifi` and `bluetooth` profiles, whose derivation is in
// docs/guide/transports.md ("sim"); a radio's per-frame cost at the sender
// is lost in its latency, so it is 0. Loopback's are the numbers the comm
// layer's broadcast decision has used for processes of one machine before
// anything was measured (LinkModel's defaults; docs/design/broadcast.md).
LinkMedium LinkMedium::loopback()
{
    return {QStringLiteral("loopback"), 30.0, 1000.0, 4.0};
}

LinkMedium LinkMedium::wifi()
{
    return {QStringLiteral("wifi"), 2000.0, 5.0, 0.0};
}

LinkMedium LinkMedium::classicBluetooth()
{
    return {QStringLiteral("bluetooth"), 30000.0, 0.09, 0.0};
}

Transport::Transport(QObject *parent)
    : QObject(parent)
{
    qRegisterMetaType<mmpi::PeerAdvert>();
    qRegisterMetaType<mmpi::WorldAnnouncement>();
    qRegisterMetaType<mmpi::Error>();
}

Transport::~Transport() = default;

Result<void> Transport::configure(const QVariantMap &options)
{
    // A transport without options accepts only the empty map.
    return OptionReader(name(), options).finish();
}

LinkMedium Transport::expectedLink() const
{
    return LinkMedium::wifi();
}

bool Transport::supportsDiscovery() const
{
    return false;
}

Result<void> Transport::advertise(const PeerAdvert &)
{
    return noDiscovery(name());
}

Result<void> Transport::advertiseTo(const PeerAdvert &, const QStringList &)
{
    return Error(ErrorCode::DiscoveryFailed,
                 QStringLiteral("transport %1 cannot send its adverts to given addresses").arg(name()));
}

void Transport::stopAdvertising()
{
}

Result<void> Transport::startDiscovery(const QString &)
{
    return noDiscovery(name());
}

void Transport::stopDiscovery()
{
}

bool Transport::supportsServiceDiscovery() const
{
    return false;
}

Result<void> Transport::publishService(const PeerAdvert &)
{
    return Error(ErrorCode::DiscoveryFailed, QStringLiteral("transport %1 offers no DNS-SD").arg(name()));
}

void Transport::stopPublishing()
{
}

Result<void> Transport::browseServices(const QString &)
{
    return Error(ErrorCode::DiscoveryFailed, QStringLiteral("transport %1 offers no DNS-SD").arg(name()));
}

void Transport::stopBrowsing()
{
}

bool Transport::supportsWorldAnnouncements() const
{
    return false;
}

Result<void> Transport::announceWorld(const WorldAnnouncement &)
{
    return Error(ErrorCode::DiscoveryFailed, QStringLiteral("transport %1 cannot announce worlds").arg(name()));
}

void Transport::stopAnnouncingWorld()
{
}

Result<void> Transport::browseWorlds()
{
    return Error(ErrorCode::DiscoveryFailed, QStringLiteral("transport %1 cannot browse worlds").arg(name()));
}

void Transport::stopBrowsingWorlds()
{
}

} // namespace mmpi
