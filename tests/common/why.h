// why(result): the reason a Result failed, for the message of QVERIFY2, which
// evaluates its message even when the check passes (so it must not call
// error() on a Result that holds a value).
#pragma once

#include <QString>

namespace mmpi::test {

template<typename R>
QString why(const R &result)
{
    return result.hasValue() ? QString() : result.error().toString();
}

} // namespace mmpi::test
