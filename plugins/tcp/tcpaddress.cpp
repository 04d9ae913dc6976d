#include "tcpaddress.h"

#include <QUrl>

namespace mmpi {

namespace {

Error badAddress(const QString &address, const QString &reason)
{
    return Error(ErrorCode::BadAddress,
                 QStringLiteral("malformed tcp address '%1' (%2); expected tcp://host:port")
                     .arg(address, reason));
}

} // namespace

Result<TcpEndpoint> parseTcpAddress(const QString &address)
{
    const QUrl url(address, QUrl::StrictMode);
    if (!url.isValid())
        return badAddress(address, url.errorString());
    if (url.scheme() != QLatin1String("tcp"))
        return badAddress(address, QStringLiteral("the scheme is not tcp"));
    if (url.host().isEmpty())
        return badAddress(address, QStringLiteral("no host"));
    if (url.port() < 0)
        return badAddress(address, QStringLiteral("no port"));
    if (!url.path().isEmpty() || !url.userInfo().isEmpty() || url.hasQuery() || url.hasFragment())
        return badAddress(address, QStringLiteral("unexpected path, user, query or fragment"));
    return TcpEndpoint{url.host(), quint16(url.port())};
}

QString formatTcpAddress(const QString &host, quint16 port)
{
    const QString printed = host.contains(u':') ? u'[' + host + u']' : host;
    return QStringLiteral("tcp://%1:%2").arg(printed).arg(port);
}

QString formatTcpAddress(const QHostAddress &host, quint16 port)
{
    bool isV4 = false;
    const quint32 v4 = host.toIPv4Address(&isV4);
    return formatTcpAddress(isV4 ? QHostAddress(v4).toString() : host.toString(), port);
}

std::optional<QHostAddress> listenHostAddress(const QString &host)
{
    if (host == QLatin1String("any"))
        return QHostAddress(QHostAddress::Any);
    if (host == QLatin1String("localhost"))
        return QHostAddress(QHostAddress::LocalHost);
    const QHostAddress address(host);
    if (address.isNull())
        return std::nullopt;
    return address;
}

bool isAnyHost(const QString &host)
{
    if (host == QLatin1String("any"))
        return true;
    const QHostAddress address(host);
    return address == QHostAddress(QHostAddress::AnyIPv4) || address == QHostAddress(QHostAddress::AnyIPv6);
}

} // namespace mmpi
