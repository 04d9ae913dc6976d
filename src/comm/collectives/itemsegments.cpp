#include "itemsegments.h"

namespace mmpi::detail {

ItemSegments::ItemSegments(quint32 count, int parts, qsizetype itemBytes)
    : m_count(count), m_parts(qMax(parts, 1)), m_itemBytes(itemBytes)
{
}

} // namespace mmpi::detail
