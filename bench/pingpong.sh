#!/usr/bin/env bash
# Point-to-point ping-pong on this machine: `mmpi-bench pingpong` over local and
# tcp against raw-tcp, qt-tcp and Open MPI, one after the other; prints a table
# per message size and the project's targets (docs/guide/benchmarks.md). See docs/guide/benchmarks.md.
#   bash bench/pingpong.sh [build dir] [--sizes 1,64,...] [--iterations K] [--repeat N]
#
# All five get the same --sizes (default 1,64,1024,65536,1048576,4194304) and
# --iterations K (default 1000), and all apply the same rule per size:
#   timed round trips = max(20, min(K, 64 MiB / size))   (1 MiB: 64, 4 MiB: 20)
#   warm-up round trips (untimed, first) = max(2, timed / 10)
# A round trip (rank 0 sends size bytes, rank 1 receives them all and sends size
# bytes back, rank 0 receives them all) is timed alone with a steady clock;
# median, min and max are over the timed ones; MB/s = size / (median / 2), 1e6 B.
#
# --repeat N (default 3) runs the whole line-up N times, one round after the
# other, so that a slow minute of the machine hits every implementation alike;
# the tables give, per implementation and size, the median of the N runs'
# medians and the range they spanned (TCP over loopback in particular has runs
# that are much slower than others), min of the mins and max of the maxes.
#
# raw-tcp and qt-tcp run twice: where the kernel places their two processes
# (usually on two CPUs, each round trip then pays two cross-CPU wake-ups), and
# both on one CPU (`taskset`, "1 cpu"), where a wake-up is a plain switch; the
# targets and the "x raw" column use the faster of the two, so no scheduling
# accident flatters MMPI (mmpirun binds its nodes to a CPU each). raw-tcp also
# runs a third time busy-polling on two CPUs of its own ("spin"): the floor for
# a library that keeps the ranks apart and never sleeps, as MMPI and Open MPI
# do; shown for comparison, not used by the targets.
#
# Open MPI: if mpirun or mpicc is missing, the script installs Debian's
# openmpi-bin and libopenmpi-dev with apt-get when run as root (not with
# MMPI_BENCH_INSTALL=0), or else skips it and says why. Every run is limited to
# MMPI_BENCH_TIMEOUT seconds (600). The JSON lines are kept in <build>/pingpong.jsonl.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$here/build
sizes=1,64,1024,65536,1048576,4194304
iterations=1000
repeat=3
time_limit=${MMPI_BENCH_TIMEOUT:-600}

usage() {
    echo "usage: bash bench/pingpong.sh [build dir] [--sizes N,N,...] [--iterations K] [--repeat N]"
}

