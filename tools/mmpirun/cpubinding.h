// CPU binding of the nodes mmpirun starts: like Open MPI's mpirun, each node
// runs on a CPU of its own while there are enough of them, so that the
// scheduler cannot put two busy nodes on one CPU (a 4 MiB round trip over
// tcp took 1.7 ms bound and 1.7-3.6 ms unbound, depending on the run); nodes
// that are a multiple of the CPUs share them in turn, as evenly.
#pragma once

#include <QList>
#include <QString>

#include <optional>

namespace mmpi::tools {

enum class Binding { Auto, Core, None };

// "auto", "core" or "none"; nullopt for anything else.
std::optional<Binding> parseBinding(const QString &text);

// The CPUs this process may run on, in increasing order (empty where the
// system cannot say).
QList<int> allowedCpus();

// The CPU of each rank 0..nodes-1, or an empty list: no binding. Auto binds
// 2 or more nodes when `cpus` holds at least as many CPUs, or when the nodes
// are a multiple of 2 or more CPUs (the same number on each); Core binds
// whatever the counts, rank r on cpus[r % cpus.size()].
QList<int> planBinding(Binding binding, int nodes, const QList<int> &cpus);

// Between fork and exec: the calling process (and every thread it starts
// later) runs on `cpu` only. Async-signal-safe; does nothing for cpu < 0.
void bindThisProcessTo(int cpu);

} // namespace mmpi::tools
