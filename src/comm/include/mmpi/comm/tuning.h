// Tuning and diagnostics of the collectives: the link model a node decides
// its broadcasts with, an override of it, and what the last broadcast and
// allreduce chose (docs/design/collectives.md, "The decisions"; broadcast.md).
// Apps rarely need them; benchmarks and tests do.
// The model starts from what the transport says its medium is
// (World::expectedLink()) and takes its latency from the world's heartbeat
// round trips (World::linkQuality()) as they come in.
#pragma once

#include <mmpi/comm/allreduceoptions.h>
#include <mmpi/comm/bcastplan.h>

#include <optional>

namespace mmpi {

class Communicator;

// What the last bcast() this node forwarded on any communicator of the
// world chose for its range (the root: for the whole group). Empty before
// any, and for a null communicator.
std::optional<BcastPlan> lastBcastPlan(const Communicator &comm);

// The algorithm the last allreduce() this node started on any communicator
// of the world runs (never Auto; where a forced ring cannot run the call,
// the one that runs instead). Empty before any, and for a null communicator.
std::optional<AllreduceAlgorithm> lastAllreduceAlgorithm(const Communicator &comm);

// The link model this node would decide a broadcast to the other members
// of `comm` with now: the medium's rate and per-frame cost, and the latency
// of half the smoothed heartbeat round trips to them (the medium's until a
// heartbeat has come back). The defaults of LinkModel for a null communicator.
LinkModel linkModel(const Communicator &comm);

// Fixes the link model of every communicator of `comm`'s world (an app
// that knows its medium better than its transport does); nullopt goes back
// to the medium and the heartbeats.
void setLinkModel(const Communicator &comm, std::optional<LinkModel> model);

} // namespace mmpi
