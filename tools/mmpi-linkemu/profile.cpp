#include "profile.h"

#include <array>

namespace mmpi::linkemu {

namespace {

// The same radios as the sim transport's profiles; where each number comes
// from is in docs/guide/linkemu.md#profiles.
const std::array<LinkProfile, 3> profiles = {{
    {"bluetooth", 30.0, 90000.0, 0.0, 0.0},
    {"bluetooth-edr", 10.0, 250000.0, 0.0, 0.0},
    {"wifi", 2.0, 5000000.0, 0.0, 0.0},
}};

} // namespace

std::optional<LinkProfile> findProfile(std::string_view name)
{
    for (const LinkProfile &profile : profiles) {
        if (profile.name == name)
            return profile;
    }
    return std::nullopt;
}

std::string profileNames()
{
    std::string names;
    for (const LinkProfile &profile : profiles)
        names += (names.empty() ? "" : ", ") + profile.name;
    return names;
}

} // namespace mmpi::linkemu
