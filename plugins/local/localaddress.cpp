#include "localaddress.h"

#include <QRegularExpression>

namespace mmpi {

namespace {

const QString Scheme = QStringLiteral("local://");
// Unix socket paths are limited to about 100 bytes, temp directory included.
constexpr int MaxNameLength = 80;

} // namespace

Result<QString> parseLocalAddress(const QString &address)
{
    static const QRegularExpression validName(QStringLiteral("^[A-Za-z0-9._-]+$"));
    const QString name = address.startsWith(Scheme) ? address.mid(Scheme.size()) : QString();
    if (name.isEmpty() || name.size() > MaxNameLength || !validName.match(name).hasMatch()
        || name.startsWith(u'.'))
        return Error(ErrorCode::BadAddress,
                     QStringLiteral("malformed local address '%1'; expected local://<name>, the name "
                                    "1 to %2 letters, digits, '_', '-' or '.' (not first)")
                         .arg(address).arg(MaxNameLength));
    return name;
}

QString formatLocalAddress(const QString &serverName)
{
    return Scheme + serverName;
}

} // namespace mmpi
