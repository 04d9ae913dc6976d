#include <mmpi/transport/optionreader.h>

#include <cmath>

namespace mmpi {

namespace {

// Room a decoder keeps beyond one frame for the start of the next.
constexpr qint64 DecoderSlack = 64 * 1024;

} // namespace

OptionReader::OptionReader(QString transportName, QVariantMap options)
    : m_transport(std::move(transportName)), m_remaining(std::move(options))
{
}

bool OptionReader::take(const QString &key, QVariant &value)
{
    m_known << key;
    if (!m_remaining.contains(key))
        return false;
    value = m_remaining.take(key);
    return true;
}

qint64 OptionReader::integer(const QString &key, qint64 defaultValue, qint64 min, qint64 max)
{
    QVariant value;
    if (!take(key, value))
        return defaultValue;
    bool ok = false;
    // JSON and QML hand numbers over as doubles; 1.5 is still not an integer.
    const double asDouble = value.toDouble(&ok);
    const qint64 number = value.toLongLong(&ok);
    if (!ok || value.typeId() == QMetaType::Bool || asDouble != std::floor(asDouble)) {
        reject(key, QStringLiteral("expected an integer, got '%1'").arg(value.toString()));
        return defaultValue;
    }
    if (number < min || number > max) {
        reject(key, QStringLiteral("%1 is outside %2..%3").arg(number).arg(min).arg(max));
        return defaultValue;
    }
    return number;
}

QString OptionReader::string(const QString &key, const QString &defaultValue)
{
    QVariant value;
    if (!take(key, value))
        return defaultValue;
    if (value.typeId() != QMetaType::QString && value.typeId() != QMetaType::QByteArray) {
        reject(key, QStringLiteral("expected a string, got a %1").arg(QString::fromLatin1(value.typeName())));
        return defaultValue;
    }
    return value.toString();
}

QStringList OptionReader::stringList(const QString &key, const QStringList &defaultValue)
{
    QVariant value;
    if (!take(key, value))
        return defaultValue;
    QStringList items;
    if (value.typeId() == QMetaType::QString)
        items = value.toString().split(u',', Qt::SkipEmptyParts);
    else if (value.typeId() == QMetaType::QStringList || value.typeId() == QMetaType::QVariantList)
        items = value.toStringList();
    else {
        reject(key, QStringLiteral("expected a list of strings, got a %1")
                        .arg(QString::fromLatin1(value.typeName())));
        return defaultValue;
    }
    for (QString &item : items)
        item = item.trimmed();
    items.removeAll(QString());
    return items;
}

DecoderLimits OptionReader::decoderLimits()
{
    DecoderLimits limits;
    // The header's length field is 32 bits: no frame is larger than this.
    constexpr qint64 Largest = FrameHeaderSize + qint64(0xFFFFFFFF);
    limits.maxFrameSize = integer(QStringLiteral("maxFrameSize"), limits.maxFrameSize, FrameHeaderSize, Largest);
    limits.maxBufferedBytes = limits.maxFrameSize + DecoderSlack;
    return limits;
}

int OptionReader::socketBufferSize()
{
    constexpr qint64 Largest = 64 * 1024 * 1024;
    return int(integer(QStringLiteral("socketBuffer"), DefaultSocketBuffer, 0, Largest));
}

void OptionReader::reject(const QString &key, const QString &reason)
{
    if (m_error.isError())
        return;
    m_error = Error(ErrorCode::BadConfiguration,
                    QStringLiteral("option '%1' of transport %2: %3").arg(key, m_transport, reason));
}

Result<void> OptionReader::finish() const
{
    if (m_error.isError())
        return m_error;
    if (m_remaining.isEmpty())
        return success();
    QStringList known = m_known;
    known.sort();
    return Error(ErrorCode::BadConfiguration,
                 QStringLiteral("transport %1 has no option '%2' (known: %3)")
                     .arg(m_transport, m_remaining.firstKey(),
                          known.isEmpty() ? QStringLiteral("none") : known.join(QStringLiteral(", "))));
}

} // namespace mmpi
