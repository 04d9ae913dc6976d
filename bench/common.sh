# Sourced by the bench scripts (pingpong.sh, collectives.sh, formation.sh,
# dnssd.sh, joincode.sh): the parts they share, running one benchmark into JSON
# lines, installing the Debian packages of a competitor, timing discovered
# worlds on a bridge of network namespaces, and writing the script's own
# section of bench/RESULTS.md.
# The script sets `here` (the source tree) before sourcing, and calls
# bench_start "$0" "$@" first thing. docs/guide/benchmarks.md#results

errors=$(mktemp)
trap 'rm -f "$errors"' EXIT

# bench_quote WORD: WORD as a shell reads it, quoted only where it must be,
# so that a command line reads as it was typed.
bench_quote() {
    if [[ $1 =~ ^[A-Za-z0-9_./,:=+@%-]+$ ]]; then
        printf '%s' "$1"
    else
        printf "'%s'" "${1//\'/\'\\\'\'}"
    fi
}

# bench_start SCRIPT ARGS...: what a section says about the run, taken before
# it changes anything: the command line (with the MMPI_* variables set) and
# the load of the machine.
bench_start() {
    local word name
    bench_command=""
    for name in $(compgen -e | grep '^MMPI_' | sort); do
        bench_command+="$name=$(bench_quote "${!name}") "
    done
    bench_command+=bash
    for word in "$@"; do
        bench_command+=" $(bench_quote "$word")"
    done
    bench_load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
    # At the start: a checkout that moves on during a long run is not what
    # the run's programs were built from.
    bench_started_at=$(bench_commit)
}

