#include <mmpi/comm/collectiveresult.h>

#include <mmpi/wire/bufferpool.h>

namespace mmpi {

namespace detail {

CollectiveResult::~CollectiveResult()
{
    BufferPool::recycle(std::move(payload.bytes));
    if (operand)
        BufferPool::recycle(std::move(operand->bytes));
    // A non-const loop over an empty QList allocates one (begin() detaches):
    // most results have no parts.
    if (!parts.isEmpty())
        for (Payload &part : parts)
            BufferPool::recycle(std::move(part.bytes));
}

Error partError(int rank, const Error &error)
{
    return {error.code, QStringLiteral("rank %1's part: %2").arg(rank).arg(error.message)};
}

Error unequalCounts(int rank, quint32 count, quint32 expected)
{
    return {ErrorCode::CountMismatch,
            QStringLiteral("rank %1 sent %2 items, rank 0 sent %3 (every rank must send as many)").arg(rank).arg(count).arg(expected)};
}

} // namespace detail

} // namespace mmpi
