#!/usr/bin/env bash
# What sealing links costs against its targets: the same `mmpi-bench
# pingpong` over tcp from two builds, one with sealed links and one without
# (a build of the commit before them), run in turns so that a busy minute of
# the machine hits both alike:
#   4 MiB one way (--oneway): sealed MB/s at least 0.8 x unsealed;
#   small round trips (1, 64, 1024 bytes): sealed at most 1.05 x unsealed.
# Prints per build and size the median of the runs' medians and the lowest
# minimum, and the ratios of both.
# With --profile P (bluetooth, say) it also sends 1 MiB one way between 2
# ranks on the link emulator's profile P (docs/guide/linkemu.md: needs root
# and /dev/net/tun), --profile-repeat M times per build in turns (default 2):
# a 2-rank bcast, whose one call is that one transfer (--profile-iterations
# timed calls a run, default 3; about 12 s each on bluetooth's 90 kB/s).
# Target: sealing costs at most 2 % of the throughput.
#   bash bench/sealing.sh <sealed build dir> <unsealed build dir> [--repeat N] [--iterations K]
#                         [--profile P [--profile-repeat M] [--profile-iterations J]]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$here/bench/common.sh"
bench_start "$0" "$@"
usage="usage: bash bench/sealing.sh <sealed build dir> <unsealed build dir> [--repeat N] [--iterations K] [--profile P [--profile-repeat M] [--profile-iterations J]]"
sealed=${1:?$usage}
unsealed=${2:?$usage}
shift 2
repeat=5
iterations=1000
profile=
profile_repeat=2
profile_iterations=3
while [ $# -gt 0 ]; do
    case $1 in
        --repeat) repeat=${2:?--repeat needs a value}; shift 2 ;;
        --iterations) iterations=${2:?--iterations needs a value}; shift 2 ;;
        --profile) profile=${2:?--profile needs a value}; shift 2 ;;
        --profile-repeat) profile_repeat=${2:?--profile-repeat needs a value}; shift 2 ;;
        --profile-iterations) profile_iterations=${2:?--profile-iterations needs a value}; shift 2 ;;
        *) echo "unknown option $1" >&2; echo "$usage" >&2; exit 2 ;;
    esac
done
for dir in "$sealed" "$unsealed"; do
    for tool in mmpirun mmpi-bench; do
        [ -x "$dir/bin/$tool" ] || { echo "$dir/bin/$tool does not exist (build mmpirun and mmpi-bench)" >&2; exit 2; }
    done
done
# The emulator does not depend on sealing: the sealed build's runs both.
linkemu=$sealed/bin/mmpi-linkemu
if [ -n "$profile" ]; then
    [ -x "$linkemu" ] || { echo "$linkemu does not exist (build mmpi-linkemu)" >&2; exit 2; }
    if [ "$(id -u)" -ne 0 ] || [ ! -c /dev/net/tun ]; then
        echo "bench/sealing.sh: --profile needs root and /dev/net/tun (the link emulator's namespaces and TUN devices)" >&2
        exit 2
    fi
fi

