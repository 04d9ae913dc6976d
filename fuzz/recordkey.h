// The one record key the record fuzzer and its corpus maker share, so that
// the seeds are records the fuzzer's cipher opens and mutations start there.
#pragma once

#include <QByteArray>

namespace mmpi::fuzz {

inline QByteArray recordKey()
{
    QByteArray key(32, Qt::Uninitialized);
    for (int i = 0; i < key.size(); ++i)
        key[i] = char(0xA0 + i);
    return key;
}

} // namespace mmpi::fuzz
