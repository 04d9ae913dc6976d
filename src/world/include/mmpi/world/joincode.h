// JoinCode: a short code the root of a discovered world shows (as text and as
// a QR image) and a person types or scans on another device, for networks
// where the tcp beacon's broadcasts do not arrive (client isolation, routed
// subnets). It carries the root's IPv4 addresses, the UDP port the root
// listens for beacons on, and a 48-bit random secret from which every node
// derives the world key (worldKey()), so the existing key proof of each link
// is what keeps others out. What that is worth against an attacker on the
// LAN: docs/design/formation.md, "Join codes".
#pragma once

#include <mmpi/core/result.h>

#include <QByteArray>
#include <QHostAddress>
#include <QImage>
#include <QList>
#include <QStringList>

namespace mmpi {

class JoinCode
{
public:
    static constexpr int SecretSize = 6; // bytes: 48 bits
    static constexpr int MaxAddresses = 4;
    // The longest text parse() looks at (4 addresses with separators).
    static constexpr int MaxTextSize = 64;
    // The tcp transport's beaconPort when its options name none (the
    // transport is a plugin, so the world layer cannot ask it).
    static constexpr quint16 DefaultBeaconPort = 47474;

    JoinCode() = default;
    // BadJoinCode unless 1..MaxAddresses distinct unicast IPv4 addresses, a
    // port other than 0 and a SecretSize-byte secret.
    static Result<JoinCode> create(const QList<QHostAddress> &addresses, quint16 beaconPort,
                                   const QByteArray &secret);
    // As create(), with a fresh random secret.
    static Result<JoinCode> generate(const QList<QHostAddress> &addresses, quint16 beaconPort);
    // What a code can hold of a root's addresses (best first, as
    // InterfaceFilter::addresses() lists them): the IPv4 ones, at most
    // MaxAddresses.
    static QList<QHostAddress> codeAddresses(const QList<QHostAddress> &addresses);
    // The text as toString() writes it; case, spaces and dashes do not
    // matter, and O, I, L are read as 0, 1, 1. BadJoinCode says what is wrong
    // (a character, the length, the check digits of a mistyped code).
    static Result<JoinCode> parse(const QString &text);

    bool isValid() const { return !m_addresses.isEmpty(); }
    QList<QHostAddress> addresses() const { return m_addresses; }
    quint16 beaconPort() const { return m_beaconPort; }
    QByteArray secret() const { return m_secret; }
    // Groups of four characters of Crockford's base32 joined by '-', e.g.
    // "0G4Y-V5KM-…"; 24 characters for one address, 31 for two.
    QString toString() const;
    // The root's beacon addresses for Transport::advertiseTo(), in the tcp
    // transport's terms: "tcp://<address>:<beaconPort>".
    QStringList beaconContacts() const;
    // The 32-byte world key of world `worldName`: PBKDF2-HMAC-SHA256 of the
    // secret (docs/design/formation.md). Every node of the world uses it.
    QByteArray worldKey(const QString &worldName) const;
    // toString() as a QR code (error correction M), black modules of
    // `moduleSize` pixels on white with the standard 4-module quiet zone; a
    // null image if the code is invalid or the QR library fails.
    QImage toQrImage(int moduleSize = 8) const;

    bool operator==(const JoinCode &) const = default;

private:
    QList<QHostAddress> m_addresses;
    quint16 m_beaconPort = 0;
    QByteArray m_secret;
};

} // namespace mmpi
