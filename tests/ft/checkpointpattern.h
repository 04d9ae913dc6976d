// The state checkpointwriter saves as epoch N and tst_checkpointstore
// expects back: a size and bytes that depend on N, so a torn or mixed-up
// checkpoint cannot pass for a whole one.
#pragma once

#include <QByteArray>

#include <algorithm>
#include <cstring>

inline QByteArray checkpointPattern(quint64 epoch)
{
    const qsizetype size = 256 * 1024 + qsizetype((epoch * 7919) % (2 * 1024 * 1024));
    // Blocks of 4 KiB, each of one byte value: cheap to make, so that the
    // writer spends its time writing, where the kills should land.
    QByteArray bytes(size, Qt::Uninitialized);
    for (qsizetype block = 0; block < size; block += 4096)
        std::memset(bytes.data() + block, int((epoch * 131 + quint64(block) / 4096 * 17) & 0xff),
                    size_t(std::min<qsizetype>(4096, size - block)));
    return bytes;
}
