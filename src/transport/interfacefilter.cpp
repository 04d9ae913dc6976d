#include <mmpi/transport/interfacefilter.h>

#include <QFileInfo>

#include <algorithm>

namespace mmpi {

namespace {

// Interface names that container, VM and VPN software gives the interfaces it
// makes, which lead to no other device in the room:
// - docker*: Docker's default bridge (docker0); br-*: the bridges of Docker's
//   user-defined networks (br-<network id>) and of docker compose;
// - veth*: one end of a virtual Ethernet pair, how Docker, Podman, LXC and
//   systemd-nspawn connect a container to its bridge;
// - virbr*: libvirt's NAT bridge for virtual machines (virbr0);
// - tun*, tap*: OpenVPN and other tunnels (tun0, tap0); wg*: WireGuard (wg0).
constexpr const char *VirtualPrefixes[] = {"docker", "br-", "veth", "virbr", "tun", "tap", "wg"};

// Linux lists every interface under /sys/class/net; those with a physical
// device (PCI, USB, SDIO, a platform Wi-Fi chip) have a "device" link there,
// the virtual ones (bridges, veths, tunnels, dummies) have none. Where there
// is no /sys/class/net (other systems, a sandbox) nothing can be told from
// it, and the name alone decides.
bool hasHardwareDevice(const QString &name)
{
    static const bool sysfs = QFileInfo(QStringLiteral("/sys/class/net")).isDir();
    if (!sysfs)
        return true;
    return QFileInfo::exists(QStringLiteral("/sys/class/net/%1/device").arg(name));
}

} // namespace

InterfaceFilter::InterfaceFilter(const QStringList &names)
    : m_names(names)
{
}

bool InterfaceFilter::hasVirtualName(const QString &name)
{
    for (const char *prefix : VirtualPrefixes)
        if (name.startsWith(QLatin1String(prefix)))
            return true;
    return false;
}

InterfaceFilter::Facts InterfaceFilter::factsOf(const QNetworkInterface &interface)
{
    const auto flags = interface.flags();
    return {interface.name(), flags.testFlag(QNetworkInterface::IsUp) && flags.testFlag(QNetworkInterface::IsRunning),
            flags.testFlag(QNetworkInterface::IsLoopBack), hasHardwareDevice(interface.name())};
}

QString InterfaceFilter::exclusionReason(const Facts &facts) const
{
    if (!m_names.isEmpty() && !m_names.contains(facts.name))
        return QStringLiteral("not among the interfaces asked for (%1)").arg(m_names.join(QStringLiteral(", ")));
    if (!facts.up)
        return QStringLiteral("down");
    if (!m_names.isEmpty())
        return {}; // named: loopback and virtual interfaces too, as asked
    if (facts.loopback)
        return QStringLiteral("loopback");
    if (hasVirtualName(facts.name))
        return QStringLiteral("virtual (a container, VM or VPN interface by its name)");
    if (!facts.hasDevice)
        return QStringLiteral("virtual (no hardware device)");
    return {};
}

QList<QNetworkInterface> InterfaceFilter::interfaces() const
{
    QList<QNetworkInterface> kept;
    for (const QNetworkInterface &interface : QNetworkInterface::allInterfaces())
        if (exclusionReason(factsOf(interface)).isEmpty())
            kept << interface;
    // Named interfaces in the app's order: its first is its best guess of
    // the one peers reach, and adverts list addresses best first.
    std::stable_sort(kept.begin(), kept.end(), [this](const QNetworkInterface &a, const QNetworkInterface &b) {
        return m_names.indexOf(a.name()) < m_names.indexOf(b.name());
    });
    return kept;
}

QList<QHostAddress> InterfaceFilter::addresses() const
{
    QList<QHostAddress> v4, v6;
    for (const QNetworkInterface &interface : interfaces()) {
        for (const QNetworkAddressEntry &entry : interface.addressEntries()) {
            const QHostAddress ip = entry.ip();
            auto &list = ip.protocol() == QAbstractSocket::IPv4Protocol ? v4 : v6;
            if (ip.protocol() == QAbstractSocket::IPv6Protocol && ip.isLinkLocal())
                continue;
            if (!list.contains(ip))
                list << QHostAddress(ip.toString()); // without the scope id
        }
    }
    return v4 + v6;
}

QList<QHostAddress> InterfaceFilter::broadcastAddresses() const
{
    QList<QHostAddress> targets;
    for (const QNetworkInterface &interface : interfaces()) {
        if (!interface.flags().testFlag(QNetworkInterface::CanBroadcast))
            continue;
        for (const QNetworkAddressEntry &entry : interface.addressEntries()) {
            const QHostAddress broadcast = entry.broadcast();
            if (entry.ip().protocol() == QAbstractSocket::IPv4Protocol && !broadcast.isNull()
                && !targets.contains(broadcast))
                targets << broadcast;
        }
    }
    return targets;
}

} // namespace mmpi
