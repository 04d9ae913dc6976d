// A TCP port chosen now for a listener that starts later (another process,
// a world not created yet). One found by listening on port 0 comes from the
// range the system also gives outgoing connections their ports from, so a
// connect() made between the close and the new listen may be given that very
// port; one below that range (Linux: net.ipv4.ip_local_port_range) cannot be.
#pragma once

#include <QHostAddress>
#include <QTcpServer>

#include <memory>

namespace mmpi {

// A server listening on `host` at such a port, to hold until the real
// listener is about to start (then close it); where the range is unknown, or
// nothing below it is free after a few tries, at a port the system chose.
// On failure the server is returned not listening, with its errorString().
std::unique_ptr<QTcpServer> listenForLater(const QHostAddress &host);

} // namespace mmpi