build=$(cd "$sealed" && pwd) # the build a section names: the sealed one
# The commit a build directory was configured from, so that a section says
# which two were compared after their directories are gone.
source_commit() { # <build dir>
    local source
    source=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$1/CMakeCache.txt" 2>/dev/null)
    git -C "${source:-.}" rev-parse --short=12 HEAD 2>/dev/null || echo unknown
}
out=$(mktemp)
trap 'rm -f "$out" "$errors"' EXIT
run() { # <label> <build dir> [pingpong args...]
    local label=$1 dir=$2
    shift 2
    "$dir/bin/mmpirun" -n 2 --transport tcp --no-prefix --timeout 600 -- \
        "$dir/bin/mmpi-bench" pingpong --json --iterations "$iterations" "$@" |
        grep '^{' | sed "s/^{/{\"build\":\"$label\",/" >>"$out"
}
# Ranks 0 and 1 each in a namespace of the emulator, at its address; a
# 2-rank bcast of 1 MiB is 1 MiB one way. Heartbeats queue behind 1 MiB on a
# slow radio like any frame: a long timeout, as bench/emulated.sh sets.
run_emulated() { # <label> <build dir>
    local label=$1 dir=$2 inner
    inner="exec \"\$0\" -n 2 --transport tcp --no-prefix --timeout 1800"
    inner+=" --rank-prefix \"ip netns exec \${MMPI_LINKEMU_PREFIX}{rank}\""
    inner+=" --rank-address \"\${MMPI_LINKEMU_SUBNET}.{rank+1}\" -- \"\$@\""
    env MMPI_HEARTBEAT_INTERVAL_MS=10000 MMPI_HEARTBEAT_TIMEOUT_MS=600000 \
        "$linkemu" --nodes 2 --profile "$profile" --timeout 1800 -- sh -c "$inner" "$dir/bin/mmpirun" \
        "$dir/bin/mmpi-bench" bcast --topology binomial --sizes 1048576 --iterations "$profile_iterations" --json |
        grep '^{' | sed "s/^{/{\"build\":\"$label\",\"profile\":\"$profile\",/" >>"$out"
}
measure() {
    for ((round = 0; round < repeat; ++round)); do
        run sealed "$sealed" --sizes 1,64,1024
        run unsealed "$unsealed" --sizes 1,64,1024
        run sealed "$sealed" --oneway --sizes 4194304
        run unsealed "$unsealed" --oneway --sizes 4194304
    done
    if [ -n "$profile" ]; then
        for ((round = 0; round < profile_repeat; ++round)); do
            run_emulated sealed "$sealed"
            run_emulated unsealed "$unsealed"
        done
    fi
}

report() {
    echo "sealed: $sealed (commit $(source_commit "$sealed")); unsealed: $unsealed (commit $(source_commit "$unsealed"))"
    echo "$repeat rounds of $iterations iterations, in turns"
    [ -z "$profile" ] || echo "emulated $profile: $profile_repeat rounds of $profile_iterations timed calls, in turns"
python3 - "$out" <<'PY'
import json, statistics, sys
rows = {}
profiles = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    profiles[r["op"]] = r.get("profile")
    for x in r["results"]:
        rows.setdefault((r["op"], x["size"], r["build"]), []).append(x)
def summary(op, size, build):
    xs = rows.get((op, size, build), [])
    return statistics.median(x["median_us"] for x in xs), min(x.get("min_us", x["median_us"]) for x in xs), \
           statistics.median(x.get("mbps", 0) for x in xs), len(xs)
for (op, size) in sorted({(k[0], k[1]) for k in rows}):
    s, u = summary(op, size, "sealed"), summary(op, size, "unsealed")
    if op == "bcast":
        profile = profiles["bcast"]
        rate = lambda x: size / x[0] * 1000  # kB/s from the median time (µs)
        cost = 1 - u[0] / s[0]  # the throughput sealing takes away
        print(f"one way {size} B on emulated {profile}, 2 ranks: sealed {s[0] / 1e6:.2f} s ({rate(s):.1f} kB/s), "
              f"unsealed {u[0] / 1e6:.2f} s ({rate(u):.1f} kB/s) (medians of {s[3]} and {u[3]} runs): "
              f"sealing costs {100 * cost:+.1f} % of the throughput (target <= 2 %)")
    elif op == "oneway":
        print(f"one way {size} B: sealed {s[2]:.0f} MB/s, unsealed {u[2]:.0f} MB/s (medians of {s[3]} runs): "
              f"{s[2] / u[2]:.2f} x (target >= 0.8 x)")
    else:
        print(f"round trip {size} B: sealed median {s[0]:.1f} us (min {s[1]:.1f}), unsealed {u[0]:.1f} us "
              f"(min {u[1]:.1f}): median {s[0] / u[0]:.2f} x, min {s[1] / u[1]:.2f} x (target <= 1.05 x)")
PY
}

measure
bench_report sealing "Sealed against unsealed links over tcp (bench/sealing.sh)" report
