#!/bin/bash
# CTest driver of the rig test: N btnode processes, one per guest of bt-vm's
# run-mesh.py (own kernel, bluetoothd and controller each), form a world by
# Bluetooth discovery and run checked p2p, bcast, allreduce and a bulk
# transfer (or a power-off scenario). Prints formation and throughput as a
# table. Exit 77 (CTest SKIP) with a reason when the rig or its packages are
# absent.
#   run-rig.sh BTVM_DIR BTNODE PLUGIN_DIR RESULT_DIR NODES [BTNODE ARGS...]
# BT_RIG_DEBUG=1: Qt's Bluetooth logging in the nodes and an HCI trace
# (RESULT_DIR/node<i>/hci.btsnoop, read with btmon -r).
# BT_RIG_ATTEMPTS (default 2): the rig's guests sometimes fail on their own
# (a controller that never comes up, a guest kernel that hangs or panics on
# the emulated serial line, docs/bluetooth.md "Status"); a failed run is
# reported and run once more. A real regression fails every attempt.
BTVM=$1; BTNODE=$2; PLUGINS=$3; OUT=$4; NODES=${5:-3}
shift 5 2>/dev/null || shift $#
# the guests see the host's / but not this shell's working directory
BTNODE=$(realpath "$BTNODE"); PLUGINS=$(realpath "$PLUGINS"); OUT=$(realpath -m "$OUT")
HERE=$(cd "$(dirname "$0")" && pwd)
export BTVM_WORK=${BTVM_WORK:-/var/tmp/mmpi-btvm}
DEBUG=${BT_RIG_DEBUG:-0}
ATTEMPTS=${BT_RIG_ATTEMPTS:-2}
[ "$DEBUG" = 1 ] && export BTVM_BTMON=1
skip() { echo "SKIP: $*"; exit 77; }
[ -x "$BTVM/run-mesh.py" ] || skip "no bt-vm rig at $BTVM"
[ -x "$BTVM_WORK/linux-bt.uml" ] || [ -x "$BTVM/bin/linux-bt.uml" ] || skip "no UML kernel (run $BTVM/setup-host.sh)"
[ -x "$BTVM_WORK/btvirt" ] || [ -x "$BTVM/bin/btvirt" ] || skip "no patched btvirt (run $BTVM/setup-host.sh)"
[ -x "$BTNODE" ] || { echo "no btnode at $BTNODE"; exit 1; }
for tool in /usr/libexec/bluetooth/bluetoothd btmgmt btattach socat dbus-daemon python3 /usr/lib/qt6/libexec/sdpscanner; do
    command -v "$tool" >/dev/null 2>&1 ||
        skip "$tool missing: apt-get install bluez bluez-test-tools dbus socat libqt6bluetooth6-bin python3"
done

# One run of the rig; 0 when every node finished with every check passed.
run_once() {
    "$BTVM/run-mesh.py" -n "$NODES" -t 100 -o "$OUT" "$HERE/bt-node.sh" "$BTNODE" "$NODES" "$PLUGINS" "$DEBUG" "$@"
    local rc=$? ok=0
    [ $rc = 125 ] && skip "the rig's hub guest did not come up (see $OUT/hub)"
    for i in $(seq 0 $((NODES - 1))); do
        local log=$OUT/node$i/cmd.log
        if [ ! -e "$log" ]; then
            echo "node$i never ran (its controller or bluetoothd did not come up: $OUT/node$i/console.log)"; ok=1
        elif grep -q "^event=done" "$log"; then
            grep -h "^event=" "$log" | sed "s/^/node$i: /"
        else
            echo "node$i did not finish:"; grep -E "^event=|formation failed|lost rank" "$log" | sed "s/^/  /" | tail -6
            ok=1
        fi
        grep -q "Kernel panic" "$OUT/node$i/console.log" 2>/dev/null &&
            echo "node$i: the guest kernel panicked: $(grep -m1 -A14 'Kernel panic' "$OUT/node$i/console.log" | grep -o '[a-z0-9_]*+0x' | tr '\n' ' ')"
    done
    [ $rc = 0 ] && [ $ok = 0 ]
}

table() {
    local log0=$OUT/node0/cmd.log disc t0 last=0 e tline total mesh
    disc=$(grep -o 'discovery complete: .* after [0-9]* ms' "$log0" | awk '{print $(NF-1)}' | head -1)
    t0=$(grep '^event=start' "$log0" | grep -o 'epoch_ms=[0-9]*' | cut -d= -f2)
    for i in $(seq 0 $((NODES - 1))); do
        e=$(grep '^event=formed' "$OUT/node$i/cmd.log" 2>/dev/null | grep -o 'epoch_ms=[0-9]*' | cut -d= -f2)
        [ -n "$e" ] && [ "$e" -gt "$last" ] && last=$e
    done
    if [ -n "$disc" ] && [ -n "$t0" ] && [ "$last" -gt 0 ]; then
        total=$((last - t0)); mesh=$((total - disc))
    fi
    tline=$(grep -h '^event=throughput\|^event=outage' "$log0" "$OUT"/node*/cmd.log 2>/dev/null | head -1 | cut -d' ' -f2-)
    echo
    echo "| nodes | discovery (inquiry + SDP), ms | mesh set-up after discovery, ms | formation total, ms | bulk rank 0 -> 1 / outage |"
    echo "|---|---|---|---|---|"
    echo "| $NODES | ${disc:-?} | ${mesh:-?} | ${total:-?} | ${tline:-?} |"
}

mkdir -p "$OUT"
for attempt in $(seq "$ATTEMPTS"); do
    start=$(date +%s%N)
    run_once "$@"; rc=$?
    table
    echo "rig run (attempt $attempt of $ATTEMPTS) took $(( ($(date +%s%N) - start) / 1000000 )) ms"
    [ $rc = 0 ] && exit 0
    rm -rf "$OUT.failed$attempt"; cp -r "$OUT" "$OUT.failed$attempt"
    echo "RIG: attempt $attempt FAILED (logs kept in $OUT.failed$attempt)"
done
exit 1
