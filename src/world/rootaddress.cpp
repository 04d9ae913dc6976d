#include <mmpi/world/rootaddress.h>

#include <mmpi/world/joincode.h>

#include <QUrl>

#include <algorithm>

namespace mmpi {

namespace {

Error bad(const QString &text, const QString &reason)
{
    return Error(ErrorCode::BadAddress, QStringLiteral("root address '%1' %2").arg(text, reason));
}

bool isDigitsAndDots(const QString &host)
{
    return std::all_of(host.begin(), host.end(), [](QChar c) { return c == u'.' || (c >= u'0' && c <= u'9'); });
}

// Four decimal parts of 0..255: QHostAddress also reads "10.1" and "0x0a.1",
// which a person who typed them most likely did not mean.
bool isDottedQuad(const QString &host)
{
    const QStringList parts = host.split(u'.');
    return parts.size() == 4 && std::all_of(parts.begin(), parts.end(), [](const QString &part) {
               return !part.isEmpty() && part.size() <= 3 && part.toInt() <= 255;
           });
}

bool isLabel(QByteArrayView label)
{
    if (label.isEmpty() || label.size() > 63 || label.front() == '-' || label.back() == '-')
        return false;
    return std::all_of(label.begin(), label.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    });
}

// RFC 1123 host name, after IDNA; one trailing dot (a rooted name) allowed.
QString asHostName(const QString &host)
{
    QByteArray ace = QUrl::toAce(host);
    if (ace.endsWith('.'))
        ace.chop(1);
    if (ace.isEmpty() || ace.size() > 253)
        return {};
    const QList<QByteArray> labels = ace.split('.');
    if (!std::all_of(labels.begin(), labels.end(), [](const QByteArray &label) { return isLabel(label); }))
        return {};
    return QString::fromLatin1(ace);
}

} // namespace

Result<RootAddress> RootAddress::parse(const QString &typed, quint16 defaultPort)
{
    const QString text = typed.trimmed();
    if (text.isEmpty())
        return bad(typed, QStringLiteral("is empty"));
    if (text.contains(QLatin1String("://")))
        return bad(text, QStringLiteral("has a scheme: type host or host:port, the port the root's beacon "
                                         "listens on, not its link address"));
    if (text.startsWith(u'[') || text.count(u':') > 1)
        return bad(text, QStringLiteral("is an IPv6 address: the root hears adverts over IPv4 only (type its "
                                         "IPv4 address or host name)"));
    RootAddress address;
    QString host = text;
    address.m_port = defaultPort;
    if (const qsizetype colon = text.indexOf(u':'); colon >= 0) {
        host = text.left(colon);
        bool ok = false;
        const uint port = text.mid(colon + 1).toUInt(&ok);
        if (!ok || port == 0 || port > 65535)
            return bad(text, QStringLiteral("has port '%1', not one of 1..65535").arg(text.mid(colon + 1)));
        address.m_port = quint16(port);
    }
    if (isDigitsAndDots(host)) {
        const QHostAddress ip(host);
        if (!isDottedQuad(host) || ip.protocol() != QAbstractSocket::IPv4Protocol)
            return bad(text, QStringLiteral("is not an IPv4 address (four numbers of 0..255: 192.168.1.20)"));
        if (ip.isMulticast() || ip.isBroadcast() || ip == QHostAddress(QHostAddress::AnyIPv4))
            return bad(text, QStringLiteral("is not a unicast IPv4 address"));
        address.m_host = ip.toString();
        return address;
    }
    address.m_host = asHostName(host);
    if (address.m_host.isEmpty())
        return bad(text, QStringLiteral("is neither an IPv4 address nor a host name"));
    address.m_isName = true;
    return address;
}

quint16 RootAddress::beaconPort(const QVariantMap &transportOptions)
{
    bool ok = false;
    const uint port = transportOptions.value(QStringLiteral("beaconPort")).toUInt(&ok);
    // An out-of-range port is the transport's to refuse (configure()).
    return ok && port > 0 && port <= 65535 ? quint16(port) : JoinCode::DefaultBeaconPort;
}

QString RootAddress::beaconContact(const QHostAddress &address, quint16 port)
{
    return QStringLiteral("tcp://%1:%2").arg(address.toString()).arg(port);
}

QString RootAddress::contact() const
{
    return m_isName ? QString() : beaconContact(QHostAddress(m_host), m_port);
}

} // namespace mmpi
