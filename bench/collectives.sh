#!/usr/bin/env bash
# Collectives on this machine (docs/guide/benchmarks.md):
#  - tcp: `mmpi-bench bcast|allreduce|barrier|alltoall` over tcp beside Open MPI
#    over TCP (mpirun --mca btl tcp,self) at 2, 4 and 8 ranks, in one run;
#  - sim: the broadcast time of every topology and of auto on the `bluetooth`
#    profile of the sim transport at 4, 8 and 16 ranks, 16 B to 1 MiB.
# Prints a table per section and the project's targets, and writes each section
# that ran to bench/RESULTS.md (`collectives-tcp`, `collectives-sim`).
# docs/guide/benchmarks.md
#   bash bench/collectives.sh [build dir] [--tcp-only | --sim-only] [--quick] [--repeat N]
#
# --quick measures fewer sizes and calls (a first look in a few minutes); the
# full sim section takes about an hour, mostly 1 MiB broadcasts at 90 kB/s.
# Both sides use bench/collectives.h: after an untimed barrier every rank reads
# CLOCK_MONOTONIC, makes the call and reads it again; bcast is timed from the
# root's start (a pause after the barrier, so the others already wait) to the
# last rank's end, the others from the last start to the last end. Medians.
# Each launcher places its ranks as it does by default (the script says how):
# mmpirun binds 4 or 8 ranks to 2 CPUs in turn, Open MPI leaves ranks beyond
# the cores unbound (docs/guide/mmpirun.md#cpu-binding).
#
# --repeat N (default 3) runs the tcp section N times, one round after the
# other; its table gives the median of the N runs' medians and their range,
# and in how many rounds mmpi's median was below Open MPI's of the same
# round (`faster`: the pair met the same minute of the machine); the targets
# use the median (one run decided cells either way: with more ranks
# than CPUs the same call varies 2x from run to run). The sim section runs
# once (its links are simulated in real time; a run takes the better part of
# an hour).
#
# Open MPI: if mpirun or mpicc is missing, the script installs Debian's
# openmpi-bin and libopenmpi-dev with apt-get when run as root (not with
# MMPI_BENCH_INSTALL=0), or else skips it and says why. Every run is limited
# to MMPI_BENCH_TIMEOUT seconds (3600). JSON lines: <build>/collectives.jsonl.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$here/bench/common.sh"
time_limit=${MMPI_BENCH_TIMEOUT:-3600}
do_tcp=1
do_sim=1
quick=0
repeat=3

usage() {
    echo "usage: bash bench/collectives.sh [build dir] [--tcp-only | --sim-only] [--quick] [--repeat N]"
}

parse_arguments() {
    if bench_build_dir "$@"; then
        shift
    fi
    while [ $# -gt 0 ]; do
        case $1 in
        --tcp-only) do_sim=0; shift ;;
        --sim-only) do_tcp=0; shift ;;
        --quick) quick=1; shift ;;
        --repeat) repeat=${2:?--repeat needs a value}; shift 2 ;;
        --repeat=*) repeat=${1#*=}; shift ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
        esac
    done
    if ! [[ $repeat =~ ^[0-9]+$ ]] || [ "$repeat" -lt 1 ] || [ "$repeat" -gt 100 ]; then
        echo "bench/collectives.sh: --repeat must be 1 to 100, not '$repeat'" >&2
        exit 2
    fi
}

run_tcp() {
    local n op sizes iterations why="" mpi_options=(--oversubscribe --mca btl tcp,self) openmpi=1
    sizes=16,1024,65536,1048576
    iterations=500
    [ "$quick" = 1 ] && sizes=16,65536,1048576 && iterations=100
    if [ ! -x "$bin/mmpi-bench" ]; then
        bench_skip "tcp" "$bin/mmpi-bench does not exist yet (build the target mmpi-bench)"
        return
    fi
    if ! bench_ensure_openmpi || ! bench_build_mpi_collectives; then
        bench_skip "openmpi" "$why"
        openmpi=0
    fi
    [ "$(id -u)" -eq 0 ] && mpi_options+=(--allow-run-as-root)
    local round
    for round in $(seq "$repeat"); do
        [ "$repeat" -gt 1 ] || round=""
        for n in 2 4 8; do
            for op in bcast allreduce barrier alltoall; do
                bench_measure "mmpi tcp $op $n" "$bin/mmpirun" -n "$n" --transport tcp --no-prefix --timeout "$time_limit" \
                    -- "$bin/mmpi-bench" "$op" --sizes "$sizes" --iterations "$iterations" --json
                [ "$openmpi" = 1 ] && bench_measure "openmpi $op $n" mpirun -n "$n" "${mpi_options[@]}" \
                    "$bin/mpi-collectives" "$op" --sizes "$sizes" --iterations "$iterations" --json
            done
        done
    done
    round=""
}

