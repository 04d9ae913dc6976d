// CpuOrder: how a broadcast counts ranks from its root (vranks). Where the
// ranks share CPUs and mmpirun bound each to one, they are counted by CPU:
// the root, each other CPU's ranks in turn, the rest of the root's CPU's
// last, so that a CPU's ranks form a contiguous range a node can hand on.
#pragma once

#include <mmpi/comm/bcastplan.h>

#include <QList>
#include <QVarLengthArray>

namespace mmpi::detail {

class CpuOrder
{
public:
    using Cpus = QVarLengthArray<int, 16>; // one entry per rank

    // Plain order (root, root + 1, ...) over `size` ranks.
    CpuOrder(int root, int size);
    // `cpuOf[r]`: the CPU of rank r (the same on every rank of a call).
    CpuOrder(int root, const Cpus &cpuOf);

    int vrankOf(int rank) const { return m_plain ? (rank - m_root + m_size) % m_size : m_vrankOf[rank]; }
    int rankOf(int vrank) const { return m_plain ? (vrank + m_root) % m_size : m_rankOf[vrank]; }
    int cpus() const { return m_cpus; }
    // The most ranks any one CPU runs (all of them in plain order).
    int mostPerCpu() const { return m_mostPerCpu; }
    // Whether ranks [vrank, vrank + length) include another CPU's than vrank's.
    bool spansCpus(int vrank, int length) const;

    // A node at `vrank` serving [vrank, vrank + length) per CPU: each run of
    // another CPU's ranks goes to the first of them, which serves the rest;
    // the ranks of the node's own CPU get the message from it, one by one.
    QList<Delegation> perCpuDelegations(int vrank, int length) const;

private:
    int cpuAt(int vrank) const { return m_plain ? 0 : m_cpuOf[vrank]; }

    // One CPU: vranks are rank - root (mod size), no tables.
    bool m_plain = true;
    int m_root = 0;
    int m_size = 1;
    int m_cpus = 1;
    int m_mostPerCpu = 1;
    QVarLengthArray<int, 16> m_rankOf;  // by vrank
    QVarLengthArray<int, 16> m_vrankOf; // by rank
    QVarLengthArray<int, 16> m_cpuOf;   // by vrank
};

} // namespace mmpi::detail
