#!/usr/bin/env bash
# Formation time of launched worlds on this machine: median, min and max over
# several runs of `mmpirun -n N mmpi-ring --rounds 1`, as measured by rank 0
# from form() to formed(). Prints a table.
#   bash bench/formation.sh [build dir] [runs]
set -euo pipefail
build=${1:-$(cd "$(dirname "$0")/.." && pwd)/build}
runs=${2:-7}
printf '%-9s %5s %10s %8s %8s\n' transport nodes "median ms" "min ms" "max ms"
for transport in local tcp; do
    for n in 2 4 7; do
        times=()
        for ((i = 0; i < runs; i++)); do
            line=$("$build/bin/mmpirun" -n "$n" --transport "$transport" --timeout 60 -- \
                   "$build/bin/mmpi-ring" --rounds 1 | grep -o 'formed in [0-9]* ms' || true)
            [ -n "$line" ] || { echo "run failed: $transport n=$n" >&2; exit 1; }
            times+=("$(echo "$line" | grep -o '[0-9]*')")
        done
        sorted=($(printf '%s\n' "${times[@]}" | sort -n))
        printf '%-9s %5d %10d %8d %8d\n' "$transport" "$n" "${sorted[$((runs / 2))]}" "${sorted[0]}" "${sorted[$((runs - 1))]}"
    done
done
