// Patience: how long a test waits for something that must happen (a
// message, a collective, a recovery, a signal) before it calls it a hang.
#pragma once

namespace mmpi::test {

// ms: far above any such step of the suite on a loaded 2-core machine (the
// slowest, a REBUILD's recovery, takes seconds), so that only a hang reaches it.
constexpr int Patience = 20000;

} // namespace mmpi::test
