// How an asynchronous operation of the QML module reports its outcome to
// JavaScript: QCoro's QmlTask only resolves (it has no reject), so the value
// is an object {ok, error, code, ...} that a `then()` callback inspects.
#pragma once

#include <mmpi/core/error.h>

#include <QVariantMap>

namespace mmpi::qmlresult {

// {ok: true} plus the given fields.
QVariantMap ok(QVariantMap fields = {});
// {ok: false, error: "<message>", code: "<ErrorCode name>"}.
QVariantMap failed(const Error &error);

} // namespace mmpi::qmlresult