run_sim() {
    local n sizes iterations
    sizes=16,256,4096,16384,65536,262144,1048576
    iterations=3
    [ "$quick" = 1 ] && sizes=16,4096,65536 && iterations=2
    for n in 4 8 16; do
        # A 1 MiB message holds a 90 kB/s radio for 12 s, and heartbeats
        # queue behind it: the default 10 s timeout would call the sender lost.
        bench_measure "mmpi sim bluetooth bcast $n" env MMPI_HEARTBEAT_INTERVAL_MS="${MMPI_HEARTBEAT_INTERVAL_MS:-10000}" \
            MMPI_HEARTBEAT_TIMEOUT_MS="${MMPI_HEARTBEAT_TIMEOUT_MS:-600000}" "$bin/mmpirun" -n "$n" --transport sim --link bluetooth --no-prefix \
            --timeout "$time_limit" -- "$bin/mmpi-bench" bcast --topology all --sizes "$sizes" \
            --iterations "$iterations" --json
    done
}

# report tcp|sim: that section's tables and targets, from the JSON lines in $results.
report() {
    python3 - "$results" "$1" <<'PYTHON'
import json
import sys

section = sys.argv[2]
runs = [json.loads(line) for line in open(sys.argv[1])]
runs = [run for run in runs if (run["transport"] == "sim") == (section == "sim")]


def human(size):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


# Every run of (op, transport, ranks) as one: per size, the median of the
# runs' medians, the lowest and highest of them, and the choice made most.
def find(op, transport, ranks):
    mine = [run for run in runs if run["op"] == op and run["transport"] == transport and run["ranks"] == ranks]
    if not mine:
        return None
    by_size = {}
    for run in mine:
        for r in run["results"]:
            by_size.setdefault(r["size"], []).append(r)
    results = []
    for size in sorted(by_size):
        medians = sorted(r["median_us"] for r in by_size[size])
        half = len(medians) // 2
        middle = medians[half] if len(medians) % 2 else (medians[half - 1] + medians[half]) / 2
        chosen = [r.get("chosen") or "-" for r in by_size[size]]
        results.append({"size": size, "median_us": middle, "low_us": medians[0], "high_us": medians[-1],
                        "runs": len(medians), "chosen": max(set(chosen), key=chosen.count)})
    return {"op": op, "transport": transport, "ranks": ranks, "results": results}


# Rounds run mmpi and Open MPI one after the other, so the i-th run of each
# met the same minute of the machine: per size, in how many of the rounds
# both measured was mmpi's median the lower (a paired count, which the
# machine's slow and fast minutes move less than the medians).
def paired_wins(op, ranks, size):
    def medians(transport):
        return {run.get("round", 1): next((r["median_us"] for r in run["results"] if r["size"] == size), None)
                for run in runs if run["op"] == op and run["transport"] == transport and run["ranks"] == ranks}
    mine, theirs = medians("tcp"), medians("openmpi-tcp")
    pairs = [(mine[k], theirs[k]) for k in mine.keys() & theirs.keys()
             if mine[k] is not None and theirs[k] is not None]
    return sum(a < b for a, b in pairs), len(pairs)


verdicts = []


def judge(ok, text):
    verdicts.append(("met" if ok else "not met", text))


tcp_ops = ["bcast", "allreduce", "barrier", "alltoall"]
if any(run["transport"] in ("tcp", "openmpi-tcp") for run in runs):
    counts = sorted({r["runs"] for op in tcp_ops for n in (2, 4, 8) for t in ("tcp", "openmpi-tcp")
                     for r in (find(op, t, n) or {}).get("results", [])})
    print(f"\ntcp loopback: median microseconds per call, medians of {'/'.join(map(str, counts))} runs "
          "(mmpi's runs from-to; x = mmpi / Open MPI; faster = rounds in which mmpi's median was the lower)")
    print(f"  {'op':<10}{'ranks':>6}{'size':>10}{'mmpi':>12}{'from':>10}{'to':>10}{'chosen':>11}{'openmpi':>12}{'x':>7}"
          f"{'faster':>8}")
    for op in tcp_ops:
        for n in (2, 4, 8):
            mine, theirs = find(op, "tcp", n), find(op, "openmpi-tcp", n)
            if not mine:
                continue
            for r in mine["results"]:
                other = next((o for o in (theirs or {}).get("results", []) if o["size"] == r["size"]), None)
                ratio = r["median_us"] / other["median_us"] if other else None
                wins, rounds = paired_wins(op, n, r["size"])
                faster = f"{wins}/{rounds}" if rounds else "-"
                print(f"  {op:<10}{n:>6}{human(r['size']):>10}{r['median_us']:>12.1f}{r['low_us']:>10.1f}"
                      f"{r['high_us']:>10.1f}{r['chosen']:>11}"
                      f"{(other['median_us'] if other else float('nan')):>12.1f}{(ratio or float('nan')):>7.2f}"
                      f"{faster:>8}")
                if ratio is None or op not in ("bcast", "allreduce"):
                    continue
                where = f"{op} {n} ranks {human(r['size'])}: {ratio:.2f}x, faster in {faster} rounds"
                if n in (4, 8):
                    judge(ratio <= 1.0, f"tcp {where} (no slower than Open MPI)")
                elif r["size"] <= 1024:
                    judge(ratio <= 2.5, f"tcp {where} (within 2.5x at 2 ranks, small)")
                elif r["size"] >= 1 << 20:
                    judge(ratio <= 1.0, f"tcp {where} (equal from 1 MiB at 2 ranks)")

for run in runs:
    if run["transport"] != "sim" or run["op"] != "bcast":
        continue
    n = run["ranks"]
    sizes = sorted({r["size"] for r in run["results"]})
    topologies = ["auto", "serial", "pipe", "binary", "binomial", "fibonacci"]
    print(f"\nsim {run.get('link', '')}, {n} ranks: bcast median milliseconds (auto's choice; auto / best forced)")
    print(f"  {'size':>9}" + "".join(f"{t:>11}" for t in topologies) + f"{'chosen':>11}{'auto/best':>10}")
    for size in sizes:
        by = {r["topology"]: r for r in run["results"] if r["size"] == size}
        cells = "".join(f"{by[t]['median_us'] / 1000:>11.1f}" if t in by else f"{'-':>11}" for t in topologies)
        forced = [by[t]["median_us"] for t in topologies[1:] if t in by]
        ratio = by["auto"]["median_us"] / min(forced) if "auto" in by and forced else None
        chosen = by.get("auto", {}).get("chosen", "-")
        print(f"  {human(size):>9}{cells}{chosen:>11}{(ratio or float('nan')):>10.2f}")
        if ratio is not None:
            judge(ratio <= 1.05, f"sim {n} ranks {human(size)}: auto {ratio:.2f}x the best forced topology (at most 1.05)")

print("\nTargets")
if not verdicts:
    print("  nothing to judge (no results)")
for verdict, text in verdicts:
    print(f"  {verdict:<8} {text}")
PYTHON
}

