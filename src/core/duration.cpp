#include <mmpi/core/duration.h>

#include <QRegularExpression>

#include <cmath>

namespace mmpi {

Result<std::chrono::milliseconds> parseDuration(const QString &token, const QString &what)
{
    static const QRegularExpression pattern(QStringLiteral("^(-?)(\\d{1,9}(?:\\.\\d{1,3})?)(ms|s)$"));
    const auto refuse = [&](const QString &why) {
        return Error(ErrorCode::BadConfiguration, QStringLiteral("%1 '%2' %3").arg(what, token, why));
    };
    const auto match = pattern.match(token);
    if (!match.hasMatch())
        return refuse(QStringLiteral("is not a time like 3s, 1.5s or 250ms"));
    if (!match.captured(1).isEmpty())
        return refuse(QStringLiteral("is negative"));
    const double value = match.captured(2).toDouble();
    const double ms = std::round(match.captured(3) == QLatin1String("s") ? value * 1000.0 : value);
    if (ms > double(MaxDuration.count()))
        return refuse(QStringLiteral("is longer than a day"));
    return std::chrono::milliseconds(qint64(ms));
}

} // namespace mmpi
