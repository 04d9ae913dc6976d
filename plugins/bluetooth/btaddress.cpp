#include "btaddress.h"

#include <QRegularExpression>

namespace mmpi {

namespace {

const QString Scheme = QStringLiteral("bt://");

Error badAddress(const QString &address, const QString &why)
{
    return {ErrorCode::BadAddress, QStringLiteral("bad bluetooth address '%1': %2 "
                                                  "(expected bt://AA:BB:CC:DD:EE:FF/<channel 1-30>)")
                                       .arg(address.left(80), why)};
}

} // namespace

Result<quint64> parseBtDevice(const QString &text)
{
    static const QRegularExpression pattern(QStringLiteral("^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$"));
    if (!pattern.match(text).hasMatch())
        return Error(ErrorCode::BadAddress, QStringLiteral("'%1' is not a device address like AA:BB:CC:DD:EE:FF")
                                                .arg(text.left(80)));
    QString digits = text;
    digits.remove(u':');
    return digits.toULongLong(nullptr, 16);
}

QString formatBtDevice(quint64 device)
{
    QStringList bytes;
    for (int shift = 40; shift >= 0; shift -= 8)
        bytes << QStringLiteral("%1").arg((device >> shift) & 0xff, 2, 16, QLatin1Char('0')).toUpper();
    return bytes.join(u':');
}

Result<BtEndpoint> parseBtAddress(const QString &address, bool allowAnyChannel)
{
    if (!address.startsWith(Scheme))
        return badAddress(address, QStringLiteral("it does not start with bt://"));
    const QString rest = address.mid(Scheme.size());
    const qsizetype slash = rest.indexOf(u'/');
    if (slash < 0)
        return badAddress(address, QStringLiteral("no /<channel>"));
    auto device = parseBtDevice(rest.left(slash));
    if (!device)
        return badAddress(address, device.error().message);
    bool ok = false;
    const QString channelText = rest.mid(slash + 1);
    const uint channel = channelText.toUInt(&ok);
    static const QRegularExpression digits(QStringLiteral("^[0-9]{1,2}$"));
    if (!ok || !digits.match(channelText).hasMatch() || channel > 30 || (channel == 0 && !allowAnyChannel))
        return badAddress(address, QStringLiteral("the RFCOMM channel must be 1-30"));
    return BtEndpoint{*device, quint8(channel)};
}

QString formatBtAddress(const BtEndpoint &endpoint)
{
    return Scheme + formatBtDevice(endpoint.device) + u'/' + QString::number(endpoint.channel);
}

} // namespace mmpi
