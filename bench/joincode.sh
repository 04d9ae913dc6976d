#!/usr/bin/env bash
# Formation of a discovered tcp world of 4 nodes by join code, on a bridge of
# network namespaces this script makes and removes (one node per namespace).
# The root starts first and makes the code (discoverynode --make-code); once
# it waits for join-code adverts, the code is given to the three other nodes,
# which start with it and with the join code as their only discovery step
# (the adverts go straight to the root's address in the code, as on a
# network that carries no broadcast). Each run measures the time from giving
# the code (starting those nodes) to every node having printed FORMED, so it
# includes the nodes' start and the key derivation from the code. Prints
# median, min and max over the runs (default 10) and writes them to the
# `joincode` section of bench/RESULTS.md. Needs root and `ip`.
# docs/guide/benchmarks.md
#   sudo bash bench/joincode.sh [build dir] [runs]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$here/bench/common.sh"
runs=10
nodes=4
base="mmpij$$"

# One run: the time in ms from giving the code to every node formed.
one_run() {
    local i t0 code args=(--size "$nodes" --interfaces eth0 --steps JoinCode --timeout 20000 --listen any)
    rm -f "$logs"/*.out
    bench_node 0 "$logs" "${args[@]}" --root --make-code
    bench_wait_line "$logs" 1 '^STEP started JoinCode' 10000 || { kill "${pids[@]}" 2>/dev/null; return 1; }
    code=$(sed -n 's/^CODE //p' "$logs/0.out")
    t0=$(bench_ms_now)
    for i in $(seq 1 $((nodes - 1))); do
        bench_node "$i" "$logs" "${args[@]}" --join-code "$code"
    done
    bench_wait_line "$logs" "$nodes" '^FORMED' 25000 || { kill "${pids[@]}" 2>/dev/null; return 1; }
    echo $(($(bench_ms_now) - t0))
    bench_reap
}

report() {
    local line
    line=$(bench_timed_runs "$runs" one_run) || exit 1
    echo "discovered tcp world of $nodes nodes by join code only, one node per network namespace on"
    echo "a bridge; from giving the root's code to the other $((nodes - 1)) nodes (starting them) to every"
    echo "node formed, $runs runs (target: within 1000 ms)"
    printf '%5s %10s %8s %8s   %s\n' nodes "median ms" "min ms" "max ms" "all runs"
    printf '%5d %s\n' "$nodes" "$line"
}

main() {
    bench_start "$0" "$@"
    bench_netns_args joincode.sh "$@"
    logs=$(mktemp -d)
    pids=()
    trap 'bench_netns_down "$base" "$nodes"; rm -rf "$logs"; rm -f "$errors"' EXIT
    bench_netns_up "$base" "$nodes" 10.50.0
    bench_report joincode "Formation by join code on a bridge of namespaces (bench/joincode.sh)" report
}

main "$@"