# publish tcp|sim TITLE: prints the section's report and writes it to bench/RESULTS.md.
publish() {
    local report_file
    report_file=$(mktemp)
    { echo "$placement"; [ "$quick" = 1 ] && echo "--quick: fewer sizes and calls"; report "$1"; } | tee "$report_file"
    echo
    bench_write_section "collectives-$1" "$2" "$report_file"
    rm -f "$report_file"
}

main() {
    bench_start "$0" "$@"
    parse_arguments "$@"
    bin=$build/bin
    mkdir -p "$build"
    results=$build/collectives.jsonl
    : >"$results"
    placement="placement: each launcher's default; mmpirun --bind-to auto binds nodes in turn when they are
           at most or a multiple of its CPUs, Open MPI leaves ranks beyond the cores unbound"
    echo "collectives on $(hostname), $(nproc) cores; build $build"
    echo "$placement"
    [ "$do_tcp" = 1 ] && run_tcp
    [ "$do_sim" = 1 ] && run_sim
    if [ ! -s "$results" ]; then
        echo "no benchmark produced results" >&2
        exit 1
    fi
    grep -qv '"transport":"sim"' "$results" && publish tcp "Collectives over tcp beside Open MPI (bench/collectives.sh)"
    grep -q '"transport":"sim"' "$results" && publish sim "Broadcast topologies on the sim bluetooth profile (bench/collectives.sh)"
    echo "JSON lines: $results"
}

main "$@"
