#!/usr/bin/env bash
# Builds the fuzz targets with clang, libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer in their own build directory, then fuzzes each for
# a bounded time on a copy of its seed corpus: fuzz_framedecoder (the wire
# frame decoder) for the first half of FUZZ_SECONDS, fuzz_canvasdecoder (the
# MMPE batch decoder) for the second. Exits non-zero if a fuzzer finds a
# crash, a sanitizer report, a violated invariant, a hang or an allocation
# beyond the decoder's limits (the reproducer is left in
# $FUZZ_BUILD_DIR/artifacts/).
#
#   FUZZ_SECONDS     how long to fuzz, both targets together (default 30)
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
cmake --build "$build" --target fuzz_framedecoder fuzz_make_corpus fuzz_canvasdecoder fuzz_make_canvas_corpus \
    -j "$jobs"

canvas_seconds=$((seconds / 2))
frame_seconds=$((seconds - canvas_seconds))
[ "$canvas_seconds" -ge 1 ] || canvas_seconds=1

# Fuzz a copy: libFuzzer adds what it finds to the corpus directory, and the
# committed seeds must stay as they are.
fresh_corpus() { # <dir> <committed seeds dir> <corpus maker>
    rm -rf "$1"
    mkdir -p "$1"
    cp "$2"/* "$1"/ 2>/dev/null || true
    "$3" "$1"
}
mkdir -p "$build/artifacts"
fresh_corpus "$build/corpus" "$root/fuzz/corpus" "$build/bin/fuzz_make_corpus"
fresh_corpus "$build/canvas-corpus" "$root/fuzz/canvas-corpus" "$build/bin/fuzz_make_canvas_corpus"

echo "== fuzz_framedecoder for $frame_seconds s"
"$build/bin/fuzz_framedecoder" \
    -max_total_time="$frame_seconds" \
    -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/" \
    "$build/corpus"

# The canvas decoder's limits in the target allow at most 2 MiB of images a
# batch, so any single allocation of 64 MiB is a bound the decoder missed;
# one input taking 10 s is a hang.
echo "== fuzz_canvasdecoder for $canvas_seconds s"
"$build/bin/fuzz_canvasdecoder" \
    -max_total_time="$canvas_seconds" \
    -malloc_limit_mb=64 \
    -timeout=10 \
    -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/canvas-" \
    "$build/canvas-corpus"
