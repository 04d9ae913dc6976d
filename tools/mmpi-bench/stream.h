// mmpi-bench stream: rank 0 sends rank 1 a stream of numbered messages and
// rank 1 checks that each arrived exactly once and in order, across whatever
// the links went through meanwhile (reconnections: docs/guide/fault-tolerance.md).
#pragma once

#include <mmpi/comm/communicator.h>

namespace mmpi::bench {

// argv[0] is "stream". Exit status: 0 when every message arrived once and in
// order, 1 when one was lost, doubled or out of order (or the run failed),
// 2 for bad options.
int runStream(World *world, const Communicator &comm, int argc, char **argv, const QString &transport);

} // namespace mmpi::bench
