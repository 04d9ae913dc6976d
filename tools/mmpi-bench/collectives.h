// The collective benchmarks of mmpi-bench (bcast, allreduce, barrier,
// alltoall): every rank runs the same schedule of timed calls, measured and
// printed exactly like the Open MPI baseline (bench/collectives.h).
#pragma once

#include <mmpi/comm/communicator.h>

namespace mmpi::bench {

// argv[0] is the benchmark's name. Returns the process exit status.
int runCollective(const Communicator &comm, int argc, char **argv, const QString &transport, const QString &link);
// Whether `name` is one of them.
bool isCollective(const char *name);

} // namespace mmpi::bench
