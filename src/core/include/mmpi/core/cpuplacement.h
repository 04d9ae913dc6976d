// Where mmpirun runs the nodes of a world on one machine: a contract between
// the launcher, which binds them, and the nodes, whose broadcasts count
// ranks by the CPU they run on (docs/mmpirun.md#cpu-binding).
#pragma once

namespace mmpi {

// Whether `nodes` nodes sharing `cpus` CPUs are bound in turn by mmpirun's
// --bind-to auto, node r on the (r mod cpus)-th CPU: when each gets a CPU
// of its own, or every CPU the same number of them.
constexpr bool bindsInTurn(int nodes, int cpus)
{
    return nodes >= 2 && cpus >= 2 && (nodes <= cpus || nodes % cpus == 0);
}

} // namespace mmpi
