#include "tcpadvert.h"

#include "tcpaddress.h"

#include <QStringDecoder>
#include <QtEndian>

namespace mmpi {

namespace {

constexpr int MagicSize = 4;
constexpr int FixedSize = MagicSize + 1 + 2; // magic, version, port
constexpr int MaxStringSize = 255;           // one length byte
constexpr quint8 FamilyV4 = 4;
constexpr quint8 FamilyV6 = 6;

Error invalid(const QString &reason)
{
    return Error(ErrorCode::DiscoveryFailed, reason);
}

bool isAny(const QHostAddress &host)
{
    return host == QHostAddress(QHostAddress::AnyIPv4) || host == QHostAddress(QHostAddress::AnyIPv6);
}

// Reads a datagram front to back; every read checks the bytes are there.
class Reader
{
public:
    explicit Reader(QByteArrayView data) : m_data(data) {}
    qsizetype left() const { return m_data.size() - m_pos; }
    bool byte(quint8 &out)
    {
        if (left() < 1)
            return false;
        out = quint8(m_data[m_pos++]);
        return true;
    }
    bool bytes(qsizetype n, QByteArrayView &out)
    {
        if (left() < n)
            return false;
        out = m_data.sliced(m_pos, n);
        m_pos += n;
        return true;
    }
    // A length-prefixed UTF-8 string; false if truncated or not UTF-8.
    bool string(QString &out)
    {
        quint8 length = 0;
        QByteArrayView raw;
        if (!byte(length) || !bytes(length, raw))
            return false;
        // Stateless: a sequence cut off at the end is an error, not held over.
        QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
        out = decoder.decode(raw);
        return !decoder.hasError();
    }

private:
    QByteArrayView m_data;
    qsizetype m_pos = 0;
};

Result<void> appendString(QByteArray &out, const QString &value, const QString &field)
{
    const QByteArray bytes = value.toUtf8();
    if (bytes.isEmpty() || bytes.size() > MaxStringSize)
        return invalid(QStringLiteral("the %1 of a beacon must be 1 to %2 bytes of UTF-8, not %3")
                           .arg(field).arg(MaxStringSize).arg(bytes.size()));
    out.append(char(bytes.size()));
    out.append(bytes);
    return success();
}

void appendHost(QByteArray &out, const QHostAddress &host)
{
    if (host.protocol() == QAbstractSocket::IPv4Protocol) {
        char v4[4];
        qToBigEndian<quint32>(host.toIPv4Address(), v4);
        out.append(char(FamilyV4)).append(v4, 4);
        return;
    }
    const Q_IPV6ADDR v6 = host.toIPv6Address();
    out.append(char(FamilyV6)).append(reinterpret_cast<const char *>(v6.c), 16);
}

Result<QHostAddress> readHost(Reader &reader)
{
    quint8 family = 0;
    QByteArrayView raw;
    if (!reader.byte(family))
        return invalid(QStringLiteral("a host is truncated"));
    if (family != FamilyV4 && family != FamilyV6)
        return invalid(QStringLiteral("host family %1 (expected 4 or 6)").arg(family));
    if (!reader.bytes(family == FamilyV4 ? 4 : 16, raw))
        return invalid(QStringLiteral("a host is truncated"));
    if (family == FamilyV4)
        return QHostAddress(qFromBigEndian<quint32>(raw.data()));
    return QHostAddress(reinterpret_cast<const quint8 *>(raw.data()));
}

Result<void> checkWorld(const TcpAdvert::World &world)
{
    const auto inRange = [](int n) { return n >= 0 && n <= TcpAdvert::MaxCount; };
    if (world.hostName.toUtf8().size() > TcpAdvert::MaxHostNameSize)
        return invalid(QStringLiteral("a host name of more than %1 bytes").arg(TcpAdvert::MaxHostNameSize));
    if (!inRange(world.joined) || !inRange(world.wanted) || world.ttlSeconds < 0 || world.ttlSeconds > 65535)
        return invalid(QStringLiteral("joined %1, wanted %2 or time to live %3 out of range")
                           .arg(world.joined).arg(world.wanted).arg(world.ttlSeconds));
    return success();
}

void appendCount(QByteArray &out, int value)
{
    char bytes[2];
    qToBigEndian<quint16>(quint16(value), bytes);
    out.append(bytes, 2);
}

void appendWorld(QByteArray &out, const TcpAdvert::World &world)
{
    const QByteArray host = world.hostName.toUtf8();
    out.append(char(host.size())).append(host);
    appendCount(out, world.joined);
    appendCount(out, world.wanted);
    appendCount(out, world.ttlSeconds);
}

Result<TcpAdvert::World> readWorld(Reader &reader)
{
    TcpAdvert::World world;
    quint8 length = 0;
    QByteArrayView raw, counts;
    if (!reader.byte(length) || !reader.bytes(length, raw) || !reader.bytes(6, counts))
        return invalid(QStringLiteral("a world announcement is truncated"));
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    world.hostName = decoder.decode(raw);
    if (decoder.hasError())
        return invalid(QStringLiteral("the host name is not UTF-8"));
    world.joined = qFromBigEndian<quint16>(counts.data());
    world.wanted = qFromBigEndian<quint16>(counts.data() + 2);
    world.ttlSeconds = qFromBigEndian<quint16>(counts.data() + 4);
    return world;
}

Result<void> checkFields(const TcpAdvert &advert)
{
    if (advert.world)
        if (auto ok = checkWorld(*advert.world); !ok)
            return ok;
    if (advert.port == 0)
        return invalid(QStringLiteral("listen port 0"));
    if (advert.worldName.isEmpty() || advert.nodeId.isEmpty())
        return invalid(QStringLiteral("empty world name or node id"));
    if (advert.hosts.isEmpty() || advert.hosts.size() > TcpAdvert::MaxHosts)
        return invalid(QStringLiteral("%1 hosts (1 to %2 allowed)").arg(advert.hosts.size()).arg(TcpAdvert::MaxHosts));
    for (qsizetype i = 0; i < advert.hosts.size(); ++i) {
        const QHostAddress &host = advert.hosts.at(i);
        const auto protocol = host.protocol();
        if (protocol != QAbstractSocket::IPv4Protocol && protocol != QAbstractSocket::IPv6Protocol)
            return invalid(QStringLiteral("host %1 is not an IP address").arg(i + 1));
        if (host.isMulticast() || host.isBroadcast() || !host.scopeId().isEmpty())
            return invalid(QStringLiteral("host %1 (%2) is not a unicast address").arg(i + 1).arg(host.toString()));
        if (advert.hosts.indexOf(host) != i)
            return invalid(QStringLiteral("host %1 is listed twice").arg(host.toString()));
    }
    return success();
}

Result<TcpAdvert> decodeVersion1(Reader &reader, TcpAdvert advert)
{
    QString host;
    if (!reader.string(advert.worldName) || !reader.string(advert.nodeId) || !reader.string(host))
        return invalid(QStringLiteral("a string is truncated or not UTF-8"));
    const QHostAddress address(host);
    if (address.isNull() && !isAnyHost(host))
        return invalid(QStringLiteral("listen host '%1' is not an IP address").arg(host));
    advert.hosts = {address.isNull() ? QHostAddress(QHostAddress::AnyIPv4) : address};
    return advert;
}

Result<TcpAdvert> decodeVersion2(Reader &reader, TcpAdvert advert)
{
    quint8 count = 0;
    if (!reader.string(advert.worldName) || !reader.string(advert.nodeId))
        return invalid(QStringLiteral("a string is truncated or not UTF-8"));
    if (!reader.byte(count))
        return invalid(QStringLiteral("the host count is missing"));
    if (count < 1 || count > TcpAdvert::MaxHosts)
        return invalid(QStringLiteral("%1 hosts (1 to %2 allowed)").arg(count).arg(TcpAdvert::MaxHosts));
    for (int i = 0; i < count; ++i) {
        auto host = readHost(reader);
        if (!host)
            return host.error();
        advert.hosts << *host;
    }
    return advert;
}

} // namespace

Result<QByteArray> TcpAdvert::encode(const TcpAdvert &advert)
{
    if (auto ok = checkFields(advert); !ok)
        return ok.error();
    QByteArray out(advert.world ? WorldMagic : Magic, MagicSize);
    out.append(char(advert.world ? WorldVersion : Version));
    char port[2];
    qToBigEndian<quint16>(advert.port, port);
    out.append(port, 2);
    if (auto ok = appendString(out, advert.worldName, QStringLiteral("world name")); !ok)
        return ok.error();
    if (auto ok = appendString(out, advert.nodeId, QStringLiteral("node id")); !ok)
        return ok.error();
    out.append(char(advert.hosts.size()));
    for (const QHostAddress &host : advert.hosts)
        appendHost(out, host);
    if (advert.world)
        appendWorld(out, *advert.world);
    if (out.size() > MaxDatagramSize)
        return invalid(QStringLiteral("an advert of %1 bytes exceeds the beacon limit of %2")
                           .arg(out.size()).arg(MaxDatagramSize));
    return out;
}

Result<TcpAdvert> TcpAdvert::decode(QByteArrayView datagram)
{
    if (datagram.size() > MaxDatagramSize)
        return invalid(QStringLiteral("%1 bytes, more than %2").arg(datagram.size()).arg(MaxDatagramSize));
    if (datagram.size() >= FixedSize && datagram.first(MagicSize) == QByteArrayView(WorldMagic, MagicSize))
        return decodeWorld(datagram);
    if (datagram.size() < FixedSize || datagram.first(MagicSize) != QByteArrayView(Magic, MagicSize))
        return invalid(QStringLiteral("not an MMPI beacon"));
    const quint8 version = quint8(datagram[MagicSize]);
    if (version != Version && version != OldVersion)
        return invalid(QStringLiteral("beacon version %1 (this node reads %2 and %3)")
                           .arg(version).arg(OldVersion).arg(Version));
    TcpAdvert advert;
    advert.port = qFromBigEndian<quint16>(datagram.data() + MagicSize + 1);
    Reader reader(datagram.sliced(FixedSize));
    auto decoded = version == Version ? decodeVersion2(reader, advert) : decodeVersion1(reader, advert);
    if (!decoded)
        return decoded;
    if (reader.left() != 0)
        return invalid(QStringLiteral("%1 bytes after the last field").arg(reader.left()));
    if (auto ok = checkFields(*decoded); !ok)
        return ok.error();
    return decoded;
}

Result<TcpAdvert> TcpAdvert::decodeWorld(QByteArrayView datagram)
{
    const quint8 version = quint8(datagram[MagicSize]);
    if (version != WorldVersion)
        return invalid(QStringLiteral("world announcement version %1 (this node reads %2)").arg(version).arg(WorldVersion));
    TcpAdvert advert;
    advert.port = qFromBigEndian<quint16>(datagram.data() + MagicSize + 1);
    Reader reader(datagram.sliced(FixedSize));
    auto decoded = decodeVersion2(reader, advert);
    if (!decoded)
        return decoded;
    auto world = readWorld(reader);
    if (!world)
        return world.error();
    decoded->world = *world;
    if (reader.left() != 0)
        return invalid(QStringLiteral("%1 bytes after the last field").arg(reader.left()));
    if (auto ok = checkFields(*decoded); !ok)
        return ok.error();
    return decoded;
}

QStringList TcpAdvert::addressesFrom(const QHostAddress &sender) const
{
    QStringList addresses;
    const bool senderFirst = std::any_of(hosts.begin(), hosts.end(), [&](const QHostAddress &h) {
        return isAny(h) || h.isEqual(sender, QHostAddress::TolerantConversion);
    });
    if (senderFirst)
        addresses << formatTcpAddress(sender, port);
    for (const QHostAddress &host : hosts) {
        const QString address = formatTcpAddress(host, port);
        if (!isAny(host) && !addresses.contains(address))
            addresses << address;
    }
    return addresses;
}

} // namespace mmpi
