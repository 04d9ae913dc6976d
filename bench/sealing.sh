#!/usr/bin/env bash
# What sealing links costs (issue 47's targets): the same `mmpi-bench
# pingpong` over tcp from two builds, one with sealed links and one without
# (a build of the commit before them, e.g. main's), run in turns so that a
# busy minute of the machine hits both alike:
#   4 MiB one way (--oneway): sealed MB/s at least 0.8 x unsealed;
#   small round trips (1, 64, 1024 bytes): sealed at most 1.05 x unsealed.
# Prints per build and size the median of the runs' medians and the lowest
# minimum, and the ratios of both.
#   bash bench/sealing.sh <sealed build dir> <unsealed build dir> [--repeat N] [--iterations K]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$here/bench/common.sh"
bench_start "$0" "$@"
sealed=${1:?usage: bash bench/sealing.sh <sealed build dir> <unsealed build dir> [--repeat N] [--iterations K]}
unsealed=${2:?usage: bash bench/sealing.sh <sealed build dir> <unsealed build dir> [--repeat N] [--iterations K]}
shift 2
repeat=5
iterations=1000
while [ $# -gt 0 ]; do
    case $1 in
        --repeat) repeat=${2:?--repeat needs a value}; shift 2 ;;
        --iterations) iterations=${2:?--iterations needs a value}; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
for dir in "$sealed" "$unsealed"; do
    for tool in mmpirun mmpi-bench; do
        [ -x "$dir/bin/$tool" ] || { echo "$dir/bin/$tool does not exist (build mmpirun and mmpi-bench)" >&2; exit 2; }
    done
done

build=$(cd "$sealed" && pwd) # the build a section names: the sealed one
out=$(mktemp)
trap 'rm -f "$out" "$errors"' EXIT
run() { # <label> <build dir> [pingpong args...]
    local label=$1 dir=$2
    shift 2
    "$dir/bin/mmpirun" -n 2 --transport tcp --no-prefix --timeout 600 -- \
        "$dir/bin/mmpi-bench" pingpong --json --iterations "$iterations" "$@" |
        grep '^{' | sed "s/^{/{\"build\":\"$label\",/" >>"$out"
}
measure() {
    for ((round = 0; round < repeat; ++round)); do
        run sealed "$sealed" --sizes 1,64,1024
        run unsealed "$unsealed" --sizes 1,64,1024
        run sealed "$sealed" --oneway --sizes 4194304
        run unsealed "$unsealed" --oneway --sizes 4194304
    done
}

report() {
    echo "sealed: $sealed; unsealed: $unsealed; $repeat rounds of $iterations iterations, in turns"
python3 - "$out" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    for x in r["results"]:
        rows.setdefault((r["op"], x["size"], r["build"]), []).append(x)
def summary(op, size, build):
    xs = rows.get((op, size, build), [])
    return statistics.median(x["median_us"] for x in xs), min(x["min_us"] for x in xs), \
           statistics.median(x["mbps"] for x in xs), len(xs)
for (op, size) in sorted({(k[0], k[1]) for k in rows}):
    s, u = summary(op, size, "sealed"), summary(op, size, "unsealed")
    if op == "oneway":
        print(f"one way {size} B: sealed {s[2]:.0f} MB/s, unsealed {u[2]:.0f} MB/s (medians of {s[3]} runs): "
              f"{s[2] / u[2]:.2f} x (target >= 0.8 x)")
    else:
        print(f"round trip {size} B: sealed median {s[0]:.1f} us (min {s[1]:.1f}), unsealed {u[0]:.1f} us "
              f"(min {u[1]:.1f}): median {s[0] / u[0]:.2f} x, min {s[1] / u[1]:.2f} x (target <= 1.05 x)")
PY
}

measure
bench_report sealing "Sealed against unsealed links over tcp (bench/sealing.sh)" report
