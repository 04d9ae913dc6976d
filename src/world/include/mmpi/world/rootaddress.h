// RootAddress: the address of a discovered world's root as a person types
// it (WorldConfig::rootAddresses, the Address step of discovery), for
// networks where neither DNS-SD nor the beacon arrives and no join code was
// shown. "host" or "host:port": the host an IPv4 address or a host name, the
// port the root's beacon port (beaconPort() when none is typed). A node sends
// its adverts there as it does to a join code's addresses; unlike a join
// code, an address carries no world key (docs/guide/transports.md,
// "Typed addresses").
#pragma once

#include <mmpi/core/result.h>

#include <QHostAddress>
#include <QString>
#include <QVariantMap>

namespace mmpi {

class RootAddress
{
public:
    // As many as a join code holds: a node beacons to each, every interval.
    static constexpr int MaxAddresses = 4;

    // BadAddress, naming the entry and what is wrong with it: empty, a
    // scheme ("tcp://…": the link address, not the beacon's), an IPv6
    // address (the root hears adverts over IPv4 only), a port outside
    // 1..65535, an IPv4 address that is not unicast, or a host that is
    // neither an IPv4 address nor a host name (RFC 1123 labels).
    static Result<RootAddress> parse(const QString &text, quint16 defaultPort);
    // The port a root listens on for adverts, as a node's transport options
    // name it (tcp's `beaconPort`, the same option the root's transport
    // reads), else JoinCode::DefaultBeaconPort.
    static quint16 beaconPort(const QVariantMap &transportOptions);
    // A beacon address for Transport::advertiseTo(), in the tcp transport's
    // terms: "tcp://<IPv4 address>:<port>" (JoinCode::beaconContacts too).
    static QString beaconContact(const QHostAddress &address, quint16 port);

    // The IPv4 address, or the host name in its ASCII (IDNA) form.
    QString host() const { return m_host; }
    quint16 port() const { return m_port; }
    // A host name, to be looked up when the step begins; else an IPv4 address.
    bool isName() const { return m_isName; }
    // beaconContact() of an IPv4 address; empty for a name.
    QString contact() const;

    bool operator==(const RootAddress &) const = default;

private:
    QString m_host;
    quint16 m_port = 0;
    bool m_isName = false;
};

} // namespace mmpi