parse_arguments() {
    if [ $# -gt 0 ] && [[ $1 != -* ]]; then
        build=$(cd "$1" && pwd)
        shift
    fi
    while [ $# -gt 0 ]; do
        case $1 in
        --sizes) sizes=${2:?--sizes needs a value}; shift 2 ;;
        --sizes=*) sizes=${1#*=}; shift ;;
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

# measure NAME COMMAND...: runs one implementation and appends its JSON line to
# $results; a failure is reported with the start of its stderr, and not fatal.
measure() {
    local name=$1 status=0 out line
    shift
    echo "== $name${round:+ (run $round of $repeat)}"
    out=$(timeout "$time_limit" "$@" 2>"$errors") || status=$?
    line=$(printf '%s\n' "$out" | sed 's/^\[[0-9]*\] //' | grep -m1 '^{"op":"pingpong"' || true)
    if [ -n "$line" ]; then
        # The name goes along, so that two runs of one transport stay apart.
        line=${line/#\{/\{\"name\":\"$name\",}
        echo "$line" >>"$results"
    else
        echo "   $name failed (exit $status); its stderr begins:"
        grep -v -e '^-*$' -e '^ *$' "$errors" | head -n 6 | sed 's/^/   | /'
    fi
}

# skip NAME WHY
skip() {
    echo "== $1: skipped, $2"
}

run_mmpi() {
    local transport
    if [ ! -x "$bin/mmpi-bench" ]; then
        skip "mmpi-bench" "$bin/mmpi-bench does not exist yet (build the target mmpi-bench)"
        return
    fi
    for transport in local tcp; do
        measure "mmpi $transport" "$bin/mmpirun" -n 2 --transport "$transport" --no-prefix \
            --timeout "$time_limit" -- "$bin/mmpi-bench" pingpong "${bench_args[@]}"
    done
    # QByteArray messages: MMPI neither copies them in nor out.
    measure "mmpi tcp qba" "$bin/mmpirun" -n 2 --transport tcp --no-prefix \
        --timeout "$time_limit" -- "$bin/mmpi-bench" pingpong "${bench_args[@]}" --qbytearray
}

# The first CPU this script may use: where the "1 cpu" baselines run.
first_cpu() {
    awk '/^Cpus_allowed_list:/ { split($2, a, /[-,]/); print a[1] }' /proc/self/status
}

run_baseline() {
    local name=$1 program=$2 cpu
    if [ ! -x "$bin/$program" ]; then
        skip "$name" "$bin/$program does not exist (build the target $program)"
        return
    fi
    measure "$name" "$bin/$program" "${bench_args[@]}"
    cpu=$(first_cpu)
    if command -v taskset >/dev/null && [ -n "$cpu" ]; then
        measure "$name 1 cpu" taskset -c "$cpu" "$bin/$program" "${bench_args[@]}"
    else
        skip "$name 1 cpu" "taskset (util-linux) or /proc/self/status missing"
    fi
}

# raw-tcp busy-polling on two CPUs of its own: what any design that keeps the
# two ranks on separate CPUs and never sleeps could reach (informative only;
# the targets use the blocking raw-tcp baseline).
run_spinning_raw() {
    if [ ! -x "$bin/raw-pingpong" ]; then
        skip "raw-tcp spin" "$bin/raw-pingpong does not exist (build the target raw-pingpong)"
    elif [ "$(nproc)" -lt 2 ]; then
        skip "raw-tcp spin" "it needs two CPUs"
    else
        measure "raw-tcp spin" "$bin/raw-pingpong" --spin "${bench_args[@]}"
    fi
}

# Succeeds when mpirun and mpicc are there, installing them if allowed;
# otherwise sets $why.
ensure_openmpi() {
    command -v mpirun >/dev/null && command -v mpicc >/dev/null && return 0
    if [ "$(id -u)" -ne 0 ]; then
        why="mpirun or mpicc not found; install openmpi-bin and libopenmpi-dev (as root this script does)"
        return 1
    fi
    if [ "${MMPI_BENCH_INSTALL:-1}" = 0 ]; then
        why="mpirun or mpicc not found and MMPI_BENCH_INSTALL=0"
        return 1
    fi
    echo "== installing openmpi-bin libopenmpi-dev"
    if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends openmpi-bin libopenmpi-dev; } >"$errors" 2>&1; then
        why="apt-get install openmpi-bin libopenmpi-dev failed: $(tail -n 1 "$errors")"
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
    local why="" options=(-n 2)
    if ! ensure_openmpi || ! build_mpi_pingpong; then
        skip "openmpi" "$why"
        return
    fi
    [ "$(id -u)" -eq 0 ] && options+=(--allow-run-as-root)
    # Open MPI counts cores, not hardware threads: allow 2 ranks on 1 core.
    [ "$(lscpu -p=Core 2>/dev/null | grep -v '^#' | sort -u | wc -l)" -ge 2 ] || options+=(--oversubscribe)
    measure "openmpi" mpirun "${options[@]}" "$bin/mpi-pingpong" "${bench_args[@]}"
    measure "openmpi tcp" mpirun "${options[@]}" --mca btl tcp,self "$bin/mpi-pingpong" "${bench_args[@]}"
}

# Tables per size and the targets, from the JSON lines in $results.
report() {
    python3 - "$results" <<'PYTHON'
import json
import sys

ORDER = ["mmpi local", "mmpi tcp", "mmpi tcp qba", "raw-tcp", "raw-tcp 1 cpu", "raw-tcp spin", "qt-tcp",
         "qt-tcp 1 cpu", "openmpi", "openmpi tcp"]
# Every run of an implementation, then per size one result over its runs: the
# median of their medians (MB/s from it), the min of the mins, the max of the
# maxes, and the lowest and highest median.
every = {}
for line in open(sys.argv[1]):
    run = json.loads(line)
    for r in run["results"]:
        every.setdefault(run["name"], {}).setdefault(r["size"], []).append(r)


def combine(results):
    medians = sorted(r["median_us"] for r in results)
    middle = medians[len(medians) // 2] if len(medians) % 2 else (medians[len(medians) // 2 - 1] + medians[len(medians) // 2]) / 2
    size = results[0]["size"]
    return {"size": size, "iterations": results[0]["iterations"], "runs": len(results), "median_us": middle,
            "min_us": min(r["min_us"] for r in results), "max_us": max(r["max_us"] for r in results),
            "low_us": medians[0], "high_us": medians[-1], "mbps": size / (middle / 2) if middle > 0 else 0.0}


runs = {name: {size: combine(results) for size, results in by_size.items()} for name, by_size in every.items()}
sizes = sorted({size for results in runs.values() for size in results})


def human(size):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def measured(name, size):
    return runs.get(name, {}).get(size)


# "raw-tcp" and "qt-tcp" stand for the faster of their two placements.
def result(name, size):
    if name in ("raw-tcp", "qt-tcp"):
        both = [r for r in (measured(name, size), measured(name + " 1 cpu", size)) if r]
        return min(both, key=lambda r: r["median_us"]) if both else None
    return measured(name, size)


def table(size):
    rows = [(name, measured(name, size)) for name in ORDER if measured(name, size)]
    raw = result("raw-tcp", size)
    counts = "/".join(str(n) for n in sorted({r["iterations"] for _, r in rows}))
    repeats = "/".join(str(n) for n in sorted({r["runs"] for _, r in rows}))
    print(f"\n{human(size)} ({counts} timed round trips; medians of {repeats} runs)")
    print(f"  {'implementation':<15}{'median us':>11}{'runs from':>11}{'to':>9}{'min us':>10}{'max us':>10}"
          f"{'MB/s':>10}{'x raw':>7}")
    for name, r in rows:
        ratio = f"{r['median_us'] / raw['median_us']:.2f}" if raw else "-"
        print(f"  {name:<15}{r['median_us']:>11.2f}{r['low_us']:>11.2f}{r['high_us']:>9.2f}{r['min_us']:>10.2f}"
              f"{r['max_us']:>10.2f}{r['mbps']:>10.1f}{ratio:>7}")


# judge(size) -> (ok, text) for every size in `candidates` that all of `needs` measured.
def target(title, needs, candidates, judge):
    missing = [name for name in needs if name not in runs and name + " 1 cpu" not in runs]
    covered = [s for s in candidates if all(result(name, s) for name in needs)]
    if missing or not covered:
        reason = f"no {', '.join(missing)} results" if missing else "sizes not measured"
        print(f"  {'skipped':<8} {title}: {reason}")
        return
    verdicts = [judge(size) for size in covered]
    verdict = "met" if all(ok for ok, _ in verdicts) else "not met"
    print(f"  {verdict:<8} {title}: {', '.join(text for _, text in verdicts)}")


def median(name, size):
    return result(name, size)["median_us"]


def median_ratio(size, name, other, limit):
    ratio = median(name, size) / median(other, size)
    return ratio <= limit, f"{human(size)} {ratio:.2f}x"


def not_slower(size, name, other):
    a, b = median(name, size), median(other, size)
    return a <= b, f"{human(size)} {a:.2f} vs {b:.2f} us"


def bandwidth_share(size, name, other, share):
    a, b = result(name, size)["mbps"], result(other, size)["mbps"]
    return a >= share * b, f"{human(size)} {a:.0f} vs {b:.0f} MB/s = {100 * a / b:.0f} %"


for size in sizes:
    table(size)
small = [s for s in sizes if s <= 1024]
print("\nTargets (median round trips; MB/s one way; raw-tcp and qt-tcp: the faster placement)")
target("small messages (1 B-1 KiB) over tcp at most 1.5x raw-tcp", ["mmpi tcp", "raw-tcp"], small,
       lambda s: median_ratio(s, "mmpi tcp", "raw-tcp", 1.5))
target("small messages over tcp no slower than qt-tcp (mmpi vs qt)", ["mmpi tcp", "qt-tcp"], small,
       lambda s: not_slower(s, "mmpi tcp", "qt-tcp"))
target("4 MiB over tcp at least 90 % of raw-tcp bandwidth", ["mmpi tcp", "raw-tcp"], [4 << 20],
       lambda s: bandwidth_share(s, "mmpi tcp", "raw-tcp", 0.9))
target("the same with QByteArray messages (no copy in or out)", ["mmpi tcp qba", "raw-tcp"], [4 << 20],
       lambda s: bandwidth_share(s, "mmpi tcp qba", "raw-tcp", 0.9))
target("local at least as fast as tcp (local vs tcp)", ["mmpi local", "mmpi tcp"], sizes,
       lambda s: not_slower(s, "mmpi local", "mmpi tcp"))

# Not a target: how far each library is from raw-tcp busy-polling on two CPUs.
spun = [s for s in small if measured("raw-tcp spin", s)]
if spun:
    print("\nBeside raw-tcp busy-polling on two CPUs (not a target)")
    for name in ("mmpi tcp", "openmpi tcp"):
        ratios = [f"{human(s)} {median(name, s) / median('raw-tcp spin', s):.2f}x" for s in spun if measured(name, s)]
        if ratios:
            print(f"  {name}: {', '.join(ratios)}")
PYTHON
}

main() {
    parse_arguments "$@"
    bin=$build/bin
    bench_args=(--sizes "$sizes" --iterations "$iterations" --json)
    mkdir -p "$build"
    results=$build/pingpong.jsonl
    errors=$(mktemp)
    trap 'rm -f "$errors"' EXIT
    : >"$results"
    echo "ping-pong, 2 ranks on $(hostname), sizes $sizes, K=$iterations, $repeat runs; build $build"
    local round
    for round in $(seq "$repeat"); do
        [ "$repeat" -gt 1 ] || round=""
        run_mmpi
        run_baseline raw-tcp raw-pingpong
        run_spinning_raw
        run_baseline qt-tcp qt-pingpong
        run_openmpi
    done
    if [ ! -s "$results" ]; then
        echo "no implementation produced results" >&2
        exit 1
    fi
    report
    echo
    echo "JSON lines: $results"
}

main "$@"
