#include "cpuorder.h"

#include <algorithm>

namespace mmpi::detail {

CpuOrder::CpuOrder(int root, int size)
    : m_root(root), m_size(qMax(size, 1)), m_mostPerCpu(qMax(size, 1))
{
}

// The root, then every other CPU's ranks (CPUs in the order they first occur
// after the root), then the root's CPU's other ranks; within a CPU, ranks as
// they follow the root (root + 1, root + 2, ... wrapping around).
CpuOrder::CpuOrder(int root, const Cpus &cpuOf)
    : CpuOrder(root, int(cpuOf.size()))
{
    const int n = int(cpuOf.size());
    const int rootCpu = cpuOf[root];
    if (std::all_of(cpuOf.cbegin(), cpuOf.cend(), [&](int cpu) { return cpu == rootCpu; }))
        return;
    m_plain = false;
    QVarLengthArray<int, 16> order; // CPUs, the root's last
    for (int d = 1; d < n; ++d)
        if (const int cpu = cpuOf[(root + d) % n]; cpu != rootCpu && !order.contains(cpu))
            order.append(cpu);
    order.append(rootCpu);
    m_rankOf.append(root);
    m_cpuOf.append(rootCpu);
    m_mostPerCpu = 1;
    for (const int cpu : std::as_const(order)) {
        int count = cpu == rootCpu ? 1 : 0;
        for (int d = 1; d < n; ++d) {
            if (const int r = (root + d) % n; cpuOf[r] == cpu) {
                m_rankOf.append(r);
                m_cpuOf.append(cpu);
                ++count;
            }
        }
        m_mostPerCpu = qMax(m_mostPerCpu, count);
    }
    m_cpus = int(order.size());
    m_vrankOf.resize(n);
    for (int v = 0; v < n; ++v)
        m_vrankOf[m_rankOf[v]] = v;
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