# bench_build_dir [DIR]: sets `build` (absolute) from the script's first
# argument, or the source tree's build/; true if DIR was one (shift it).
bench_build_dir() {
    build=$here/build
    if [ $# -gt 0 ] && [[ $1 != -* ]]; then
        build=$(cd "$1" && pwd)
        return 0
    fi
    return 1
}

# bench_measure NAME COMMAND...: runs one benchmark (at most $time_limit
# seconds) and appends its JSON line to $results with "name" (and "round",
# while $round is set) added; a failure is reported with the start of its
# stderr, and not fatal.
bench_measure() {
    local name=$1 status=0 out line
    shift
    echo "== $name${round:+ (run $round of $repeat)}"
    out=$(timeout "$time_limit" "$@" 2>"$errors") || status=$?
    line=$(printf '%s\n' "$out" | sed 's/^\[[0-9]*\] //' | grep -m1 '^{"op":' || true)
    if [ -n "$line" ]; then
        line=${line/#\{/\{\"name\":\"$name\",}
        [ -n "${round:-}" ] && line="${line%\}},\"round\":$round}"
        echo "$line" >>"$results"
    else
        echo "   $name failed (exit $status); its stderr begins:"
        grep -v -e '^-*$' -e '^ *$' "$errors" | head -n 6 | sed 's/^/   | /'
    fi
}

# bench_skip NAME WHY
bench_skip() {
    echo "== $1: skipped, $2"
}

# bench_ensure_packages CHECK WHAT PACKAGE...: succeeds when the command CHECK
# does, after installing the Debian PACKAGEs with apt-get if it did not and
# the script runs as root (not with MMPI_BENCH_INSTALL=0); otherwise sets
# `why` to what is missing and how to install it.
bench_ensure_packages() {
    local check=$1 what=$2
    shift 2
    "$check" && return 0
    if [ "$(id -u)" -ne 0 ]; then
        why="$what not found; install $* (apt-get install $*; as root this script does)"
        return 1
    fi
    if [ "${MMPI_BENCH_INSTALL:-1}" = 0 ]; then
        why="$what not found and MMPI_BENCH_INSTALL=0 (apt-get install $* would install it)"
        return 1
    fi
    echo "== installing $*"
    if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends "$@"; } >"$errors" 2>&1; then
        why="apt-get install $* failed: $(tail -n 1 "$errors")"
        return 1
    fi
    "$check" || { why="$what still not found after installing $*"; return 1; }
}

bench_have_openmpi() {
    command -v mpirun >/dev/null && command -v mpicc >/dev/null
}

bench_ensure_openmpi() {
    bench_ensure_packages bench_have_openmpi "mpirun or mpicc" openmpi-bin libopenmpi-dev
}

# bench_build_mpi_collectives: builds $bin/mpi-collectives (the Open MPI
# baseline, bench/mpicollectives.c) when missing or older than its sources;
# on failure sets `why`.
bench_build_mpi_collectives() {
    local source=$here/bench/mpicollectives.c target=$bin/mpi-collectives
    if [ -x "$target" ] && [ "$target" -nt "$source" ] && [ "$target" -nt "$here/bench/collectives.h" ] \
        && [ "$target" -nt "$here/bench/pingpong.h" ]; then
        return 0
    fi
    mkdir -p "$bin"
    mpicc -O2 -Wall -Wextra -I"$here/bench" -o "$target" "$source" 2>"$errors" && return 0
    why="mpicc failed: $(head -n 3 "$errors")"
    return 1
}

bench_ms_now() { echo $(($(date +%s%N) / 1000000)); }

# bench_netns_up BASE N SUBNET: namespaces BASE-sw (bridge br0) and
# BASE-0..N-1 (eth0, SUBNET.1.. /24, on the bridge; lo up).
bench_netns_up() {
    local base=$1 nodes=$2 subnet=$3 i
    ip netns add "$base-sw"
    ip -n "$base-sw" link add br0 type bridge
    ip -n "$base-sw" link set br0 up
    for i in $(seq 0 $((nodes - 1))); do
        ip netns add "$base-$i"
        ip -n "$base-sw" link add "p$i" type veth peer name eth0 netns "$base-$i"
        ip -n "$base-sw" link set "p$i" master br0 up
        ip -n "$base-$i" addr add "$subnet.$((i + 1))/24" dev eth0
        ip -n "$base-$i" link set eth0 up
        ip -n "$base-$i" link set lo up
    done
}

# bench_netns_down BASE N: kills the PIDs in `pids` and removes what
# bench_netns_up made (what is not there is passed over).
bench_netns_down() {
    local base=$1 nodes=$2 pid ns
    for pid in "${pids[@]:-}"; do
        [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    done
    for ns in sw $(seq 0 $((nodes - 1))); do
        ip netns del "$base-$ns" 2>/dev/null || true
    done
}

# bench_node I LOGS ARGS...: discoverynode ARGS in namespace $base-I, its
# output in LOGS/I.out and .err; its PID is added to `pids`.
bench_node() {
    local i=$1 logs=$2
    shift 2
    ip netns exec "$base-$i" "$bin/discoverynode" "$@" >"$logs/$i.out" 2>"$logs/$i.err" &
    pids+=($!)
}

# bench_wait_line LOGS N PATTERN MS: waits until N of LOGS/*.out have a line
# matching PATTERN; fails, showing the logs, on a FAILED line or after MS.
bench_wait_line() {
    local logs=$1 count=$2 pattern=$3 deadline=$(($(bench_ms_now) + $4)) seen
    while :; do
        seen=$(cat "$logs"/*.out 2>/dev/null | grep -c "$pattern" || true)
        [ "$seen" -ge "$count" ] && return 0
        if [ "$(bench_ms_now)" -gt "$deadline" ] || grep -q '^FAILED' "$logs"/*.out 2>/dev/null; then
            echo "run failed waiting for $count '$pattern':" >&2
            cat "$logs"/*.out "$logs"/*.err >&2
            return 1
        fi
        sleep 0.01
    done
}

# bench_reap: waits for the PIDs in `pids` and empties it.
bench_reap() {
    local pid
    for pid in "${pids[@]:-}"; do
        [ -n "$pid" ] && { wait "$pid" || true; }
    done
    pids=()
}

# bench_timed_runs RUNS COMMAND...: runs COMMAND (which prints one time in ms)
# RUNS times and prints "median min max   all runs"; fails if a run does.
bench_timed_runs() {
    local runs=$1 i ms times=() sorted
    shift
    for ((i = 0; i < runs; i++)); do
        ms=$("$@") || return 1
        times+=("$ms")
    done
    mapfile -t sorted < <(printf '%s\n' "${times[@]}" | sort -n)
    printf '%10d %8d %8d   %s\n' "${sorted[$((runs / 2))]}" "${sorted[0]}" "${sorted[$((runs - 1))]}" "${times[*]}"
}

# bench_netns_args SCRIPT ARGS...: what dnssd.sh and joincode.sh check
# before they start: a build dir argument, the number of runs (sets `runs`),
# root and iproute2, and discoverynode (sets `bin`).
bench_netns_args() {
    local script=$1
    shift
    if bench_build_dir "$@"; then
        shift
    fi
    runs=${1:-$runs}
    if ! [[ $runs =~ ^[0-9]+$ ]] || [ "$runs" -lt 1 ]; then
        echo "usage: bash bench/$script [build dir] [runs]" >&2
        exit 2
    fi
    if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
        echo "bench/$script needs root and iproute2 (network namespaces)" >&2
        exit 2
    fi
    bin=$build/bin
    [ -x "$bin/discoverynode" ] || { echo "no $bin/discoverynode: build the target discoverynode" >&2; exit 2; }
}

# The source tree's commit, and whether tracked files differ from it (but
# for bench/RESULTS.md, which the scripts write).
bench_commit() {
    local commit
    if ! commit=$(git -C "$here" rev-parse --short=12 HEAD 2>/dev/null); then
        echo "unknown (not a git checkout)"
        return
    fi
    commit="$commit ($(git -C "$here" log -1 --format=%cs HEAD))"
    if [ -n "$(git -C "$here" status --porcelain --untracked-files=no -- . ':(exclude)bench/RESULTS.md' 2>/dev/null)" ]; then
        commit="$commit, with uncommitted changes"
    fi
    echo "$commit"
}

bench_machine() {
    local cpu
    cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
    echo "$(uname -srm), ${cpu:-unknown CPU}, $(grep -c '^processor' /proc/cpuinfo) CPUs" \
        "($(nproc) usable), load average $bench_load at the start"
}

bench_build_type() {
    sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null | head -n 1
}

# bench_report NAME TITLE COMMAND...: runs COMMAND, shows what it prints and
# writes that as section NAME (bench_write_section).
bench_report() {
    local name=$1 title=$2 report
    shift 2
    report=$(mktemp)
    "$@" | tee "$report"
    echo
    bench_write_section "$name" "$title" "$report"
    rm -f "$report"
}

# bench_write_section NAME TITLE REPORT: replaces section NAME of
# bench/RESULTS.md (MMPI_BENCH_RESULTS=FILE: of FILE; =0: none) with TITLE,
# the run's date, machine, command, commit and build, and the text of the
# file REPORT; a new section goes at the end.
bench_write_section() {
    local name=$1 title=$2 report=$3 file=${MMPI_BENCH_RESULTS:-$here/bench/RESULTS.md} section
    [ "$file" = 0 ] && return 0
    section=$(mktemp)
    {
        echo "<!-- bench:$name -->"
        echo "## $title"
        echo
        echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
        echo "- machine: $(bench_machine)"
        echo "- command: \`$bench_command\`"
        echo "- commit: ${bench_started_at:-$(bench_commit)}"
        echo "- build: $build (CMAKE_BUILD_TYPE $(bench_build_type))"
        echo
        echo '```text'
        cat "$report"
        echo '```'
        echo "<!-- /bench:$name -->"
    } >"$section"
    python3 - "$file" "$name" "$section" <<'PYTHON'
import os
import sys

path, name, section = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
begin, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
if os.path.exists(path):
    text = open(path).read()
else:
    text = ("# Benchmark results\n\n"
            "Written by the scripts in `bench/` (`bench/common.sh`), each into its own section between\n"
            "`<!-- bench:NAME -->` markers, which a new run replaces; not edited by hand. What they\n"
            "measure and how: [docs/guide/benchmarks.md](../docs/guide/benchmarks.md).\n")
start = text.find(begin)
stop = text.find(end, start)
if start >= 0 and stop >= 0:
    text = text[:start] + section.rstrip("\n") + text[stop + len(end):]
else:
    text = text.rstrip("\n") + "\n\n" + section
if not text.endswith("\n"):
    text += "\n"
temporary = path + ".new"
with open(temporary, "w") as out:
    out.write(text)
os.replace(temporary, path)
PYTHON
    rm -f "$section"
    echo "results: section '$name' of $file"
}
