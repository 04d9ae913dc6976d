#include "byteswap.h"

#include <mmpi/core/vectorclones.h>

#include <QtEndian>

#include <cstring>

namespace mmpi::detail {

namespace {

template<typename Bits>
MMPI_VECTOR_CLONES void swapRun(const char *from, qsizetype count, char *to)
{
    // Item i is read and written at the same index only: no loop-carried
    // dependence, also when to == from.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC ivdep
#endif
    for (qsizetype i = 0; i < count; ++i) {
        Bits bits;
        std::memcpy(&bits, from + i * qsizetype(sizeof bits), sizeof bits);
        bits = qbswap(bits);
        std::memcpy(to + i * qsizetype(sizeof bits), &bits, sizeof bits);
    }
}

} // namespace

void swapItemBytes(int itemSize, const char *from, qsizetype count, char *to)
{
    switch (itemSize) {
    case 1:
        if (to != from && count > 0)
            std::memcpy(to, from, size_t(count));
        return;
    case 2: return swapRun<quint16>(from, count, to);
    case 4: return swapRun<quint32>(from, count, to);
    case 8: return swapRun<quint64>(from, count, to);
    default: Q_UNREACHABLE();
    }
}

} // namespace mmpi::detail
