#include "cpuorder.h"

#include <QtGlobal>

namespace mmpi::detail {

CpuOrder::CpuOrder(int root, int size, int groups)
    : m_root(root), m_size(qMax(size, 1)), m_groups(groups >= 1 && size % groups == 0 ? groups : 1)
{
}

int CpuOrder::groupsFor(int size, int sharedCpus)
{
    return sharedCpus >= 2 && size > sharedCpus && size % sharedCpus == 0 ? sharedCpus : 1;
}

// Rank root + k + j * groups (mod size) is the j-th rank on the root's CPU
// plus k: vrank 0 for the root, then k = 1, 2, ... with g ranks each, then
// the root's CPU's other g - 1 ranks. With one group: rank - root.
int CpuOrder::vrankOf(int rank) const
{
    const int d = ((rank - m_root) % m_size + m_size) % m_size;
    const int k = d % m_groups, j = d / m_groups;
    if (d == 0)
        return 0;
    return k > 0 ? 1 + (k - 1) * groupSize() + j : 1 + (m_groups - 1) * groupSize() + (j - 1);
}

int CpuOrder::rankOf(int vrank) const
{
    if (vrank == 0)
        return m_root;
    const int g = groupSize(), others = (m_groups - 1) * g;
    const int k = vrank - 1 < others ? (vrank - 1) / g + 1 : 0;
    const int j = vrank - 1 < others ? (vrank - 1) % g : vrank - others;
    return (m_root + k + j * m_groups) % m_size;
}

int CpuOrder::groupOf(int vrank) const
{
    const int others = (m_groups - 1) * groupSize();
    return vrank == 0 || vrank > others ? 0 : (vrank - 1) / groupSize() + 1;
}

bool CpuOrder::spansGroups(int vrank, int length) const
{
    for (int v = vrank + 1; v < vrank + length; ++v)
        if (groupOf(v) != groupOf(vrank))
            return true;
    return false;
}

QList<Delegation> CpuOrder::perGroupDelegations(int vrank, int length) const
{
    const int own = groupOf(vrank), end = vrank + length;
    QList<Delegation> out;
    for (int v = vrank + 1; v < end;) {
        int next = v + 1;
        if (groupOf(v) == own) {
            out.append({v - vrank, 1});
        } else {
            while (next < end && groupOf(next) == groupOf(v))
                ++next;
            out.append({v - vrank, next - v});
        }
        v = next;
    }
    return out;
}

} // namespace mmpi::detail
