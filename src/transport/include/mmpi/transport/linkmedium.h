// mmpi::LinkMedium: what a transport says its links run over
// (Transport::expectedLink(), World::expectedLink()).
#pragma once

#include <QString>

namespace mmpi {

// What a transport's medium is like, as far as it knows before anything has
// been measured on it: the link model collectives decide with until the
// world's heartbeats have measured the round trips (docs/design/broadcast.md).
// A frame of b bytes occupies the sender for overheadUs + (b + header) /
// bytesPerUs and arrives latencyUs after it has left.
struct LinkMedium
{
    QString name;             // e.g. "loopback", "wifi", "bluetooth"
    double latencyUs = 0;     // one-way latency of a small frame
    double bytesPerUs = 0;    // what a sender's link carries (1 = 1 MB/s)
    double overheadUs = 0;    // per-frame cost at the sender

    bool operator==(const LinkMedium &) const = default;

    // Loopback TCP or a local socket on one machine.
    static LinkMedium loopback();
    // Phones and desktops on one Wi-Fi access point (also any other LAN).
    static LinkMedium wifi();
    // Classic Bluetooth (Basic Rate) over RFCOMM between phones.
    static LinkMedium classicBluetooth();
};

} // namespace mmpi
