// Bluetooth transport addresses: "bt://AA:BB:CC:DD:EE:FF/<channel>", the
// device address of a node's controller and the RFCOMM channel its mmpiNode
// server listens on (1-30). Parsing is strict: this text arrives from peers.
#pragma once

#include <mmpi/core/result.h>

#include <QString>

namespace mmpi {

struct BtEndpoint
{
    quint64 device = 0; // 48-bit device address, most significant byte first in text
    quint8 channel = 0; // 1-30; 0 only for listen("") meaning "any free channel"
    bool operator==(const BtEndpoint &) const = default;
};

// "AA:BB:CC:DD:EE:FF" (case-insensitive) -> 48-bit value, or an error.
Result<quint64> parseBtDevice(const QString &text);
QString formatBtDevice(quint64 device);

// `allowAnyChannel`: accept channel 0 (only for listening).
Result<BtEndpoint> parseBtAddress(const QString &address, bool allowAnyChannel = false);
QString formatBtAddress(const BtEndpoint &endpoint);

} // namespace mmpi
