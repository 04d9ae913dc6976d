#!/bin/bash
# CTest driver of the rig test: N btnode processes, one per guest of bt-vm's
# run-mesh.py (own kernel, bluetoothd and controller each), form a world by
# Bluetooth discovery and run checked p2p, bcast, allreduce and a bulk
# transfer. Prints formation and throughput as a table.
# Exit 77 (CTest SKIP) with a reason when the rig or its packages are absent.
#   run-rig.sh BTVM_DIR BTNODE PLUGIN_DIR RESULT_DIR NODES
BTVM=$1; BTNODE=$2; PLUGINS=$3; OUT=$4; NODES=${5:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
export BTVM_WORK=${BTVM_WORK:-/var/tmp/mmpi-btvm}
skip() { echo "SKIP: $*"; exit 77; }
[ -x "$BTVM/run-mesh.py" ] || skip "no bt-vm rig at $BTVM"
[ -x "$BTVM_WORK/linux-bt.uml" ] || [ -x "$BTVM/bin/linux-bt.uml" ] || skip "no UML kernel (run $BTVM/setup-host.sh)"
[ -x "$BTVM_WORK/btvirt" ] || [ -x "$BTVM/bin/btvirt" ] || skip "no patched btvirt (run $BTVM/setup-host.sh)"
for tool in /usr/libexec/bluetooth/bluetoothd btmgmt btattach socat dbus-daemon python3; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool missing: apt-get install bluez bluez-test-tools dbus socat"
done
mkdir -p "$OUT"
start=$(date +%s.%N)
"$BTVM/run-mesh.py" -n "$NODES" -t 150 -o "$OUT" "$HERE/bt-node.sh" "$BTNODE" "$NODES" "$PLUGINS"
rc=$?
[ $rc = 125 ] && skip "the rig's hub guest did not come up (see $OUT/hub)"
ok=1
for i in $(seq 0 $((NODES - 1))); do
    grep -q "event=done" "$OUT/node$i/cmd.log" 2>/dev/null || { echo "node$i did not finish"; ok=0; }
done
log0=$OUT/node0/cmd.log
disc=$(grep -o 'discovery complete: [0-9]* node(s) of world [^ ]* after [0-9]*' "$log0" | awk '{print $NF}' | head -1)
form=$(grep -o 'event=formed .*form_ms=[0-9]*' "$log0" | sed 's/.*form_ms=//')
tput=$(grep -o 'event=throughput.*' "$log0")
echo
echo "| nodes | discovery (ms) | mesh set-up after discovery (ms) | formation total (ms) | RFCOMM bulk 0->1 |"
echo "|---|---|---|---|---|"
echo "| $NODES | ${disc:-?} | $(( ${form:-0} - ${disc:-0} )) | ${form:-?} | ${tput#event=throughput } |"
echo "rig run took $(echo "$(date +%s.%N) - $start" | bc) s"
[ $rc = 0 ] && [ $ok = 1 ] && exit 0
exit 1
