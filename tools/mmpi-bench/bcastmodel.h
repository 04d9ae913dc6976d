// mmpi-bench bcast-model: what the broadcast model (mmpi/comm/bcastplan.h)
// predicts for every topology over links a profile of the link emulator
// describes, TCP/IP framing included: the numbers a measured table stands
// beside. Runs alone, without mmpirun.
#pragma once

namespace mmpi::bench {

// argv[0] is "bcast-model". Returns the process exit status.
int runBcastModel(int argc, char **argv);

} // namespace mmpi::bench
