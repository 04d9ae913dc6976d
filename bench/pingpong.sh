#!/usr/bin/env bash
# Point-to-point on this machine: `mmpi-bench pingpong` over local and tcp
# against raw-tcp, qt-tcp, zmq-tcp and Open MPI, one after the other, then the
# one-way bandwidth (`--oneway`) of mmpi tcp against raw-tcp and zmq-tcp; prints
# a table per message size and the targets, and writes them to the `pingpong`
# section of bench/RESULTS.md. See docs/guide/benchmarks.md.
#   bash bench/pingpong.sh [build dir] [--sizes 1,64,...] [--oneway-sizes N,...|none]
#                          [--iterations K] [--repeat N]
#
# All get the same --sizes (default 1,64,1024,65536,1048576,4194304) and
# --iterations K (default 1000), and all apply the same rule per size:
#   timed round trips = max(20, min(K, 64 MiB / size))   (1 MiB: 64, 4 MiB: 20)
#   warm-up round trips (untimed, first) = max(2, timed / 10)
# A round trip (rank 0 sends size bytes, rank 1 receives them all and sends size
# bytes back, rank 0 receives them all) is timed alone with a steady clock;
# median, min and max are over the timed ones; MB/s = size / (median / 2), 1e6 B.
# One way (--oneway-sizes, default 65536,1048576,4194304): a timed step is a
# burst, rank 0 sends window = min(64, max(1, 16 MiB / size)) messages (4 MiB:
# 4) and rank 1 answers the last with one byte; the rule above counts a burst
# as window x size bytes; MB/s = window x size / median burst.
#
# MMPI has no busy-polling: its progress thread sleeps in the event loop and
# application threads sleep until their requests complete, the phone
# configuration the targets are for.
#
# --repeat N (default 3) runs the whole line-up N times, one round after the
# other, so that a slow minute of the machine hits every implementation alike;
# the tables give, per implementation and size, the median of the N runs'
# medians and the range they spanned (TCP over loopback in particular has runs
# that are much slower than others), min of the mins and max of the maxes.
#
# Everything but the spinning raw-tcp and Open MPI runs twice: as placed
# (mmpirun binds its nodes to a CPU each; the baselines go where the kernel
# puts them, usually on two CPUs, each round trip then paying two cross-CPU
# wake-ups), and on one CPU (`taskset`, "1 cpu"; mmpirun --bind-to none),
# where a wake-up is a plain switch. On this kind of virtual machine the
# second is often twice as fast. The targets and the "x" columns take each
# implementation's faster placement, so no scheduling accident flatters
# either side; the lines under the targets compare like placements.
# raw-tcp also runs busy-polling on two CPUs of its own ("spin"): the floor for
# a library that keeps the ranks apart and never sleeps; shown, not a target.
#
# ZeroMQ (zmq-pingpong) is built by CMake when libzmq is found; if it is not,
# the script installs Debian's libzmq3-dev with apt-get when run as root (not
# with MMPI_BENCH_INSTALL=0) and builds the target, or else skips it and says
# why. Open MPI likewise: openmpi-bin and libopenmpi-dev, mpi-pingpong built
# with mpicc. Every run is limited to MMPI_BENCH_TIMEOUT seconds (600). The JSON
# lines are kept in <build>/pingpong.jsonl.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$here/bench/common.sh"
sizes=1,64,1024,65536,1048576,4194304
oneway_sizes=65536,1048576,4194304
iterations=1000
repeat=3
time_limit=${MMPI_BENCH_TIMEOUT:-600}
# Busy-polling off: today these turn off the spin of a thread waiting in
# wait(), on by default on desktops. Issue 43 (item 1) removes them with the
# spin; what stays is off by default, and then these variables do nothing.

usage() {
    echo "usage: bash bench/pingpong.sh [build dir] [--sizes N,N,...] [--oneway-sizes N,N,...|none]" \
        "[--iterations K] [--repeat N]"
}

