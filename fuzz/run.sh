#!/usr/bin/env bash
# Builds the fuzz targets with clang, libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer in their own build directory, then fuzzes each for
# an equal share of FUZZ_SECONDS (at least 1 s) on a fresh copy of its seed
# corpus, in turn: fuzz_framedecoder (the wire frame decoder),
# fuzz_canvasdecoder (the MMPE batch decoder), fuzz_mpdecoder (the edu.rit.mp
# stream decoder), fuzz_controlmessage (the world's control messages, the
# sealed handshake's among them), fuzz_recordcipher (sealed links' records)
# fuzz_discovery (the tcp beacon's datagram and the join code) and fuzz_mdns
# (DNS-SD's multicast DNS messages and TXT records).
# Exits non-zero if a fuzzer finds a crash, a sanitizer report, a violated
# invariant, a hang or an allocation beyond the decoder's limits (the
# reproducer is left in $FUZZ_BUILD_DIR/artifacts/, prefixed with the
# target's short name except for the frame decoder's).
#
#   FUZZ_SECONDS     how long to fuzz, all targets together (default 30)
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
cmake --build "$build" -j "$jobs" --target \
    fuzz_framedecoder fuzz_make_corpus fuzz_canvasdecoder fuzz_make_canvas_corpus \
    fuzz_mpdecoder fuzz_make_mp_corpus fuzz_controlmessage fuzz_make_control_corpus \
    fuzz_recordcipher fuzz_make_record_corpus \
    fuzz_discovery fuzz_make_discovery_corpus \
    fuzz_mdns fuzz_make_mdns_corpus

targets=7
share=$((seconds / targets))
extra=$((seconds % targets)) # one second more for each of the first `extra` targets
[ "$share" -ge 1 ] || { share=1; extra=0; }
turn=0

# Fuzz a copy: libFuzzer adds what it finds to the corpus directory, and the
# committed seeds must stay as they are.
fresh_corpus() { # <dir> <committed seeds dir> <corpus maker>
    rm -rf "$1"
    mkdir -p "$1"
    cp "$2"/* "$1"/ 2>/dev/null || true
    "$3" "$1"
}

# fuzz <target> <seeds dir> <corpus maker> <artifact prefix> [libFuzzer flags]:
# one target's share on a fresh copy of its corpus; set -e stops the script on
# a finding.
fuzz() {
    local target=$1 seeds=$2 maker=$3 prefix=$4
    shift 4
    local time=$share
    if [ "$turn" -lt "$extra" ]; then
        time=$((time + 1))
    fi
    turn=$((turn + 1))
    fresh_corpus "$build/$seeds" "$root/fuzz/$seeds" "$build/bin/$maker"
    echo "== $target for $time s"
    "$build/bin/$target" \
        -max_total_time="$time" \
        -print_final_stats=1 \
        -artifact_prefix="$build/artifacts/$prefix" \
        "$@" \
        "$build/$seeds"
}
mkdir -p "$build/artifacts"

fuzz fuzz_framedecoder corpus fuzz_make_corpus ""

# The canvas decoder's limits in the target allow at most 2 MiB of images a
# batch, so any single allocation of 64 MiB is a bound the decoder missed;
# one input taking 10 s is a hang.
fuzz fuzz_canvasdecoder canvas-corpus fuzz_make_canvas_corpus canvas- -malloc_limit_mb=64 -timeout=10

# The target lets the mp decoder accept messages of up to 16 MiB, so an
# allocation of 8 MiB from a few KiB of input means the decoder reserved a
# message before its bytes came.
fuzz fuzz_mpdecoder mp-corpus fuzz_make_mp_corpus mp- -malloc_limit_mb=8 -timeout=10

# Control payloads are at most 64 KiB; QDataStream itself reads a string or
# byte array in blocks of up to 2 MB before it finds the bytes missing, so
# 16 MB is far beyond anything the decoder may allocate.
fuzz fuzz_controlmessage control-corpus fuzz_make_control_corpus control- -malloc_limit_mb=16 -timeout=10

# Records are at most the decoder's 1 MiB limit; opening one allocates its
# frame once, so 16 MB is far beyond anything it may need.
fuzz fuzz_recordcipher record-corpus fuzz_make_record_corpus record- -malloc_limit_mb=16 -timeout=10
# A datagram is at most 512 bytes and a code's text 64 characters: 4 MB is far
# beyond anything either decoder may allocate.
fuzz fuzz_discovery discovery-corpus fuzz_make_discovery_corpus discovery- -malloc_limit_mb=4 -timeout=10
# A message is at most 9000 bytes: 4 MB is far beyond anything the parser
# may allocate.
fuzz fuzz_mdns mdns-corpus fuzz_make_mdns_corpus mdns- -malloc_limit_mb=4 -timeout=10
