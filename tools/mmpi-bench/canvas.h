// mmpi-bench canvas: how fast MMPE's ParallelCanvas broadcasts drawing
// primitives to every node (primitives per second until the last node has
// applied the last frame), and the encoding's bytes per primitive.
#pragma once

#include <mmpi/comm/communicator.h>

namespace mmpi::bench {

// argv[0] is "canvas". Returns the process exit status.
int runCanvas(const Communicator &comm, int argc, char **argv, const QString &transport, const QString &link);

} // namespace mmpi::bench
