// The fuzz targets' way to report a broken invariant: a message naming it,
// then abort(), which libFuzzer takes as a crash and saves the input for.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace mmpi::fuzz {

inline void check(bool ok, const char *what)
{
    if (ok)
        return;
    std::fprintf(stderr, "invariant violated: %s\n", what);
    std::abort();
}

} // namespace mmpi::fuzz
