// OptionReader: reads the option map a transport gets in configure(): typed
// values with range checks and defaults, and one BadConfiguration error naming
// the first bad or unknown key. Transports parse into a local struct and apply
// it only when finish() succeeds, so a bad map changes nothing.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/wire/framedecoder.h>

#include <QStringList>
#include <QVariantMap>

namespace mmpi {

class OptionReader
{
public:
    OptionReader(QString transportName, QVariantMap options);

    // Each getter removes `key` from the map and returns its value, or
    // `defaultValue` if the key is absent or wrong (the error is kept).
    qint64 integer(const QString &key, qint64 defaultValue, qint64 min, qint64 max);
    QString string(const QString &key, const QString &defaultValue);
    // A list value, or one string of comma-separated items.
    QStringList stringList(const QString &key, const QStringList &defaultValue);
    // The "maxFrameSize" option (bytes, header included; default 256 MiB) as
    // decoder limits for the transport's links.
    DecoderLimits decoderLimits();
    // The "socketBuffer" option of stream transports (bytes, 0..64 MiB;
    // 0: the system's own sizing): see StreamLink::setSocketBufferSize().
    static constexpr int DefaultSocketBuffer = 4 * 1024 * 1024;
    int socketBufferSize();
    // Records an error about `key` found by the caller's own validation.
    void reject(const QString &key, const QString &reason);

    // Success, the first recorded error, or an error naming a key nobody read.
    Result<void> finish() const;

private:
    bool take(const QString &key, QVariant &value);

    QString m_transport;
    QVariantMap m_remaining;
    QStringList m_known;
    Error m_error;
};

} // namespace mmpi
