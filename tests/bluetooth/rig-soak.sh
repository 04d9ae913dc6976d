#!/bin/bash
# A soak of one rig scenario: RUNS runs of run-rig.sh with one attempt each,
# in a row; prints a line per run and a table, and exits 0 only when every
# run that tested MMPI passed (void runs, where the rig failed below MMPI,
# are counted and listed apart; all void: 77, skipped).
#   rig-soak.sh RUNS BTVM_DIR BTNODE RESULT_DIR NODES [BTNODE ARGS...]
RUNS=${1:?runs}; BTVM=$2; BTNODE=$3; OUT=$4; NODES=$5
shift 5 2>/dev/null || shift $#
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
passed=0 failed=0 void=0 times=()
for run in $(seq "$RUNS"); do
    start=$(date +%s%N)
    BT_RIG_ATTEMPTS=1 "$HERE/run-rig.sh" "$BTVM" "$BTNODE" "$OUT/run$run" "$NODES" "$@" >"$OUT.run$run.log" 2>&1
    rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    back=$(grep -h '^event=reconnected' "$OUT/run$run"/node*/cmd.log 2>/dev/null | head -1 | grep -o 'ms=[0-9]*' | cut -d= -f2)
    case $rc in
    0) passed=$((passed + 1)); times+=("${back:-}") ;;
    77) void=$((void + 1)) ;;
    *) failed=$((failed + 1)) ;;
    esac
    echo "run $run: $(grep '^RIG: attempt 1:' "$OUT.run$run.log" | cut -c1-200) ($ms ms${back:+, whole again $back ms after power-on})"
    [ $rc = 0 ] && rm -rf "$OUT/run$run" "$OUT.run$run.log"
done
echo
echo "| scenario args | runs | passed | failed | void (rig) | whole again after power-on, ms (each passed run) |"
echo "|---|---|---|---|---|---|"
echo "| $NODES nodes $* | $RUNS | $passed | $failed | $void | ${times[*]:--} |"
[ $failed -gt 0 ] && exit 1
[ $passed = 0 ] && { echo "SKIP: every run was void"; exit 77; }
exit 0
