#!/usr/bin/env bash
# Formation time of launched worlds on this machine: median, min and max over
# several runs of `mmpirun -n N mmpi-ring --rounds 1`, as measured by rank 0
# from form() to formed(). Prints a table and writes it to the `formation`
# section of bench/RESULTS.md. docs/guide/benchmarks.md
#   bash bench/formation.sh [build dir] [runs]   (runs: default 7)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$here/bench/common.sh"
runs=7

# One run's formation time in ms, from rank 0's "formed in N ms".
formation_ms() {
    "$bin/mmpirun" -n "$2" --transport "$1" --timeout 60 -- "$bin/mmpi-ring" --rounds 1 \
        | grep -o 'formed in [0-9]* ms' | grep -o '[0-9]*'
}

table() {
    local transport n i ms times sorted
    printf '%-9s %5s %10s %8s %8s\n' transport nodes "median ms" "min ms" "max ms"
    for transport in local tcp; do
        for n in 2 4 7; do
            times=()
            for ((i = 0; i < runs; i++)); do
                ms=$(formation_ms "$transport" "$n") || { echo "run failed: $transport n=$n" >&2; exit 1; }
                times+=("$ms")
            done
            mapfile -t sorted < <(printf '%s\n' "${times[@]}" | sort -n)
            printf '%-9s %5d %10d %8d %8d\n' "$transport" "$n" "${sorted[$((runs / 2))]}" "${sorted[0]}" \
                "${sorted[$((runs - 1))]}"
        done
    done
}

main() {
    bench_start "$0" "$@"
    if bench_build_dir "$@"; then
        shift
    fi
    runs=${1:-$runs}
    if ! [[ $runs =~ ^[0-9]+$ ]] || [ "$runs" -lt 1 ]; then
        echo "usage: bash bench/formation.sh [build dir] [runs]" >&2
        exit 2
    fi
    bin=$build/bin
    bench_report formation "Formation of launched worlds (bench/formation.sh)" report
}

report() {
    echo "formation of launched worlds, $runs runs each (rank 0, form() to formed())"
    table
}

main "$@"
