#include "cpuorder.h"

#include <QHash>

#include <algorithm>

namespace mmpi::detail {

CpuOrder::CpuOrder(int root, int size)
    : m_root(root), m_size(qMax(size, 1)), m_mostPerCpu(qMax(size, 1))
{
}

// The root, then every other CPU's ranks (CPUs in the order they first occur
// after the root), then the root's CPU's other ranks; within a CPU, ranks as
// they follow the root (root + 1, root + 2, ... wrapping around).
CpuOrder::CpuOrder(int root, const QList<int> &cpuOf)
    : CpuOrder(root, int(cpuOf.size()))
{
    const int n = int(cpuOf.size());
    if (std::all_of(cpuOf.cbegin(), cpuOf.cend(), [&](int cpu) { return cpu == cpuOf.constFirst(); }))
        return;
    m_plain = false;
    m_mostPerCpu = 1;
    QList<int> cpuOrder;
    QHash<int, QList<int>> ranksOn;
    for (int d = 1; d < n; ++d) {
        const int r = (root + d) % n;
        const int cpu = cpuOf.at(r);
        if (cpu != cpuOf.at(root) && !ranksOn.contains(cpu))
            cpuOrder.append(cpu);
        ranksOn[cpu].append(r);
    }
    cpuOrder.append(cpuOf.at(root));
    m_rankOf.append(root);
    m_cpuOf.append(cpuOf.at(root));
    for (int cpu : std::as_const(cpuOrder)) {
        const QList<int> ranks = ranksOn.value(cpu);
        m_rankOf.append(ranks);
        m_cpuOf.append(QList<int>(ranks.size(), cpu));
        m_mostPerCpu = qMax(m_mostPerCpu, int(ranks.size()) + (cpu == cpuOf.at(root) ? 1 : 0));
    }
    m_cpus = int(cpuOrder.size());
    m_vrankOf = QList<int>(n, 0);
    for (int v = 0; v < n; ++v)
        m_vrankOf[m_rankOf.at(v)] = v;
}

int CpuOrder::cpuOf(int worldRank, int worldSize, int sharedCpus)
{
    const bool evenly = sharedCpus >= 2 && worldSize > sharedCpus && worldSize % sharedCpus == 0;
    return evenly ? worldRank % sharedCpus : 0;
}

bool CpuOrder::spansCpus(int vrank, int length) const
{
    for (int v = vrank + 1; v < vrank + length; ++v)
        if (cpuAt(v) != cpuAt(vrank))
            return true;
    return false;
}

QList<Delegation> CpuOrder::perCpuDelegations(int vrank, int length) const
{
    const int own = cpuAt(vrank), end = vrank + length;
    QList<Delegation> out;
    for (int v = vrank + 1; v < end;) {
        int next = v + 1;
        if (cpuAt(v) == own) {
            out.append({v - vrank, 1});
        } else {
            while (next < end && cpuAt(next) == cpuAt(v))
                ++next;
            out.append({v - vrank, next - v});
        }
        v = next;
    }
    return out;
}

} // namespace mmpi::detail
