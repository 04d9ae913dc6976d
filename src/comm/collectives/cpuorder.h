// CpuOrder: how a broadcast counts ranks from its root (vranks). Where the
// ranks outnumber the CPUs they share and fill them evenly, mmpirun binds
// rank r to CPU r mod c; the ranks are then counted by CPU: the root, each
// other CPU's ranks in turn, the rest of the root's CPU's last, so that a
// CPU's ranks form a contiguous range a node can hand on whole.
#pragma once

#include <mmpi/comm/bcastplan.h>

#include <QList>

namespace mmpi::detail {

class CpuOrder
{
public:
    // `groups` CPUs the ranks share (1: plain order, root first, then
    // root + 1, ...); every rank of a call must use the same.
    CpuOrder(int root, int size, int groups);

    // The groups for `size` ranks sharing `sharedCpus` CPUs (0: not shared):
    // as many as the CPUs where the ranks are a multiple of them, else 1.
    static int groupsFor(int size, int sharedCpus);

    int vrankOf(int rank) const;
    int rankOf(int vrank) const;
    int groups() const { return m_groups; }
    int groupSize() const { return m_size / m_groups; }
    // Whether ranks [vrank, vrank + length) include another CPU's than vrank's.
    bool spansGroups(int vrank, int length) const;

    // A node at `vrank` serving [vrank, vrank + length) per CPU: each run of
    // another CPU's ranks goes to the first of them, which serves the rest;
    // the ranks of the node's own CPU get the message from it, one by one.
    QList<Delegation> perGroupDelegations(int vrank, int length) const;

private:
    int groupOf(int vrank) const; // 0: the root's CPU

    int m_root;
    int m_size;
    int m_groups;
};

} // namespace mmpi::detail
