#!/bin/bash
# Runs in every node guest of bt-vm's run-mesh.py: this guest's controller
# (hci0) serves one btnode; node 0 is the root.
#   bt-node.sh BTNODE SIZE DEBUG(0|1) [BTNODE ARGS...]
# (btnode has the bluetooth transport linked in: no plugin path.)
BIN=${1:?btnode}; SIZE=${2:?size}; DEBUG=${3:-0}
shift 3 2>/dev/null || shift $#
# --scenario rebuild: the last guest is a spare, outside the world of SIZE-1
# until the survivors invite it into the rank of the node that died.
case " $* " in *" rebuild "*) SIZE=$((SIZE - 1)); SPARE=$SIZE ;; *) SPARE=-1 ;; esac
A=$(btmgmt --index 0 info | awk '/addr /{print $2; exit}')
btmgmt --index 0 name "mmpi$BTVM_NODE" >/dev/null
# Secure Connections off: see bt-vm's README (an emulator race, not Qt's).
btmgmt --index 0 sc off >/dev/null
echo "node$BTVM_NODE = $A"
export QT_LOGGING_RULES="mmpi.transport.info=true;mmpi.world.info=true"
[ "$DEBUG" = 1 ] && export QT_LOGGING_RULES="$QT_LOGGING_RULES;qt.bluetooth*=true;mmpi.transport.debug=true"
export QT_MESSAGE_PATTERN="[%{time process}] %{if-category}%{category}: %{endif}%{message}"
discoverable() { btmgmt --index 0 info | grep -q "current settings:.* discoverable"; }
if [ "$BTVM_NODE" = 0 ]; then
    # btvirt answers an inquiry only with the devices discoverable when it
    # starts (a radio keeps listening for 10.24 s), and the guests boot at
    # different speeds: inquire once every node has made itself discoverable.
    for _ in $(seq 300); do
        [ "$(ls "$BTVM_SHARED" | grep -c '^ready\.')" -ge $((SIZE - 1)) ] && break
        sleep 0.1
    done
    echo "peers ready: $(ls "$BTVM_SHARED" | grep '^ready\.' | tr '\n' ' ')"
    "$BIN" --root --size "$SIZE" --formed-mark "$BTVM_SHARED/formed" "$@"
    rc=$?
elif [ "$BTVM_NODE" = "$SPARE" ]; then
    # Seen by the root's inquiry like any device, but with no mmpiNode
    # service until the world has formed: it stays out of the formation.
    btmgmt --index 0 discov yes >/dev/null
    for _ in $(seq 600); do [ -e "$BTVM_SHARED/formed" ] && break; sleep 0.1; done
    "$BIN" --size "$SIZE" --spare "$@"
    rc=$?
else
    "$BIN" --size "$SIZE" "$@" &
    pid=$!
    for _ in $(seq 300); do
        discoverable && { touch "$BTVM_SHARED/ready.$BTVM_NODE"; break; }
        kill -0 $pid 2>/dev/null || break
        sleep 0.1
    done
    wait $pid
    rc=$?
fi
# A guest powers off when this script ends: it stays up (radio on) until
# every node has finished, so that an app killed mid-run (scenario kill)
# leaves a device that answers pages but has nothing listening.
touch "$BTVM_SHARED/done.$BTVM_NODE"
for _ in $(seq 600); do
    [ "$(ls "$BTVM_SHARED" | grep -c '^done\.')" -ge "$BTVM_NODES" ] && break
    sleep 0.1
done
# The links bonded: bluetoothd stored a link key for every peer, so a node
# back in range reconnects without pairing again (bluetoothd's default
# JustWorksRepairing = never refuses that). A node killed mid-run (scenario
# kill) stored its keys too.
bonds=$(grep -l '^\[LinkKey\]' /var/lib/bluetooth/"$A"/*/info 2>/dev/null | wc -l)
echo "event=bonds count=$bonds"
if [ "$rc" = 0 ] && [ "$bonds" -lt $((SIZE - 1)) ]; then
    echo "event=failed step=bonding reason=$bonds stored link key(s) for $((SIZE - 1)) peers"
    rc=1
fi
exit $rc
