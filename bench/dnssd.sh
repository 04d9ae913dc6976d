#!/usr/bin/env bash
# Formation of a discovered tcp world of 4 nodes by DNS-SD alone (the tcp
# transport's built-in multicast DNS responder; no beacon is sent), on a
# bridge of network namespaces this script makes and removes: one node per
# namespace, started 300 ms apart, the root first. Each run measures the
# time from starting the last node to the moment every node has printed
# FORMED (discoverynode, tests/world). Prints median, min and max over the
# runs (default 10) and writes them to the `dnssd` section of
# bench/RESULTS.md. Needs root, `ip` and `bridge`. docs/guide/benchmarks.md
#   sudo bash bench/dnssd.sh [build dir] [runs]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$here/bench/common.sh"
runs=10
nodes=4
base="mmpib$$"

# One run: the time in ms from the last node's start to every node formed.
one_run() {
    local i t0 args
    rm -f "$logs"/*.out
    for i in $(seq 0 $((nodes - 1))); do
        args=(--size "$nodes" --interfaces eth0 --steps DnsSd --timeout 20000 --listen any)
        [ "$i" -eq 0 ] && args+=(--root)
        [ "$i" -eq $((nodes - 1)) ] && t0=$(bench_ms_now)
        bench_node "$i" "$logs" "${args[@]}"
        [ "$i" -lt $((nodes - 1)) ] && sleep 0.3
    done
    bench_wait_line "$logs" "$nodes" '^FORMED' 25000 || { kill "${pids[@]}" 2>/dev/null; return 1; }
    echo $(($(bench_ms_now) - t0))
    bench_reap
}

report() {
    local line
    line=$(bench_timed_runs "$runs" one_run) || exit 1
    echo "discovered tcp world of $nodes nodes by DNS-SD only (built-in responder), one node per"
    echo "network namespace on a bridge, started 300 ms apart; from starting the last node to"
    echo "every node formed, $runs runs (target: median within 2000 ms)"
    printf '%5s %10s %8s %8s   %s\n' nodes "median ms" "min ms" "max ms" "all runs"
    printf '%5d %s\n' "$nodes" "$line"
}

main() {
    bench_start "$0" "$@"
    bench_netns_args dnssd.sh "$@"
    logs=$(mktemp -d)
    pids=()
    trap 'bench_netns_down "$base" "$nodes"; rm -rf "$logs"; rm -f "$errors"' EXIT
    bench_netns_up "$base" "$nodes" 10.49.0
    bench_report dnssd "Formation by DNS-SD on a bridge of namespaces (bench/dnssd.sh)" report
}

main "$@"
