#!/usr/bin/env bash
# Builds fuzz_framedecoder with clang, libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer in its own build directory, then fuzzes for a
# bounded time on a copy of the seed corpus. Exits non-zero if the fuzzer finds
# a crash, a sanitizer report or a violated invariant (the reproducer is left in
# $FUZZ_BUILD_DIR/artifacts/).
#
#   FUZZ_SECONDS     how long to fuzz (default 30)
#   FUZZ_BUILD_DIR   build directory (default: build-fuzz next to the source tree)
#   FUZZ_JOBS        parallel compile jobs (default 2)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$(dirname "$root")/build-fuzz}
seconds=${FUZZ_SECONDS:-30}
jobs=${FUZZ_JOBS:-2}

# The libraries need the instrumentation too, so the flags go on the whole
# tree (MMPI_BUILD_FUZZERS only builds core, wire and fuzz/).
sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link"
generator=()
if command -v ninja >/dev/null; then
    generator=(-G Ninja)
fi

cmake -S "$root" -B "$build" "${generator[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_CXX_FLAGS="$sanitizers" \
    -DMMPI_BUILD_FUZZERS=ON
cmake --build "$build" --target fuzz_framedecoder fuzz_make_corpus -j "$jobs"

# Fuzz a copy: libFuzzer adds what it finds to the corpus directory, and the
# committed seeds must stay as they are.
corpus="$build/corpus"
rm -rf "$corpus"
mkdir -p "$corpus" "$build/artifacts"
cp "$root"/fuzz/corpus/* "$corpus"/ 2>/dev/null || true
"$build/bin/fuzz_make_corpus" "$corpus"

"$build/bin/fuzz_framedecoder" \
    -max_total_time="$seconds" \
    -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/" \
    "$corpus"
