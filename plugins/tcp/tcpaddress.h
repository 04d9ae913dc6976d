// Parsing and printing of tcp:// addresses ("tcp://127.0.0.1:4000",
// "tcp://[::1]:4000"), shared by the transport, its links and the beacon so
// that every log line and every advert spells an address the same way.
#pragma once

#include <mmpi/core/result.h>

#include <QHostAddress>

#include <optional>

namespace mmpi {

struct TcpEndpoint
{
    QString host; // IP literal or host name, without brackets
    quint16 port = 0;
};

// "tcp://host:port" (port 0 is allowed here; connectTo() refuses it).
// BadAddress for anything else.
Result<TcpEndpoint> parseTcpAddress(const QString &address);
// "tcp://host:port", with brackets around an IPv6 host.
QString formatTcpAddress(const QString &host, quint16 port);
// As above; an IPv4-mapped IPv6 address is printed as plain IPv4.
QString formatTcpAddress(const QHostAddress &host, quint16 port);
// The address to bind for a listen host: an IP literal, "any" (every
// interface, IPv4 and IPv6) or "localhost"; nullopt for anything else.
std::optional<QHostAddress> listenHostAddress(const QString &host);
// Whether an advertised host means "every interface" (0.0.0.0, ::, any), so a
// discoverer must use the address the advert came from instead.
bool isAnyHost(const QString &host);

} // namespace mmpi
