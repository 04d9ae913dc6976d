#include "qmlresult.h"

namespace mmpi::qmlresult {

QVariantMap ok(QVariantMap fields)
{
    fields.insert(QStringLiteral("ok"), true);
    fields.insert(QStringLiteral("error"), QString());
    fields.insert(QStringLiteral("code"), errorCodeName(ErrorCode::NoError));
    return fields;
}

QVariantMap failed(const Error &error)
{
    return {{QStringLiteral("ok"), false},
            {QStringLiteral("error"), error.message},
            {QStringLiteral("code"), errorCodeName(error.code)}};
}

} // namespace mmpi::qmlresult
