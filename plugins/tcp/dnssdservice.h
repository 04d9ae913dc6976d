// DnsSdService: one node as DNS-SD (RFC 6763) describes it, the `_mmpi._tcp`
// service: the records a node publishes (PTR, SRV, TXT, A/AAAA) and the
// TXT keys that say which world it is for (docs/guide/transports.md,
// "DNS-SD"), and how a root reads nodes of its world back out of a
// response. The root of a discovered world announces the world itself as a
// `_mmpi-world._tcp` service of the same shape (Kind::World), with the
// world's name and how many joined, for devices still choosing one. TXT records come off the network: fromTxt() checks every key
// and refuses, with the reason, what it cannot use.
#pragma once

#include "dnsmessage.h"

#include <mmpi/core/result.h>

#include <QHostAddress>
#include <QList>
#include <QStringList>

namespace mmpi {

struct DnsSdService
{
    // What `txtvers` says; a TXT of another version is refused.
    static constexpr int Version = 1;
    static constexpr int WorldHashSize = 8;
    static constexpr int MaxHosts = 8;
    // How long peers may cache the records: formation is short, and a node
    // that went should not be tried for long.
    static constexpr quint32 Ttl = 120;
    // A world announcement changes while nodes join and goes when the world
    // forms: browsers refresh it (every 4 s at most) and drop it soon after
    // its root is gone.
    static constexpr quint32 WorldTtl = 15;
    static constexpr int MaxWorldNameSize = 255;
    static constexpr int MaxHostNameSize = 63;

    enum class Kind { Node, World };
    Kind kind = Kind::Node;

    QByteArray worldHash; // hashOf(world name)
    QString nodeId;       // also the instance's label: unique, so it needs no probing
    int sizeWanted = 0;   // 0: not said
    // Kind::World only: the world's name (its hash is worldHash), the
    // root's host name for a person, the nodes joined so far.
    QString worldName;
    QString hostLabel;
    int joined = 0;
    QStringList transports{QStringLiteral("tcp")};
    // Where the node listens, best first; 0.0.0.0 or :: means "the address
    // the response came from", as in the tcp beacon.
    QList<QHostAddress> hosts;
    quint16 port = 0;
    bool operator==(const DnsSdService &) const = default;

    // The first 8 bytes of SHA-256 over the world name's UTF-8: a root tells
    // its world's nodes apart without the name going on the air.
    static QByteArray hashOf(const QString &worldName);
    // _mmpi._tcp.local (_mmpi-world._tcp.local for Kind::World), and
    // DNS-SD's service enumeration name (section 9).
    static DnsMessage::Name serviceName(Kind kind = Kind::Node);
    static DnsMessage::Name enumerationName();
    // "_mmpi._tcp" or "_mmpi-world._tcp", as Avahi names a type.
    static QString typeText(Kind kind);
    DnsMessage::Name typeName() const { return serviceName(kind); }
    quint32 ttl() const { return kind == Kind::World ? WorldTtl : Ttl; }
    // <node id>._mmpi._tcp.local (or ._mmpi-world)
    DnsMessage::Name instanceName() const;
    // mmpi-<node id's first 12 letters and digits>.local, the SRV's target.
    DnsMessage::Name hostName() const;

    // The TXT strings: txtvers=1 world=<hash hex> id= size= tr=<a,b> addr=<ip,ip>,
    // and for Kind::World name= host= joined=.
    QList<QByteArray> txt() const;
    // BadDnsMessage with the reason the strings are no usable TXT of this
    // version and kind (a later duplicate key is ignored, RFC 6763 section 6.4).
    static Result<DnsSdService> fromTxt(const QList<QByteArray> &strings, Kind kind = Kind::Node);

    // PTR, SRV, TXT and an A or AAAA record per host (none for "any"), with
    // time to live `ttl` (0: a goodbye). BadDnsMessage if a field cannot be
    // written (an empty or too long node id, no host, port 0).
    Result<QList<DnsMessage::Record>> records(quint32 ttl) const;
    // The services of world `worldHash` that `message`'s records describe
    // (a PTR to an instance with its SRV and TXT; goodbyes left out). What
    // is left out for being malformed or of another world, with the reason,
    // goes to `ignored` if given.
    // An empty `worldHash` takes every world (browsing worlds of any name).
    static QList<DnsSdService> fromMessage(const DnsMessage &message, const QByteArray &worldHash,
                                           QStringList *ignored = nullptr, Kind kind = Kind::Node);
    // The instance labels (node ids) whose PTR of `kind` `message` withdraws
    // (time to live 0, a goodbye).
    static QStringList goodbyesIn(const DnsMessage &message, Kind kind);

    // The tcp:// addresses a root tries, in order: the sender's first if the
    // node lists it or an "any" host, then the others as listed.
    QStringList addressesFrom(const QHostAddress &sender) const;
};

} // namespace mmpi

Q_DECLARE_METATYPE(mmpi::DnsSdService)
