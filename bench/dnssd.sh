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

ms_now() { echo $(($(date +%s%N) / 1000000)); }

cleanup() {
    local pid
    for pid in "${pids[@]:-}"; do
        [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    done
    for ns in sw $(seq 0 $((nodes - 1))); do
        ip netns del "$base-$ns" 2>/dev/null || true
    done
    rm -rf "$logs"
}

# Namespaces $base-sw (bridge br0) and $base-0..3 (eth0, 10.49.0.1-4/24).
make_network() {
    ip netns add "$base-sw"
    ip -n "$base-sw" link add br0 type bridge
    ip -n "$base-sw" link set br0 up
    for i in $(seq 0 $((nodes - 1))); do
        ip netns add "$base-$i"
        ip -n "$base-sw" link add "p$i" type veth peer name eth0 netns "$base-$i"
        ip -n "$base-sw" link set "p$i" master br0 up
        ip -n "$base-$i" addr add "10.49.0.$((i + 1))/24" dev eth0
        ip -n "$base-$i" link set eth0 up
        ip -n "$base-$i" link set lo up
    done
}

# One run: the time in ms from the last node's start to every node formed.
one_run() {
    local i last t0 deadline formed
    rm -f "$logs"/*.out
    pids=()
    for i in $(seq 0 $((nodes - 1))); do
        local args=(--size "$nodes" --interfaces eth0 --steps DnsSd --timeout 20000 --listen any)
        [ "$i" -eq 0 ] && args+=(--root)
        [ "$i" -eq $((nodes - 1)) ] && t0=$(ms_now)
        ip netns exec "$base-$i" "$bin/discoverynode" "${args[@]}" >"$logs/$i.out" 2>"$logs/$i.err" &
        pids+=($!)
        [ "$i" -lt $((nodes - 1)) ] && sleep 0.3
    done
    deadline=$(($(ms_now) + 25000))
    while :; do
        formed=$(cat "$logs"/*.out 2>/dev/null | grep -c '^FORMED' || true)
        [ "$formed" -eq "$nodes" ] && break
        if [ "$(ms_now)" -gt "$deadline" ] || grep -q '^FAILED' "$logs"/*.out; then
            echo "run failed:" >&2
            cat "$logs"/*.out "$logs"/*.err >&2
            return 1
        fi
        sleep 0.01
    done
    last=$(ms_now)
    for pid in "${pids[@]}"; do
        wait "$pid" || true
    done
    pids=()
    echo $((last - t0))
}

report() {
    local i ms times sorted
    times=()
    for ((i = 0; i < runs; i++)); do
        ms=$(one_run) || exit 1
        times+=("$ms")
    done
    mapfile -t sorted < <(printf '%s\n' "${times[@]}" | sort -n)
    echo "discovered tcp world of $nodes nodes by DNS-SD only (built-in responder), one node per"
    echo "network namespace on a bridge, started 300 ms apart; from starting the last node to"
    echo "every node formed, $runs runs (target: median within 2000 ms)"
    printf '%5s %10s %8s %8s   %s\n' nodes "median ms" "min ms" "max ms" "all runs"
    printf '%5d %10d %8d %8d   %s\n' "$nodes" "${sorted[$((runs / 2))]}" "${sorted[0]}" "${sorted[$((runs - 1))]}" \
        "${times[*]}"
}

main() {
    bench_start "$0" "$@"
    if bench_build_dir "$@"; then
        shift
    fi
    runs=${1:-$runs}
    if ! [[ $runs =~ ^[0-9]+$ ]] || [ "$runs" -lt 1 ]; then
        echo "usage: bash bench/dnssd.sh [build dir] [runs]" >&2
        exit 2
    fi
    if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
        echo "bench/dnssd.sh needs root and iproute2 (network namespaces)" >&2
        exit 2
    fi
    bin=$build/bin
    [ -x "$bin/discoverynode" ] || { echo "no $bin/discoverynode: build the target discoverynode" >&2; exit 2; }
    logs=$(mktemp -d)
    pids=()
    trap 'cleanup; rm -f "$errors"' EXIT
    make_network
    bench_report dnssd "Formation by DNS-SD on a bridge of namespaces (bench/dnssd.sh)" report
}

main "$@"
