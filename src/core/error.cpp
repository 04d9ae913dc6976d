#include <mmpi/core/error.h>

#include <QMetaEnum>

namespace mmpi {

QString errorCodeName(ErrorCode code)
{
    const char *key = QMetaEnum::fromType<ErrorCode>().valueToKey(int(code));
    return key ? QString::fromLatin1(key) : QStringLiteral("ErrorCode(%1)").arg(int(code));
}

QString Error::toString() const
{
    if (!isError())
        return QStringLiteral("NoError");
    return errorCodeName(code) + QStringLiteral(": ") + message;
}

} // namespace mmpi
