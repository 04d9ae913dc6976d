// Options: mmpi-linkemu's command line (docs/guide/linkemu.md#usage).
#pragma once

#include "profile.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mmpi::linkemu {

struct Options
{
    int nodes = 2;
    LinkProfile link;         // the profile with every override applied
    double queueMs = 1000;    // a node's queue holds this much of its rate
    std::uint64_t seed = 1;   // jitter and loss
    int mtu = 1500;
    std::uint32_t subnet = 0; // host byte order, .0 of a /24
    // --control: a network beside the radios that nothing shapes (host at
    // .254, node i at .i+1), for a launcher's own traffic; 0: none.
    std::uint32_t controlSubnet = 0;
    bool each = false;        // run the command once in every namespace
    bool stats = false;
    bool realtime = true;     // SCHED_FIFO for the switch when allowed
    bool kernelShaping = true; // a tbf qdisc at the rate on every radio0 (docs/guide/linkemu.md#the-model)
    double timeoutS = 0;      // 0: none
    std::vector<std::string> command;

    std::size_t queueBytes() const;
    std::string address(int node) const; // "10.77.0.<node+1>"
    std::string controlAddress(int node) const; // node -1: the host's
};

struct ParsedOptions
{
    Options options;
    bool help = false;
    std::string error; // set: a usage error, naming the option
};

ParsedOptions parseOptions(const std::vector<std::string> &args);
std::string usage();

} // namespace mmpi::linkemu
