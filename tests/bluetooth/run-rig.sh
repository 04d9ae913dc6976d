#!/bin/bash
# CTest driver of the rig test: N btnode processes, one per guest of bt-vm's
# run-mesh.py (own kernel, bluetoothd and controller each), form a world by
# Bluetooth discovery and run checked p2p, bcast, allreduce and a bulk
# transfer (or a power-off scenario). Prints formation and throughput as a
# table. Exit 77 (CTest SKIP) with a reason when the rig or its packages are
# absent, or when the rig failed on its own in every attempt (below).
#   run-rig.sh BTVM_DIR BTNODE RESULT_DIR NODES [BTNODE ARGS...]
# BT_RIG_DEBUG=1: Qt's Bluetooth logging in the nodes and an HCI trace
# (RESULT_DIR/node<i>/hci.btsnoop, read with btmon -r).
# BT_RIG_ATTEMPTS (default 3): the rig's guests sometimes fail on their own
# (a controller that never comes up, a guest kernel that hangs or panics on
# the emulated serial line, docs/guide/bluetooth.md "Status"); a failed run is
# reported and run again. A real regression fails every attempt. A failed
# run in which a guest kernel panicked, a controller stopped answering or a
# node's stack never came up tested nothing of MMPI: when every attempt
# ended so, the test is skipped (77) with the reasons, not passed.
BTVM=$1; BTNODE=$2; OUT=$3; NODES=${4:-3}
shift 4 2>/dev/null || shift $#
# the guests see the host's / but not this shell's working directory
BTNODE=$(realpath "$BTNODE"); OUT=$(realpath -m "$OUT")
HERE=$(cd "$(dirname "$0")" && pwd)
export BTVM_WORK=${BTVM_WORK:-/var/tmp/mmpi-btvm}
DEBUG=${BT_RIG_DEBUG:-0}
ATTEMPTS=${BT_RIG_ATTEMPTS:-3}
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

# One run of the rig: 0 when every node finished with every check passed;
# else 2 when the rig itself failed on the way (the hub or a node's stack
# never came up, a guest kernel panicked, a controller stopped answering HCI
# commands), else 1. $verdict says which in one line.
run_once() {
    "$BTVM/run-mesh.py" -n "$NODES" -t 100 -o "$OUT" "$HERE/bt-node.sh" "$BTNODE" "$NODES" "$DEBUG" "$@"
    local rc=$? failed="" void="" i log why console
    if [ $rc = 125 ]; then
        verdict="void: the rig's hub guest did not come up (see $OUT/hub)"; return 2
    fi
    for i in $(seq 0 $((NODES - 1))); do
        log=$OUT/node$i/cmd.log console=$OUT/node$i/console.log
        if [ ! -e "$log" ]; then
            echo "node$i never ran (its controller or bluetoothd did not come up: $console)"
            void+=" node$i's stack never came up;"
        elif grep -q "^event=done" "$log"; then
            grep -h "^event=" "$log" | sed "s/^/node$i: /"
        else
            echo "node$i did not finish:"; grep -E "^event=|formation failed|lost rank" "$log" | sed "s/^/  /" | tail -6
            why=$(grep '^event=failed' "$log" | tail -1 | cut -c1-160)
            failed+=" node$i: ${why:-no result (timeout?)};"
        fi
        why=$(rig_fault "$console")
        [ -n "$why" ] && { echo "node$i: $why"; void+=" node$i: $why;"; }
    done
    if [ $rc = 0 ] && [ -z "$failed" ]; then
        verdict="passed"; return 0
    elif [ -n "$void" ]; then
        verdict="void:$void"; return 2
    fi
    verdict="failed:${failed:- run-mesh.py exited with $rc}"; return 1
}

# What a guest's console shows of a failure below MMPI, if anything.
rig_fault() {
    local timeouts
    [ -e "$1" ] || return 0
    timeouts=$(grep -c "Bluetooth: hci0: command 0x[0-9a-f]* tx timeout" "$1")
    if grep -q "Kernel panic" "$1"; then
        echo "the guest kernel panicked: $(grep -m1 -A14 'Kernel panic' "$1" | grep -o '[a-z0-9_]*+0x' | tr '\n' ' ')"
    elif [ "$timeouts" -gt 0 ]; then
        echo "the emulated controller stopped answering HCI commands (timeouts: $timeouts)"
    fi
}

table() {
    local log0=$OUT/node0/cmd.log disc t0 last=0 e tline total mesh back
    disc=$(grep -o 'discovery complete: .* after [0-9]* ms' "$log0" | awk '{print $(NF-1)}' | head -1)
    t0=$(grep '^event=start' "$log0" | grep -o 'epoch_ms=[0-9]*' | cut -d= -f2)
    for i in $(seq 0 $((NODES - 1))); do
        # a spare (scenario rebuild) forms later, into the lost rank
        e=$(grep '^event=formed.*replacement=0' "$OUT/node$i/cmd.log" 2>/dev/null | grep -o 'epoch_ms=[0-9]*' | cut -d= -f2)
        [ -n "$e" ] && [ "$e" -gt "$last" ] && last=$e
    done
    if [ -n "$disc" ] && [ -n "$t0" ] && [ "$last" -gt 0 ]; then
        total=$((last - t0)); mesh=$((total - disc))
    fi
    tline=$(grep -h '^event=throughput\|^event=outage' "$log0" "$OUT"/node*/cmd.log 2>/dev/null | head -1 | cut -d' ' -f2-)
    back=$(grep -h '^event=reconnected' "$OUT"/node*/cmd.log 2>/dev/null | head -1 | grep -o 'ms=[0-9]*' | cut -d= -f2)
    echo
    echo "| nodes | discovery (inquiry + SDP), ms | mesh set-up after discovery, ms | formation total, ms | bulk rank 0 -> 1 / outage | whole again after power-on, ms |"
    echo "|---|---|---|---|---|---|"
    echo "| $NODES | ${disc:-?} | ${mesh:-?} | ${total:-?} | ${tline:-?} | ${back:--} |"
}

mkdir -p "$OUT"
summary=() voids=0
for attempt in $(seq "$ATTEMPTS"); do
    start=$(date +%s%N)
    run_once "$@"; rc=$?
    table
    echo "rig run (attempt $attempt of $ATTEMPTS) took $(( ($(date +%s%N) - start) / 1000000 )) ms"
    summary+=("attempt $attempt: $verdict")
    [ $rc = 0 ] && break
    [ $rc = 2 ] && voids=$((voids + 1))
    rm -rf "$OUT.failed$attempt"; cp -r "$OUT" "$OUT.failed$attempt"
    echo "RIG: attempt $attempt FAILED (logs kept in $OUT.failed$attempt)"
done
# Last, so that a log cut short still shows every attempt's outcome.
printf 'RIG: %s\n' "${summary[@]}"
[ $rc = 0 ] && exit 0
[ $voids = "$ATTEMPTS" ] && skip "the rig failed on its own in every attempt ($ATTEMPTS); nothing of MMPI was tested"
exit 1
