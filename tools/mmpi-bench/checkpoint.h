// mmpi-bench checkpoint: what a checkpoint costs on this device's storage —
// k0 (write) and k1 (restore) of mmpi::CheckpointStore per state size,
// beside the raw bandwidth of `dd ... conv=fsync` on the same directory.
// Runs on its own, without mmpirun.
#pragma once

namespace mmpi::bench {

// argv[0] is "checkpoint". Returns the process exit status.
int runCheckpoint(int argc, char **argv);

} // namespace mmpi::bench
