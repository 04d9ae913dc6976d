// The tags a receive accepts, as in PJ: one exact tag, any tag, or an
// inclusive range. A receive that names no tag matches tag 0 only, as PJ's
// receive without a tag does.
#pragma once

#include <QtGlobal>

#include <limits>

namespace mmpi::mp {

struct TagRange
{
    qint32 low = 0;
    qint32 high = 0;

    static constexpr TagRange exact(qint32 tag) { return {tag, tag}; }
    static constexpr TagRange any()
    {
        return {std::numeric_limits<qint32>::min(), std::numeric_limits<qint32>::max()};
    }
    // Inclusive at both ends; an empty range (low > high) matches nothing.
    static constexpr TagRange range(qint32 low, qint32 high) { return {low, high}; }

    constexpr bool contains(qint32 tag) const { return low <= tag && tag <= high; }
    constexpr bool operator==(const TagRange &) const = default;
};

} // namespace mmpi::mp
