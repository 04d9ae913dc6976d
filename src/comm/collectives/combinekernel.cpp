// The built-in reductions, compiled once here so that they can use the
// vector units of the CPU they run on: the copy of combineItems() a user's
// program compiles for the baseline x86-64 (SSE2) does fewer items at a time.
#include <mmpi/comm/reduceop.h>
#include <mmpi/core/vectorclones.h>

namespace mmpi::detail {

namespace {

template<typename E>
MMPI_VECTOR_CLONES void combineBuiltin(Op op, char *to, const char *mine, const char *from, qsizetype bytes)
{
    ReduceOp<E>(op).withFunction([&](auto apply) { combineItems<E>(to, mine, from, bytes, apply); });
}

template<typename E>
bool combineIfSupported(Op op, char *to, const char *mine, const char *from, qsizetype bytes)
{
    if (!ReduceOp<E>(op).check())
        return false;
    combineBuiltin<E>(op, to, mine, from, bytes);
    return true;
}

} // namespace

bool combineBuiltinItems(Op op, ItemType type, char *to, const char *mine, const char *from, qsizetype bytes)
{
    // The arithmetic types; the others are rarely reduced in bulk.
    switch (type) {
    case ItemType::Int: return combineIfSupported<qint32>(op, to, mine, from, bytes);
    case ItemType::Long: return combineIfSupported<qint64>(op, to, mine, from, bytes);
    case ItemType::Float: return combineIfSupported<float>(op, to, mine, from, bytes);
    case ItemType::Double: return combineIfSupported<double>(op, to, mine, from, bytes);
    default: return false;
    }
}

} // namespace mmpi::detail
