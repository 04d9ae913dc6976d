// Byte swaps of whole runs of wire items, between host order and the
// big-endian wire form: Qt's qbswap() in a baseline x86-64 build swaps one
// item at a time; these run on the CPU's vector units where it has them.
#pragma once

#include <QtGlobal>

namespace mmpi::detail {

// `count` items of `itemSize` bytes (1, 2, 4 or 8) from `from` to `to`,
// each with its bytes reversed (1: copied); `to` may be `from`, not overlap
// it otherwise.
void swapItemBytes(int itemSize, const char *from, qsizetype count, char *to);

} // namespace mmpi::detail
