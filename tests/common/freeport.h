// A UDP port for a test's discovery beacon that no other socket will be
// given meanwhile: free now, and outside the range the kernel hands out to
// sockets that do not bind one (Linux's ip_local_port_range starts at 32768,
// Windows' and macOS's at 49152), so a datagram sent by another test or
// process cannot take it between the test choosing it and binding it.
#pragma once

#include <QRandomGenerator>
#include <QUdpSocket>

namespace mmpi::test {

inline quint16 freeBeaconPort()
{
    for (int attempt = 0; attempt < 200; ++attempt) {
        const auto port = quint16(20000 + QRandomGenerator::global()->bounded(12000));
        QUdpSocket probe;
        if (probe.bind(QHostAddress::AnyIPv4, port))
            return port;
    }
    return 0; // the caller's check fails the test
}

} // namespace mmpi::test
