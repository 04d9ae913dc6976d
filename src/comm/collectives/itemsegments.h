// ItemSegments: a contribution of fixed-size items cut into `parts` runs of
// whole items, part i being items [i * count / parts, (i + 1) * count / parts):
// the parts differ by one item at most, and every rank that cuts the same
// count into as many parts gets the same ones, so that what a peer sends of
// a part is what this rank combines it with. The ring allreduce moves one
// part a step, the recursive-halving one a run of consecutive parts.
#pragma once

#include <QtGlobal>

namespace mmpi::detail {

class ItemSegments
{
public:
    ItemSegments() = default;
    ItemSegments(quint32 count, int parts, qsizetype itemBytes);

    int parts() const { return m_parts; }
    // Items of parts [first, end), and where in the contribution they lie.
    quint32 count(int first, int end) const { return quint32(firstItem(end) - firstItem(first)); }
    qsizetype offset(int part) const { return qsizetype(firstItem(part)) * m_itemBytes; }
    qsizetype bytes(int first, int end) const { return offset(end) - offset(first); }
    // One part alone.
    quint32 count(int part) const { return count(part, part + 1); }
    qsizetype bytes(int part) const { return bytes(part, part + 1); }

private:
    qint64 firstItem(int part) const { return m_parts > 0 ? qint64(m_count) * part / m_parts : 0; }

    quint32 m_count = 0;
    int m_parts = 0;
    qsizetype m_itemBytes = 0;
};

} // namespace mmpi::detail
