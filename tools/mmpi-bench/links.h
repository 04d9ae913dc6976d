// mmpi-bench links: what a fresh world knows of its links, and how soon:
// each rank watches its own links from formation on, without sending
// anything, until it has every peer's round trip and its radio's rate (or
// --wait runs out); rank 0 prints every rank's view.
#pragma once

#include <mmpi/comm/communicator.h>

namespace mmpi::bench {

// argv[0] is "links". Exit status 0 when every rank learned its latencies
// and a rate within --wait, 1 when one did not (or the run failed), 2 for
// bad options.
int runLinks(const World *world, const Communicator &comm, int argc, char **argv, const QString &transport);

} // namespace mmpi::bench
