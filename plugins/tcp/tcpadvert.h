// TcpAdvert: what one tcp beacon datagram says, and its byte layout
// (docs/guide/transports.md, "the UDP beacon"). Version 2 lists every address
// the node listens on; version 1 (one host) is still read, so that a root of
// this release finds nodes of the previous one. The root of a discovered world
// sends a world announcement of the same layout (magic MMPW) with its host
// name and how many joined, for devices choosing a world. Datagrams are untrusted: decode()
// checks every byte and allocates nothing beyond the datagram's bounds.
#pragma once

#include <mmpi/core/result.h>

#include <QByteArrayView>
#include <QHostAddress>
#include <QList>
#include <QStringList>

#include <optional>

namespace mmpi {

struct TcpAdvert
{
    static constexpr char Magic[] = "MMPB";
    static constexpr quint8 Version = 2;       // what encode() writes
    static constexpr quint8 OldVersion = 1;    // still read by decode()
    static constexpr int MaxDatagramSize = 512;
    static constexpr int MaxHosts = 8;
    static constexpr char WorldMagic[] = "MMPW";
    static constexpr quint8 WorldVersion = 1;
    static constexpr int MaxHostNameSize = 63;
    static constexpr int MaxCount = 4096;

    // What only a world announcement says.
    struct World
    {
        QString hostName; // the root's, for a person; may be empty
        int joined = 0;
        int wanted = 0;
        int ttlSeconds = 0; // how long it holds unless sent again; 0: withdrawn
        bool operator==(const World &) const = default;
    };

    QString worldName;
    QString nodeId;
    // Where the node listens, best first; 0.0.0.0 or :: means "the address
    // this datagram came from" (a node listening on every interface that
    // found no usable one to name).
    QList<QHostAddress> hosts;
    quint16 port = 0;
    // Set: a root's world announcement, `nodeId` the root's, `port` where it listens.
    std::optional<World> world;
    bool operator==(const TcpAdvert &) const = default;

    // DiscoveryFailed if a field is empty or out of range, or the datagram
    // would exceed MaxDatagramSize.
    static Result<QByteArray> encode(const TcpAdvert &advert);
    // DiscoveryFailed with the reason the datagram is not a valid advert.
    static Result<TcpAdvert> decode(QByteArrayView datagram);
    // decode() of a world announcement (magic MMPW).
    static Result<TcpAdvert> decodeWorld(QByteArrayView datagram);

    // The tcp:// addresses a discoverer tries, in order: the sender's first if
    // the node lists it (that path is known to work) or lists an "any" host,
    // then the other hosts as listed.
    QStringList addressesFrom(const QHostAddress &sender) const;
};

} // namespace mmpi
