// The pingpong benchmark of mmpi-bench: rank 0 sends `size` bytes to rank 1
// and waits for them to come back, timed per round trip (with --oneway: bursts
// one way, each answered by a byte), measured and printed exactly like the
// raw-socket, Qt, ZeroMQ and Open MPI baselines (bench/pingpong.h).
#pragma once

#include <mmpi/comm/communicator.h>

namespace mmpi::bench {

// Returns the process exit status.
int runPingPong(const Communicator &comm, int argc, char **argv, const QString &transport);

} // namespace mmpi::bench
