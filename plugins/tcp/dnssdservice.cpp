#include "dnssdservice.h"

#include "tcpaddress.h"

#include <QCryptographicHash>
#include <QHash>
#include <QStringDecoder>

#include <algorithm>
#include <optional>

namespace mmpi {

namespace {

Error refused(const QString &why)
{
    return Error(ErrorCode::BadDnsMessage, why);
}

bool isAny(const QHostAddress &host)
{
    return host == QHostAddress(QHostAddress::AnyIPv4) || host == QHostAddress(QHostAddress::AnyIPv6);
}

// RFC 6763 section 6.4: a key is printable US-ASCII other than '=', and
// compares without regard to case.
bool validKey(QByteArrayView key)
{
    return !key.isEmpty() && key.size() <= 9
        && std::all_of(key.begin(), key.end(), [](char c) { return c >= 0x20 && c <= 0x7E && c != '='; });
}

const DnsMessage::Record *findRecord(const QList<DnsMessage::Record> &records, const DnsMessage::Name &name,
                                     quint16 type)
{
    for (const DnsMessage::Record &r : records)
        if (r.type == type && r.ttl != 0 && DnsMessage::sameName(r.name, name))
            return &r;
    return nullptr;
}

} // namespace

QByteArray DnsSdService::hashOf(const QString &worldName)
{
    return QCryptographicHash::hash(worldName.toUtf8(), QCryptographicHash::Sha256).left(WorldHashSize);
}

DnsMessage::Name DnsSdService::serviceName(Kind kind)
{
    return {kind == Kind::World ? QByteArrayLiteral("_mmpi-world") : QByteArrayLiteral("_mmpi"),
            QByteArrayLiteral("_tcp"), QByteArrayLiteral("local")};
}

QString DnsSdService::typeText(Kind kind)
{
    return kind == Kind::World ? QStringLiteral("_mmpi-world._tcp") : QStringLiteral("_mmpi._tcp");
}

DnsMessage::Name DnsSdService::enumerationName()
{
    return {QByteArrayLiteral("_services"), QByteArrayLiteral("_dns-sd"), QByteArrayLiteral("_udp"),
            QByteArrayLiteral("local")};
}

DnsMessage::Name DnsSdService::instanceName() const
{
    return DnsMessage::Name{nodeId.toUtf8()} + typeName();
}

DnsMessage::Name DnsSdService::hostName() const
{
    // A host label of letters, digits and '-' only (RFC 952), whatever the node id holds.
    QByteArray label("mmpi-");
    for (const char c : nodeId.toUtf8())
        if (label.size() < 17 && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            label.append(c);
    return {label, QByteArrayLiteral("local")};
}

QList<QByteArray> DnsSdService::txt() const
{
    QStringList addresses;
    for (const QHostAddress &host : hosts)
        addresses << host.toString();
    QList<QByteArray> strings{QByteArrayLiteral("txtvers=") + QByteArray::number(Version),
                              QByteArrayLiteral("world=") + worldHash.toHex(),
                              QByteArrayLiteral("id=") + nodeId.toUtf8(),
                              QByteArrayLiteral("size=") + QByteArray::number(sizeWanted),
                              QByteArrayLiteral("tr=") + transports.join(u',').toUtf8(),
                              QByteArrayLiteral("addr=") + addresses.join(u',').toLatin1()};
    if (kind == Kind::World)
        strings << QByteArrayLiteral("name=") + worldName.toUtf8() << QByteArrayLiteral("host=") + hostLabel.toUtf8()
                << QByteArrayLiteral("joined=") + QByteArray::number(joined);
    return strings;
}

namespace {

using TxtValues = QHash<QByteArray, QByteArray>;

Result<TxtValues> txtValues(const QList<QByteArray> &strings)
{
    TxtValues values;
    for (const QByteArray &string : strings) {
        const qsizetype equals = string.indexOf('=');
        const QByteArray key = (equals < 0 ? string : string.left(equals)).toLower();
        if (!validKey(key))
            return refused(QStringLiteral("TXT string '%1' has no valid key").arg(QString::fromLatin1(string.left(40))));
        if (!values.contains(key)) // later ones are ignored (RFC 6763 section 6.4)
            values.insert(key, equals < 0 ? QByteArray() : string.mid(equals + 1));
    }
    return values;
}

// A count 0..4096 in decimal without a sign; -1 if it is none.
int txtCount(const QByteArray &text)
{
    bool ok = false;
    const int n = text.toInt(&ok);
    return ok && n >= 0 && n <= 4096 && !text.startsWith('+') && !text.startsWith('-') ? n : -1;
}

// UTF-8 of 1..maxBytes (0..maxBytes if `mayBeEmpty`) bytes, or nothing.
std::optional<QString> txtText(const QByteArray &bytes, int maxBytes, bool mayBeEmpty = false)
{
    if ((bytes.isEmpty() && !mayBeEmpty) || bytes.size() > maxBytes)
        return std::nullopt;
    QStringDecoder utf8(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    QString text = utf8.decode(bytes);
    if (utf8.hasError())
        return std::nullopt;
    return text;
}

Result<QList<QHostAddress>> txtHosts(const QByteArray &addresses)
{
    if (addresses.isEmpty())
        return refused(QStringLiteral("TXT lists no address"));
    const QList<QByteArray> list = addresses.split(',');
    if (list.size() > DnsSdService::MaxHosts)
        return refused(QStringLiteral("TXT lists %1 addresses (%2 allowed)").arg(list.size()).arg(DnsSdService::MaxHosts));
    QList<QHostAddress> hosts;
    for (const QByteArray &text : list) {
        const QHostAddress host(QString::fromLatin1(text));
        // Scopes are this sender's own and mean nothing to another host.
        if (host.isNull() || !host.scopeId().isEmpty())
            return refused(QStringLiteral("TXT address '%1' is not an IP address").arg(QString::fromLatin1(text.left(48))));
        hosts << host;
    }
    return hosts;
}

// The keys only a world announcement has.
Result<void> readWorldKeys(const TxtValues &values, DnsSdService &service)
{
    const auto name = txtText(values.value("name"), DnsSdService::MaxWorldNameSize);
    if (!name)
        return refused(QStringLiteral("TXT has no world name of 1 to %1 bytes of UTF-8").arg(DnsSdService::MaxWorldNameSize));
    if (DnsSdService::hashOf(*name) != service.worldHash)
        return refused(QStringLiteral("TXT's world name does not match its world hash"));
    const auto host = txtText(values.value("host"), DnsSdService::MaxHostNameSize, true);
    if (!host)
        return refused(QStringLiteral("TXT's host is not UTF-8 of at most %1 bytes").arg(DnsSdService::MaxHostNameSize));
    service.worldName = *name;
    service.hostLabel = *host;
    service.joined = txtCount(values.value("joined"));
    if (service.joined < 0)
        return refused(QStringLiteral("TXT's joined is not a number 0..4096"));
    return success();
}

} // namespace

Result<DnsSdService> DnsSdService::fromTxt(const QList<QByteArray> &strings, Kind kind)
{
    const auto parsed = txtValues(strings);
    if (!parsed)
        return parsed.error();
    const TxtValues &values = *parsed;
    const QByteArray version = values.value("txtvers"), hash = values.value("world");
    if (version != QByteArray::number(Version))
        return refused(QStringLiteral("TXT version '%1', not %2").arg(QString::fromLatin1(version.left(16))).arg(Version));
    if (hash.size() != 2 * WorldHashSize || QByteArray::fromHex(hash).toHex() != hash.toLower())
        return refused(QStringLiteral("TXT has no world hash of %1 hex digits").arg(2 * WorldHashSize));
    DnsSdService service;
    service.kind = kind;
    service.worldHash = QByteArray::fromHex(hash);
    const QByteArray idBytes = values.value("id");
    if (idBytes.isEmpty() || idBytes.size() > DnsMessage::MaxLabelSize)
        return refused(QStringLiteral("TXT has no node id of 1 to %1 bytes").arg(DnsMessage::MaxLabelSize));
    const auto id = txtText(idBytes, DnsMessage::MaxLabelSize);
    if (!id)
        return refused(QStringLiteral("TXT's node id is not UTF-8"));
    service.nodeId = *id;
    const QByteArray size = values.value("size");
    service.sizeWanted = txtCount(size);
    if (service.sizeWanted < 0)
        return refused(QStringLiteral("TXT's size '%1' is not a number 0..4096").arg(QString::fromLatin1(size.left(16))));
    const QByteArray transports = values.value("tr");
    if (transports.isEmpty())
        return refused(QStringLiteral("TXT names no transport"));
    service.transports = QString::fromLatin1(transports).split(u',');
    auto hosts = txtHosts(values.value("addr"));
    if (!hosts)
        return hosts.error();
    service.hosts = *hosts;
    if (kind == Kind::World)
        if (auto ok = readWorldKeys(values, service); !ok)
            return ok.error();
    return service;
}

Result<QList<DnsMessage::Record>> DnsSdService::records(quint32 ttl) const
{
    const QByteArray id = nodeId.toUtf8();
    if (id.isEmpty() || id.size() > DnsMessage::MaxLabelSize)
        return refused(QStringLiteral("a node id of %1 bytes cannot be a DNS-SD instance name (1 to %2)")
                           .arg(id.size()).arg(DnsMessage::MaxLabelSize));
    if (hosts.isEmpty() || hosts.size() > MaxHosts || port == 0 || worldHash.size() != WorldHashSize)
        return refused(QStringLiteral("a DNS-SD service needs 1 to %1 hosts, a port and a world hash").arg(MaxHosts));
    const quint16 unique = DnsMessage::ClassIn | DnsMessage::TopClassBit; // cache flush: only this node has them
    QList<DnsMessage::Record> out;
    DnsMessage::Record ptr = DnsMessage::makeRecord(typeName(), DnsMessage::Ptr, DnsMessage::ClassIn, ttl);
    ptr.target = instanceName();
    out << ptr;
    DnsMessage::Record srv = DnsMessage::makeRecord(instanceName(), DnsMessage::Srv, unique, ttl);
    srv.port = port;
    srv.target = hostName();
    out << srv;
    DnsMessage::Record text = DnsMessage::makeRecord(instanceName(), DnsMessage::Txt, unique, ttl);
    text.texts = txt();
    out << text;
    for (const QHostAddress &host : hosts) {
        if (isAny(host))
            continue;
        const bool v4 = host.protocol() == QAbstractSocket::IPv4Protocol;
        DnsMessage::Record address = DnsMessage::makeRecord(hostName(), v4 ? DnsMessage::A : DnsMessage::Aaaa, unique, ttl);
        address.address = host;
        out << address;
    }
    return out;
}

QList<DnsSdService> DnsSdService::fromMessage(const DnsMessage &message, const QByteArray &worldHash,
                                              QStringList *ignored, Kind kind)
{
    const DnsMessage::Name type = serviceName(kind);
    const auto ignore = [&](const QString &why) {
        if (ignored)
            ignored->append(why);
    };
    QList<DnsSdService> found;
    const QList<DnsMessage::Record> records = message.records();
    for (const DnsMessage::Record &ptr : records) {
        if (ptr.type != DnsMessage::Ptr || ptr.ttl == 0 || !DnsMessage::sameName(ptr.name, type))
            continue;
        const QString instance = DnsMessage::nameText(ptr.target);
        if (ptr.target.size() != type.size() + 1 || !DnsMessage::sameName(ptr.target.mid(1), type)) {
            ignore(QStringLiteral("%1 is no instance of %2").arg(instance, DnsMessage::nameText(type)));
            continue;
        }
        const DnsMessage::Record *srv = findRecord(records, ptr.target, DnsMessage::Srv);
        const DnsMessage::Record *txt = findRecord(records, ptr.target, DnsMessage::Txt);
        if (!srv || !txt) {
            ignore(QStringLiteral("%1 comes without its %2 record").arg(instance, srv ? QStringLiteral("TXT") : QStringLiteral("SRV")));
            continue;
        }
        auto service = fromTxt(txt->texts, kind);
        if (!service) {
            ignore(QStringLiteral("%1: %2").arg(instance, service.error().message));
            continue;
        }
        if (!worldHash.isEmpty() && service->worldHash != worldHash) {
            ignore(QStringLiteral("%1 is of another world").arg(instance));
            continue;
        }
        if (service->nodeId.toUtf8() != ptr.target.first()) {
            ignore(QStringLiteral("%1 says it is node '%2'").arg(instance, service->nodeId));
            continue;
        }
        if (srv->port == 0) {
            ignore(QStringLiteral("%1 has port 0").arg(instance));
            continue;
        }
        service->port = srv->port;
        if (!found.contains(*service))
            found << *service;
    }
    return found;
}

QStringList DnsSdService::goodbyesIn(const DnsMessage &message, Kind kind)
{
    const DnsMessage::Name type = serviceName(kind);
    QStringList gone;
    for (const DnsMessage::Record &ptr : message.records())
        if (ptr.type == DnsMessage::Ptr && ptr.ttl == 0 && DnsMessage::sameName(ptr.name, type)
            && ptr.target.size() == type.size() + 1 && DnsMessage::sameName(ptr.target.mid(1), type))
            gone << QString::fromUtf8(ptr.target.first());
    return gone;
}

QStringList DnsSdService::addressesFrom(const QHostAddress &sender) const
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
