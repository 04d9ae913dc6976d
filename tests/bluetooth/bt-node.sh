#!/bin/bash
# Runs in every node guest of bt-vm's run-mesh.py: this guest's controller
# (hci0) serves one btnode; node 0 is the root. Args: BTNODE SIZE PLUGIN_DIR
BIN=${1:?btnode}; SIZE=${2:?size}; PLUGINS=${3:?plugin dir}
A=$(btmgmt --index 0 info | awk '/addr /{print $2; exit}')
btmgmt --index 0 name "mmpi$BTVM_NODE" >/dev/null
# Secure Connections off: see bt-vm's README (an emulator race, not Qt's).
btmgmt --index 0 sc off >/dev/null
echo "node$BTVM_NODE = $A"
export MMPI_PLUGIN_PATH=$PLUGINS
export QT_LOGGING_RULES="mmpi.transport.info=true;mmpi.world.info=true"
ROOT=""
[ "$BTVM_NODE" = 0 ] && ROOT=--root
# the root starts inquiring only once the others advertise
[ "$BTVM_NODE" = 0 ] && sleep 1
exec "$BIN" $ROOT --size "$SIZE"
