#!/bin/bash
# Checks run-rig.sh's verdicts without the rig: a stand-in run-mesh.py plays
# scripted attempts (a pass, an MMPI failure, a hang, a guest kernel panic,
# an HCI command timeout, a node that never ran), and the exit status must
# be 0 on any pass, 77 only when every attempt failed below MMPI, else 1.
#   tst_rigverdict.sh RUN_RIG_SH
RIG=$(realpath "${1:?run-rig.sh}")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/btvm/bin"
printf '#!/bin/sh\nexit 0\n' > "$WORK/btvm/bin/linux-bt.uml"
cp "$WORK/btvm/bin/linux-bt.uml" "$WORK/btvm/bin/btvirt"
chmod +x "$WORK/btvm/bin/"*

# The stand-in: attempt k plays word k of $RIG_PLAYS for every node.
cat > "$WORK/btvm/run-mesh.py" <<'EOF'
#!/bin/bash
while getopts "n:t:o:" opt; do
    case $opt in n) nodes=$OPTARG ;; o) out=$OPTARG ;; *) ;; esac
done
count=$out.attempts
attempt=$(( $(cat "$count" 2>/dev/null || echo 0) + 1 ))
echo "$attempt" > "$count"
read -ra plays <<< "$RIG_PLAYS"
play=${plays[$((attempt - 1))]}
rm -rf "${out:?}"/node*
for i in $(seq 0 $((nodes - 1))); do
    d=$out/node$i
    mkdir -p "$d"
    [ "$play" = never ] && [ "$i" = 1 ] && continue
    echo "event=start epoch_ms=1" > "$d/cmd.log"
    : > "$d/console.log"
    case $play in
    pass) echo "event=done rank=$i" >> "$d/cmd.log" ;;
    fail) echo "event=failed step=bcast reason=TypeMismatch: 7" >> "$d/cmd.log" ;;
    hang) ;;
    panic) echo "event=failed step=barrier reason=NodeLost: gone" >> "$d/cmd.log"
           [ "$i" = 2 ] && printf 'Kernel panic - not syncing\n do_idle+0x1/0x2\n' > "$d/console.log" ;;
    hci) echo "event=failed step=form reason=FormationTimeout: none" >> "$d/cmd.log"
         [ "$i" = 0 ] && echo "Bluetooth: hci0: command 0x0405 tx timeout" > "$d/console.log" ;;
    never) echo "event=failed step=form reason=FormationTimeout: none" >> "$d/cmd.log" ;;
    esac
done
[ "$play" = pass ]
EOF
chmod +x "$WORK/btvm/run-mesh.py"

failures=0
# expect STATUS "PLAYS" [TEXT]: run the rig script on PLAYS (three attempts).
expect() {
    local want=$1 plays=$2 text=${3:-} got out=$WORK/run$RANDOM
    RIG_PLAYS=$plays BT_RIG_ATTEMPTS=3 "$RIG" "$WORK/btvm" /bin/true "$out" 3 > "$out.log" 2>&1
    got=$?
    if [ "$got" = 77 ] && grep -q "missing: apt-get" "$out.log"; then
        echo "SKIP: $(grep -m1 SKIP "$out.log")"; exit 77
    fi
    if [ "$got" != "$want" ] || { [ -n "$text" ] && ! grep -q -- "$text" "$out.log"; }; then
        echo "FAIL: '$plays' exited $got (expected $want${text:+, with '$text'}):"; sed 's/^/    /' "$out.log"
        failures=$((failures + 1))
    else
        echo "ok: '$plays' -> $got"
    fi
}

expect 0 "pass"
expect 0 "panic fail pass" "RIG: attempt 3: passed"
expect 1 "fail fail fail" "attempt 3: failed: node0: event=failed step=bcast"
expect 1 "hang hang hang" "no result (timeout?)"
expect 1 "panic fail panic" "attempt 2: failed"
expect 1 "hci hang never"
expect 77 "panic hci never" "SKIP: the rig failed on its own in every attempt"
expect 77 "panic panic panic" "attempt 3: void: node2: the guest kernel panicked: do_idle+0x"
[ $failures = 0 ]