parse_arguments() {
    if bench_build_dir "$@"; then
        shift
    fi
    while [ $# -gt 0 ]; do
        case $1 in
        --sizes) sizes=${2:?--sizes needs a value}; shift 2 ;;
        --sizes=*) sizes=${1#*=}; shift ;;
        --oneway-sizes) oneway_sizes=${2:?--oneway-sizes needs a value}; shift 2 ;;
        --oneway-sizes=*) oneway_sizes=${1#*=}; shift ;;
        --iterations) iterations=${2:?--iterations needs a value}; shift 2 ;;
        --iterations=*) iterations=${1#*=}; shift ;;
        --repeat) repeat=${2:?--repeat needs a value}; shift 2 ;;
        --repeat=*) repeat=${1#*=}; shift ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
        esac
    done
    if ! [[ $repeat =~ ^[0-9]+$ ]] || [ "$repeat" -lt 1 ] || [ "$repeat" -gt 100 ]; then
        echo "bench/pingpong.sh: --repeat must be 1 to 100, not '$repeat'" >&2
        exit 2
    fi
}

# run_mmpi [--oneway]: MMPI over local and tcp (ping-pong), or over tcp (one
# way), each as placed and on one CPU; then tcp with QByteArray messages.
run_mmpi() {
    local transport transports=(local tcp) args=("$@") cpu
    if [ ! -x "$bin/mmpi-bench" ] || [ ! -x "$bin/mmpirun" ]; then
        bench_skip "mmpi" "$bin/mmpi-bench or $bin/mmpirun does not exist yet (build the targets mmpi-bench mmpirun)"
        return
    fi
    [ $# -gt 0 ] && transports=(tcp)
    cpu=$(first_cpu)
    for transport in "${transports[@]}"; do
        measure_mmpi "mmpi $transport" --transport "$transport" -- ${args[@]+"${args[@]}"}
        if command -v taskset >/dev/null && [ -n "$cpu" ]; then
            measure_mmpi "mmpi $transport 1 cpu" --transport "$transport" --bind-to none --taskset "$cpu" -- \
                ${args[@]+"${args[@]}"}
        fi
    done
    # QByteArray messages: MMPI neither copies them in nor out.
    measure_mmpi "mmpi tcp qba" --transport tcp -- --qbytearray ${args[@]+"${args[@]}"}
}

# measure_mmpi NAME [MMPIRUN OPTION...] [--taskset CPU] -- [PINGPONG ARG...]
measure_mmpi() {
    local name=$1 options=() launch=()
    shift
    while [ "$1" != -- ]; do
        if [ "$1" = --taskset ]; then
            launch=(taskset -c "$2")
            shift 2
        else
            options+=("$1")
            shift
        fi
    done
    shift
    bench_measure "$name" ${launch[@]+"${launch[@]}"} "$bin/mmpirun" -n 2 "${options[@]}" --no-prefix \
        --timeout "$time_limit" -- "$bin/mmpi-bench" pingpong "${bench_args[@]}" "$@"
}

# The first CPU this script may use: where the "1 cpu" baselines run.
first_cpu() {
    awk '/^Cpus_allowed_list:/ { split($2, a, /[-,]/); print a[1] }' /proc/self/status
}

# run_baseline NAME PROGRAM [ARG...]: as the kernel places it, then on one CPU.
run_baseline() {
    local name=$1 program=$2 cpu
    shift 2
    if [ ! -x "$bin/$program" ]; then
        bench_skip "$name" "$bin/$program does not exist (build the target $program)"
        return
    fi
    bench_measure "$name" "$bin/$program" "${bench_args[@]}" "$@"
    cpu=$(first_cpu)
    if command -v taskset >/dev/null && [ -n "$cpu" ]; then
        bench_measure "$name 1 cpu" taskset -c "$cpu" "$bin/$program" "${bench_args[@]}" "$@"
    else
        bench_skip "$name 1 cpu" "taskset (util-linux) or /proc/self/status missing"
    fi
}

# raw-tcp busy-polling on two CPUs of its own: what any design that keeps the
# two ranks on separate CPUs and never sleeps could reach (informative only).
run_spinning_raw() {
    if [ ! -x "$bin/raw-pingpong" ]; then
        bench_skip "raw-tcp spin" "$bin/raw-pingpong does not exist (build the target raw-pingpong)"
    elif [ "$(nproc)" -lt 2 ]; then
        bench_skip "raw-tcp spin" "it needs two CPUs"
    else
        bench_measure "raw-tcp spin" "$bin/raw-pingpong" --spin "${bench_args[@]}"
    fi
}

bench_have_libzmq() {
    pkg-config --exists libzmq 2>/dev/null
}

# Succeeds when $bin/zmq-pingpong exists, after installing libzmq and building
# the target if need be; otherwise sets $why.
prepare_zmq() {
    [ -x "$bin/zmq-pingpong" ] && return 0
    bench_ensure_packages bench_have_libzmq "libzmq (pkg-config libzmq)" libzmq3-dev pkg-config || return 1
    if [ ! -f "$build/CMakeCache.txt" ]; then
        why="$bin/zmq-pingpong does not exist (build the target zmq-pingpong)"
        return 1
    fi
    echo "== building zmq-pingpong in $build"
    # CMake looks for libzmq again when it had not found it.
    if ! { cmake "$build" && cmake --build "$build" --target zmq-pingpong; } >"$errors" 2>&1; then
        why="building zmq-pingpong failed: $(grep -m1 -i error "$errors" || tail -n 1 "$errors")"
        return 1
    fi
}

# Builds $bin/mpi-pingpong from bench/mpipingpong.c when it is missing or older.
build_mpi_pingpong() {
    local source=$here/bench/mpipingpong.c header=$here/bench/pingpong.h target=$bin/mpi-pingpong
    [ -x "$target" ] && [ "$target" -nt "$source" ] && [ "$target" -nt "$header" ] && return 0
    mkdir -p "$bin"
    mpicc -O2 -Wall -Wextra -I"$here/bench" -o "$target" "$source" 2>"$errors" && return 0
    why="mpicc failed: $(head -n 3 "$errors")"
    return 1
}

run_openmpi() {
    local options=(-n 2)
    [ "$(id -u)" -eq 0 ] && options+=(--allow-run-as-root)
    # Open MPI counts cores, not hardware threads: allow 2 ranks on 1 core.
    [ "$(lscpu -p=Core 2>/dev/null | grep -v '^#' | sort -u | wc -l)" -ge 2 ] || options+=(--oversubscribe)
    bench_measure "openmpi" mpirun "${options[@]}" "$bin/mpi-pingpong" "${bench_args[@]}"
    bench_measure "openmpi tcp" mpirun "${options[@]}" --mca btl tcp,self "$bin/mpi-pingpong" "${bench_args[@]}"
}

# One round: the ping-pong line-up, then the one-way one.
run_round() {
    bench_args=(--sizes "$sizes" --iterations "$iterations" --json)
    run_mmpi
    run_baseline raw-tcp raw-pingpong
    run_spinning_raw
    run_baseline qt-tcp qt-pingpong
    run_if "$zmq_skipped" zmq-tcp run_baseline zmq-tcp zmq-pingpong
    run_if "$openmpi_skipped" openmpi run_openmpi
    [ "$oneway_sizes" != none ] || return 0
    bench_args=(--sizes "$oneway_sizes" --iterations "$iterations" --json)
    run_mmpi --oneway
    run_baseline raw-tcp raw-pingpong --oneway
    run_if "$zmq_skipped" "zmq-tcp one way" run_baseline zmq-tcp zmq-pingpong --oneway
}

# run_if WHY NAME COMMAND...: runs COMMAND, or says why NAME is skipped.
run_if() {
    local why=$1 name=$2
    shift 2
    if [ -n "$why" ]; then
        bench_skip "$name" "$why"
    else
        "$@"
    fi
}

# Tables per size and the targets, from the JSON lines in $results.
report() {
    python3 - "$results" <<'PYTHON'
import json
import sys

ORDER = ["mmpi local", "mmpi local 1 cpu", "mmpi tcp", "mmpi tcp 1 cpu", "mmpi tcp qba", "raw-tcp",
         "raw-tcp 1 cpu", "raw-tcp spin", "qt-tcp", "qt-tcp 1 cpu", "zmq-tcp", "zmq-tcp 1 cpu", "openmpi",
         "openmpi tcp"]
# Every run of an implementation, then per op and size one result over its
# runs: the median of their medians (MB/s from it), the min of the mins, the
# max of the maxes, and the lowest and highest median.
every = {}
for line in open(sys.argv[1]):
    run = json.loads(line)
    for r in run["results"]:
        every.setdefault((run["op"], run["name"]), {}).setdefault(r["size"], []).append(r)


def combine(results):
    medians = sorted(r["median_us"] for r in results)
    half = len(medians) // 2
    middle = medians[half] if len(medians) % 2 else (medians[half - 1] + medians[half]) / 2
    r = results[0]
    window = r.get("window", 1)
    mbps = (r["size"] * window / middle if "window" in r else r["size"] / (middle / 2)) if middle > 0 else 0.0
    return {"size": r["size"], "iterations": r["iterations"], "window": window, "runs": len(results),
            "median_us": middle, "min_us": min(x["min_us"] for x in results),
            "max_us": max(x["max_us"] for x in results), "low_us": medians[0], "high_us": medians[-1], "mbps": mbps}


runs = {key: {size: combine(results) for size, results in by_size.items()} for key, by_size in every.items()}


def sizes_of(op):
    return sorted({size for (o, _), results in runs.items() if o == op for size in results})


def human(size):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def measured(op, name, size):
    return runs.get((op, name), {}).get(size)


# These run twice; their name stands for the faster placement.
PLACED = ("mmpi local", "mmpi tcp", "raw-tcp", "zmq-tcp", "qt-tcp")
BASELINES = ("raw-tcp", "zmq-tcp", "qt-tcp")  # in the order of the "x" columns


def result(op, name, size):
    if name in PLACED:
        both = [r for r in (measured(op, name, size), measured(op, name + " 1 cpu", size)) if r]
        return min(both, key=lambda r: r["median_us"]) if both else None
    return measured(op, name, size)


def ratio(op, r, name, size, invert=False):
    other = result(op, name, size)
    if not other:
        return "-"
    return f"{other['median_us'] / r['median_us']:.0%}" if invert else f"{r['median_us'] / other['median_us']:.2f}"


def header(op, size):
    rows = [(name, measured(op, name, size)) for name in ORDER if measured(op, name, size)]
    counts = "/".join(str(n) for n in sorted({r["iterations"] for _, r in rows}))
    repeats = "/".join(str(n) for n in sorted({r["runs"] for _, r in rows}))
    return rows, counts, repeats


def pingpong_table(size):
    rows, counts, repeats = header("pingpong", size)
    print(f"\nping-pong {human(size)} ({counts} timed round trips; medians of {repeats} runs; x = median / baseline's)")
    print(f"  {'implementation':<15}{'median us':>11}{'runs from':>11}{'to':>9}{'min us':>10}{'max us':>10}"
          f"{'MB/s':>10}{'x raw':>7}{'x zmq':>7}{'x qt':>7}")
    for name, r in rows:
        print(f"  {name:<15}{r['median_us']:>11.2f}{r['low_us']:>11.2f}{r['high_us']:>9.2f}{r['min_us']:>10.2f}"
              f"{r['max_us']:>10.2f}{r['mbps']:>10.1f}" + "".join(f"{ratio('pingpong', r, b, size):>7}" for b in BASELINES))


def oneway_table(size):
    rows, counts, repeats = header("oneway", size)
    print(f"\none way {human(size)} ({counts} timed bursts; medians of {repeats} runs; % = MB/s / baseline's)")
    print(f"  {'implementation':<15}{'window':>7}{'median us':>11}{'runs from':>11}{'to':>10}{'MB/s':>10}"
          f"{'% raw':>7}{'% zmq':>7}")
    for name, r in rows:
        print(f"  {name:<15}{r['window']:>7}{r['median_us']:>11.1f}{r['low_us']:>11.1f}{r['high_us']:>10.1f}"
              f"{r['mbps']:>10.1f}" + "".join(f"{ratio('oneway', r, b, size, True):>7}" for b in BASELINES[:2]))


# judge(size) -> (ok, text) for every size in `candidates` that all of `needs` measured.
def target(title, op, needs, candidates, judge):
    missing = [n for n in needs if (op, n) not in runs and (op, n + " 1 cpu") not in runs]
    covered = [s for s in candidates if all(result(op, n, s) for n in needs)]
    if missing or not covered:
        reason = f"no {', '.join(missing)} results" if missing else "sizes not measured"
        print(f"  {'skipped':<8} {title}: {reason}")
        return
    verdicts = [judge(size) for size in covered]
    verdict = "met" if all(ok for ok, _ in verdicts) else "not met"
    print(f"  {verdict:<8} {title}: {', '.join(text for _, text in verdicts)}")


def median(op, name, size):
    return result(op, name, size)["median_us"]


def median_ratio(size, name, other, limit):
    r = median("pingpong", name, size) / median("pingpong", other, size)
    return r <= limit, f"{human(size)} {r:.2f}x"


def not_slower(size, name, other):
    a, b = median("pingpong", name, size), median("pingpong", other, size)
    return a <= b, f"{human(size)} {a:.2f} vs {b:.2f} us"


def bandwidth_share(size, name, other, share):
    a, b = result("oneway", name, size)["mbps"], result("oneway", other, size)["mbps"]
    return a >= share * b, f"{human(size)} {a:.0f} vs {b:.0f} MB/s = {100 * a / b:.0f} %"


# lookup=measured compares the placements the names say, not the faster ones.
def beside(title, name, other, candidates, lookup=result):
    ratios = [f"{human(s)} {lookup('pingpong', name, s)['median_us'] / lookup('pingpong', other, s)['median_us']:.2f}x"
              for s in candidates if lookup("pingpong", name, s) and lookup("pingpong", other, s)]
    if ratios:
        print(f"  {title}: {', '.join(ratios)}")


for size in sizes_of("pingpong"):
    pingpong_table(size)
for size in sizes_of("oneway"):
    oneway_table(size)
small = [s for s in sizes_of("pingpong") if s <= 1024]
print("\nTargets (median round trips, busy-polling off; MB/s one way; baselines: the faster placement)")
target("small messages (1 B-1 KiB) over tcp at most 1.0x ZeroMQ (mmpi tcp / zmq-tcp)", "pingpong",
       ["mmpi tcp", "zmq-tcp"], small, lambda s: median_ratio(s, "mmpi tcp", "zmq-tcp", 1.0))
target("4 MiB one way over tcp at least 90 % of raw blocking TCP", "oneway", ["mmpi tcp", "raw-tcp"], [4 << 20],
       lambda s: bandwidth_share(s, "mmpi tcp", "raw-tcp", 0.9))
target("the same with QByteArray messages (no copy in or out)", "oneway", ["mmpi tcp qba", "raw-tcp"], [4 << 20],
       lambda s: bandwidth_share(s, "mmpi tcp qba", "raw-tcp", 0.9))
target("local at least as fast as tcp (local vs tcp)", "pingpong", ["mmpi local", "mmpi tcp"], sizes_of("pingpong"),
       lambda s: not_slower(s, "mmpi local", "mmpi tcp"))

print("\nBeside the targets (small-message round trips, median ratios; as placed: MMPI a CPU per node, the others where the kernel puts them)")
beside("mmpi tcp / zmq-tcp, both on one CPU", "mmpi tcp 1 cpu", "zmq-tcp 1 cpu", small, measured)
beside("mmpi tcp / zmq-tcp, both as placed", "mmpi tcp", "zmq-tcp", small, measured)
beside("mmpi tcp / qt-tcp (event-driven QTcpSocket)", "mmpi tcp", "qt-tcp", small)
beside("mmpi tcp / raw-tcp (blocking sockets)", "mmpi tcp", "raw-tcp", small)
beside("mmpi tcp / raw-tcp spin (busy-polling on two CPUs)", "mmpi tcp", "raw-tcp spin", small)
beside("openmpi tcp / raw-tcp spin", "openmpi tcp", "raw-tcp spin", small)
PYTHON
}

main() {
    bench_start "$0" "$@"
    parse_arguments "$@"
    bin=$build/bin
    mkdir -p "$build"
    results=$build/pingpong.jsonl
    : >"$results"
    local round why="" zmq_skipped="" openmpi_skipped="" summary report_file
    prepare_zmq || zmq_skipped=$why
    why=""
    { bench_ensure_openmpi && build_mpi_pingpong; } || openmpi_skipped=$why
    summary="2 ranks on one machine; ping-pong sizes $sizes, one way $oneway_sizes; K=$iterations; rounds: $repeat"
    echo "$summary; build $build"
    for round in $(seq "$repeat"); do
        [ "$repeat" -gt 1 ] || round=""
        run_round
    done
    if [ ! -s "$results" ]; then
        echo "no implementation produced results" >&2
        exit 1
    fi
    [ -z "$zmq_skipped" ] || summary+=$'\n'"zmq-tcp skipped: $zmq_skipped"
    [ -z "$openmpi_skipped" ] || summary+=$'\n'"openmpi skipped: $openmpi_skipped"
    report_file=$(mktemp)
    { echo "$summary"; report; } | tee "$report_file"
    echo
    bench_write_section pingpong "Ping-pong and one-way bandwidth (bench/pingpong.sh)" "$report_file"
    rm -f "$report_file"
    echo "JSON lines: $results"
}

main "$@"
