// LinkProfile: how one node's radio behaves in the link emulator: the one-way
// latency every frame is held for, the rate its frames leave at (all of a
// node's sends share it), and optional jitter and loss. The named profiles
// are the sim transport's (docs/guide/transports.md#profiles), so a test or a
// benchmark means the same radio on both.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mmpi::linkemu {

struct LinkProfile
{
    std::string name;
    double latencyMs = 0;          // one way, from the end of a frame's transmission
    double rateBytesPerSecond = 0; // on the wire (IP packets, headers included)
    double jitterMs = 0;           // up to this much more latency, uniformly; never reorders
    double loss = 0;               // probability that a frame sent is lost on the air
};

std::optional<LinkProfile> findProfile(std::string_view name);

// "bluetooth, bluetooth-edr, wifi": for usage errors and --help.
std::string profileNames();

} // namespace mmpi::linkemu
