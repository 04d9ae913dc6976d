#!/usr/bin/env bash
# Bluetooth on a real BlueZ stack (the bt-vm rig: one User-Mode Linux guest
# per node, each its own kernel, bluetoothd and emulated controller), for 2,
# 3 and 4 nodes: discovery (inquiry + SDP), mesh set-up after discovery, and
# how soon a world is whole again after a node's controller comes back from
# a 5 s power-off (dialled at its remembered address: no inquiry); then soaks
# of the fault scenarios at 3 nodes. Writes the `bluetooth` section of
# bench/RESULTS.md. docs/guide/bluetooth.md#rig-tests-bt-vm
#   bash bench/bluetooth.sh [build dir] [runs per cell (5)] [soak runs (20)]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$here/bench/common.sh"
btvm=${MMPI_BTVM_DIR:-$here/../shared/bt-vm}
[ -x "$btvm/run-mesh.py" ] || btvm=/work/shared/bt-vm
runs=5 soak=20

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "-" }'; }

# One rig run; echoes the values of its table line: discovery, mesh, total,
# whole-again (empty where the run failed).
rig_run() {
    local out
    out=$(mktemp -d /tmp/mmpi-bt-run.XXXXXX)
    if BT_RIG_ATTEMPTS=1 "$here/tests/bluetooth/run-rig.sh" "$btvm" "$build/bin/btnode" "$out/r" "$@" >"$out/log" 2>&1; then
        grep -E '^\| [0-9]+ \|' "$out/log" | tail -1 | awk -F'|' '{ print $3, $4, $5, $7 }'
        rm -rf "$out"
    else
        echo "rig run $* failed: logs in $out" >&2
    fi
}

cells() {
    local n i disc mesh total back d m t b failed
    echo "median of $runs runs per row (a failed run is counted, not measured)"
    printf '%-5s | %-22s | %-26s | %-14s | %-34s | %s\n' nodes "discovery ms" "mesh set-up after discovery ms" "formation ms" \
        "whole again after power-on ms (range)" "failed runs"
    for n in 2 3 4; do
        disc=() mesh=() total=() back=() failed=0
        for ((i = 0; i < runs; i++)); do
            read -r d m t _ < <(rig_run "$n" || true) || true
            if [ -n "${t:-}" ] && [ "$t" != "?" ]; then disc+=("$d") mesh+=("$m") total+=("$t"); else failed=$((failed + 1)); fi
            read -r _ _ _ b < <(rig_run "$n" --scenario range --off-ms 5000 || true) || true
            if [ -n "${b:-}" ] && [ "$b" != "-" ]; then back+=("$b"); else failed=$((failed + 1)); fi
        done
        printf '%-5s | %-22s | %-26s | %-14s | %-34s | %s\n' "$n" "$(median "${disc[@]}") (${#disc[@]} runs)" \
            "$(median "${mesh[@]}")" "$(median "${total[@]}")" "$(median "${back[@]}") (max $(printf '%s\n' "${back[@]:-0}" | sort -n | tail -1))" "$failed"
    done
}

soaks() {
    local s dir
    echo
    echo "soaks at 3 nodes, $soak single attempts each, bluetoothd's default configuration"
    echo "| scenario | runs | passed | failed | void (rig) | whole again after power-on, ms (each passed run) |"
    echo "|---|---|---|---|---|---|"
    for s in range shrink kill; do
        dir=$(mktemp -d /tmp/mmpi-bt-soak.XXXXXX)
        "$here/tests/bluetooth/rig-soak.sh" "$soak" "$btvm" "$build/bin/btnode" "$dir/soak" 3 --scenario "$s" \
            >"$dir/soak.out" 2>&1 || true
        grep -E '^\| 3 nodes' "$dir/soak.out" || echo "| 3 nodes --scenario $s | soak did not run: $dir/soak.out |"
        grep -E '^run [0-9]+: .*failed' "$dir/soak.out" | cut -c1-240 | sed "s|^|  $s |" || true
    done
}

main() {
    bench_start "$0" "$@"
    if bench_build_dir "$@"; then
        shift
    fi
    runs=${1:-$runs} soak=${2:-$soak}
    [ -x "$build/bin/btnode" ] || { echo "no $build/bin/btnode: build the target btnode" >&2; exit 2; }
    bench_report bluetooth "Bluetooth on the bt-vm rig (bench/bluetooth.sh)" report
}

report() {
    echo "bt-vm rig at $btvm (emulated radio: no page or inquiry latency)"
    cells
    soaks
}

main "$@"
