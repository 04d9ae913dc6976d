// InterfaceFilter: which network interfaces LAN discovery uses. By default an
// interface that is up, not loopback and not virtual (container bridges and
// veths, VPN tunnels, anything without a hardware device); an app may name the
// interfaces instead, and then exactly those are used (loopback and virtual
// ones included) as long as they are up. Used by the tcp transport's beacon
// and by whoever makes a join code (mmpi::JoinCode) from this host's addresses.
#pragma once

#include <QHostAddress>
#include <QNetworkInterface>
#include <QStringList>

namespace mmpi {

class InterfaceFilter
{
public:
    // What the rule looks at, so that it can be tested without the host's
    // interfaces.
    struct Facts
    {
        QString name;
        bool up = false;
        bool loopback = false;
        // Whether the interface has a hardware device behind it
        // (/sys/class/net/<name>/device on Linux).
        bool hasDevice = true;
    };

    // `names` empty: the default rule; otherwise only the interfaces named.
    explicit InterfaceFilter(const QStringList &names = {});

    QStringList names() const { return m_names; }
    // Why discovery does not use the interface described by `facts`, or an
    // empty string if it does.
    QString exclusionReason(const Facts &facts) const;
    // The interfaces of this host the rule keeps: named ones in the order
    // named, otherwise in the system's order.
    QList<QNetworkInterface> interfaces() const;
    // Their IPv4 addresses, then their IPv6 ones that are not link-local (a
    // link-local address needs a scope a peer cannot know); no duplicates.
    QList<QHostAddress> addresses() const;
    // The IPv4 broadcast addresses of the kept interfaces that can broadcast.
    QList<QHostAddress> broadcastAddresses() const;

    // Whether `name` looks like a virtual interface by name alone: docker*,
    // br-*, veth*, virbr*, tun*, tap*, wg* (see the .cpp for where each
    // comes from).
    static bool hasVirtualName(const QString &name);
    static Facts factsOf(const QNetworkInterface &interface);

private:
    QStringList m_names;
};

} // namespace mmpi
