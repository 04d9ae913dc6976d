#!/usr/bin/env bash
# Collectives over the real tcp transport on emulated radios (docs/guide/linkemu.md,
# docs/guide/benchmarks.md#emulated-links), in one run: mmpi-linkemu puts each
# rank in a network namespace of its own whose egress behaves like the
# profile's radio (bluetooth: 30 ms one way, 90 kB/s on the wire; wifi: 2 ms,
# 5 MB/s; one radio per node), and for every profile and size of world
#  - `mmpi-bench links`: how soon a fresh world, sending nothing, knows each
#    link's latency and its radio's rate (what its first broadcasts plan with);
#  - `mmpi-bench bcast` measures every topology and auto, 16 B to 1 MiB (on
#    bluetooth 1 MiB with the segmented topologies, pipe and fibonacci, and
#    auto only: a store-and-forward one takes 35-85 s a call), beside the
#    broadcast model's times (`mmpi-bench bcast-model`) for these links;
#  - scatter, gather, allgather, reduce and allreduce, as the app calls them;
#  - Open MPI's MPI_Bcast and the same collectives over the same radios
#    (its tcp BTL on the namespaces' radio0; mpirun's PMIx server and the ranks
#    talk over the emulator's unshaped control network), unless --no-openmpi;
#  - `mmpi-bench canvas` (MMPE primitives per second to every node), and the
#    game's bots (`mmpi-game --bots`): the tick rate every device keeps.
# Written to bench/RESULTS.md, section `emulated` (a run narrowed by options:
# `emulated-partial`); JSON lines: <build>/emulated.jsonl.
#   bash bench/emulated.sh [build dir] [--profiles P,P] [--ranks N,N] [--quick]
#                          [--ops bcast,collectives,canvas,game] [--iterations K] [--sizes N,N] [--no-openmpi]
#
# Defaults: profiles bluetooth,wifi; ranks 4,8,16; every op: a few hours of
# radio time is mostly 16-rank bluetooth, where a 64 KiB serial broadcast is
# 11 s. --quick: bluetooth, 8 ranks, broadcasts to 64 KiB (about 4 minutes).
# Needs root and /dev/net/tun (the emulator's namespaces and TUN devices);
# elsewhere it says why and stops. Heartbeats queue behind large messages on a
# 90 kB/s radio like any frame; the run sets a long heartbeat timeout (as
# bench/collectives.sh does for sim) so that a busy radio is not taken for a
# lost node. Every run is limited to MMPI_BENCH_TIMEOUT seconds (1800).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$here/bench/common.sh"
time_limit=${MMPI_BENCH_TIMEOUT:-1800}
profiles=bluetooth,wifi
rank_list=4,8,16
ops=bcast,collectives,canvas,game
iterations=5
openmpi=1
collectives=(scatter gather allgather reduce allreduce)

usage() {
    echo "usage: bash bench/emulated.sh [build dir] [--profiles P,P] [--ranks N,N] [--quick]"
    echo "                              [--ops bcast,collectives,canvas,game] [--iterations K] [--sizes N,N] [--no-openmpi]"
}

parse_arguments() {
    if bench_build_dir "$@"; then
        shift
    fi
    while [ $# -gt 0 ]; do
        case $1 in
        --profiles) profiles=${2:?--profiles needs a value}; shift 2 ;;
        --ranks) rank_list=${2:?--ranks needs a value}; shift 2 ;;
        --ops) ops=${2:?--ops needs a value}; shift 2 ;;
        --iterations) iterations=${2:?--iterations needs a value}; shift 2 ;;
        --sizes) bcast_size_list=${2:?--sizes needs a value}; shift 2 ;;
        --no-openmpi) openmpi=0; shift ;;
        --quick) profiles=bluetooth; rank_list=8; ops=bcast; quick=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
        esac
    done
    local n
    for n in ${rank_list//,/ }; do
        if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 2 ] || [ "$n" -gt 64 ]; then
            echo "bench/emulated.sh: --ranks takes sizes of 2 to 64, not '$n'" >&2
            exit 2
        fi
    done
    if ! [[ $iterations =~ ^[0-9]+$ ]] || [ "$iterations" -lt 1 ]; then
        echo "bench/emulated.sh: --iterations must be a whole number above 0, not '$iterations'" >&2
        exit 2
    fi
}

# What a profile's links are, as mmpi-linkemu's profiles say (docs/guide/linkemu.md).
profile_link() {
    case $1 in
    bluetooth) echo "--latency-ms 30 --rate 90000" ;;
    bluetooth-edr) echo "--latency-ms 30 --rate 270000" ;;
    wifi) echo "--latency-ms 2 --rate 5000000" ;;
    *) return 1 ;;
    esac
}

# The broadcast's sizes (--quick: to 64 KiB), and the other collectives'
# (on bluetooth to 16 KiB: a 16-rank allgather of 64 KiB is 11 s a call).
bcast_sizes() {
    if [ -n "${bcast_size_list:-}" ]; then
        echo "$bcast_size_list"
    elif [ -n "${quick:-}" ]; then echo 16,1024,4096,65536; else echo 16,1024,4096,65536,1048576; fi
}
collective_sizes() {
    if [ "$1" = wifi ]; then echo 16,1024,65536,1048576; else echo 16,1024,16384; fi
}

# Sets `emulator` to the command that runs a command on the host with N
# emulated nodes of PROFILE: the command gets the namespaces' prefix and
# subnet in MMPI_LINKEMU_PREFIX/SUBNET (bench_measure's timeout runs it).
emulator_for() {
    local profile=$1 n=$2
    emulator=(env MMPI_HEARTBEAT_INTERVAL_MS="${MMPI_HEARTBEAT_INTERVAL_MS:-10000}"
        MMPI_HEARTBEAT_TIMEOUT_MS="${MMPI_HEARTBEAT_TIMEOUT_MS:-600000}"
        "$bin/mmpi-linkemu" --nodes "$n" --profile "$profile" --timeout "$time_limit" --)
}

# mmpirun's ranks each in its namespace, at its address; the namespace
# prefix is known only inside the emulator's command.
run_mmpi() {
    local name=$1 profile=$2 n=$3 inner
    shift 3
    inner="exec \"\$0\" -n $n --transport tcp --no-prefix --timeout $time_limit"
    inner+=" --rank-prefix \"ip netns exec \${MMPI_LINKEMU_PREFIX}{rank}\""
    inner+=" --rank-address \"\${MMPI_LINKEMU_SUBNET}.{rank+1}\" -- \"\$@\""
    emulator_for "$profile" "$n"
    bench_measure "$name" "${emulator[@]}" sh -c "$inner" "$bin/mmpirun" "$bin/mmpi-bench" "$@" --json
}

# Open MPI's ranks the same way: each execs itself into its namespace, and
# the tcp BTL uses radio0 alone. A rank reaches mpirun's PMIx server over
# TCP (PMIx 4 has no Unix socket), which the namespace's loopback does not
# carry: the emulator's control network does, unshaped, and PMIx listens on
# its bridge.
run_openmpi() {
    local name=$1 profile=$2 n=$3 inner
    shift 3
    inner="PMIX_MCA_ptl_tcp_if_include=\$MMPI_LINKEMU_CONTROL PMIX_MCA_ptl_tcp_remote_connections=1"
    inner+=" exec mpirun -n $n --oversubscribe --mca btl tcp,self --mca btl_tcp_if_include radio0"
    [ "$(id -u)" -eq 0 ] && inner+=" --allow-run-as-root"
    inner+=" sh -c 'exec ip netns exec \${MMPI_LINKEMU_PREFIX}\${OMPI_COMM_WORLD_RANK} \"\$0\" \"\$@\"' \"\$0\" \"\$@\""
    emulator_for "$profile" "$n"
    emulator=("${emulator[@]:0:${#emulator[@]}-1}" --control 10.78.0 --)
    bench_measure "$name" "${emulator[@]}" sh -c "$inner" "$bin/mpi-collectives" "$@" --json
}

run_model() {
    local profile=$1 n=$2
    # shellcheck disable=SC2046 # the link's options are words
    bench_measure "model bcast $profile $n" "$bin/mmpi-bench" bcast-model --ranks "$n" $(profile_link "$profile") \
        --sizes "$(bcast_sizes)" --json
}

run_bcast() {
    local profile=$1 n=$2 sizes
    sizes=$(bcast_sizes)
    run_model "$profile" "$n"
    run_mmpi "mmpi links $profile $n" "$profile" "$n" links --wait 10000
    if [ "$profile" = bluetooth ] && [[ $sizes == *,1048576 ]]; then
        run_mmpi "mmpi bcast $profile $n" "$profile" "$n" bcast --topology all --sizes "${sizes%,1048576}" \
            --iterations "$iterations"
        run_mmpi "mmpi bcast $profile $n 1 MiB" "$profile" "$n" bcast --topology auto,pipe,fibonacci \
            --sizes 1048576 --iterations 3
    else
        run_mmpi "mmpi bcast $profile $n" "$profile" "$n" bcast --topology all --sizes "$sizes" \
            --iterations "$iterations"
    fi
    # Open MPI's 1 MiB on bluetooth is a store-and-forward tree: minutes a call.
    [ "$openmpi" = 1 ] && run_openmpi "openmpi bcast $profile $n" "$profile" "$n" bcast \
        --sizes "$([ "$profile" = bluetooth ] && echo "${sizes%,1048576}" || echo "$sizes")" --iterations "$iterations"
    return 0
}

# One 1 MiB message between 2 ranks: the rate a single link reaches.
run_pair() {
    run_mmpi "mmpi bcast $1 2" "$1" 2 bcast --sizes 1048576 --iterations 3
}

run_collectives() {
    local profile=$1 n=$2 op
    for op in "${collectives[@]}"; do
        run_mmpi "mmpi $op $profile $n" "$profile" "$n" "$op" --sizes "$(collective_sizes "$profile")" \
            --iterations "$iterations"
        [ "$openmpi" = 1 ] && run_openmpi "openmpi $op $profile $n" "$profile" "$n" "$op" \
            --sizes "$(collective_sizes "$profile")" --iterations "$iterations"
    done
    return 0
}

# The game's bots at TICK_MS per tick: how many ticks a second reach the
# slowest device (from the root's first tick to that device's last), and how
# far behind the root it ends.
# A tick rate the radio cannot carry leaves the root's queues growing; the
# run gets 2 minutes, not the whole time limit.
run_game() {
    local profile=$1 n=$2 tick_ms=$3 ticks=200 out status=0 inner time_limit=120
    echo "== mmpi game $profile $n ${tick_ms} ms"
    inner="exec \"\$0\" -n $n --transport tcp --timeout $time_limit"
    inner+=" --rank-prefix \"ip netns exec \${MMPI_LINKEMU_PREFIX}{rank}\""
    inner+=" --rank-address \"\${MMPI_LINKEMU_SUBNET}.{rank+1}\" -- \"\$@\""
    emulator_for "$profile" "$n"
    out=$("${emulator[@]}" sh -c "$inner" "$bin/mmpirun" "$bin/mmpi-game" --bots --ticks "$ticks" \
        --tick-ms "$tick_ms" --hash-every 0 2>"$errors") || status=$?
    if ! printf '%s\n' "$out" | python3 -c '
import json, re, sys
name, ranks, tick_ms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
seen = {}
for line in sys.stdin:
    m = re.match(r"^\[(\d+)\] event=timing ticks=(\d+) first_us=(\d+) last_us=(\d+)", line)
    if m:
        seen[int(m[1])] = tuple(int(v) for v in m.groups()[1:])
if len(seen) != ranks or 0 not in seen:
    print(json.dumps({"name": name, "op": "game", "ranks": ranks,
                      "results": [{"tick_ms": tick_ms, "finished": len(seen), "nominal_hz": 1000 / tick_ms}]}))
    sys.exit(1)
start, slowest = seen[0][1], max(v[2] for v in seen.values())
ticks = min(v[0] for v in seen.values())
result = {"tick_ms": tick_ms, "ticks": ticks, "nominal_hz": 1000 / tick_ms,
          "achieved_hz": (ticks - 1) * 1e6 / max(1, slowest - start), "lag_ms": (slowest - seen[0][2]) / 1000}
print(json.dumps({"name": name, "op": "game", "ranks": ranks, "results": [result]}))
' "mmpi game $profile $n" "$n" "$tick_ms" >>"$results"; then
        echo "   the game failed (exit $status) or not every rank reported its ticks; its stderr begins:"
        grep -v -e '^-*$' -e '^ *$' "$errors" | head -n 6 | sed 's/^/   | /'
    fi
}

run_canvas() {
    local profile=$1 n=$2
    run_mmpi "mmpi canvas $profile $n" "$profile" "$n" canvas --frames 20 --primitives 50
}

report() {
    python3 - "$results" <<'PYTHON'
import json
import sys

runs = [json.loads(line) for line in open(sys.argv[1])]
topologies = ["auto", "serial", "pipe", "binary", "binomial", "fibonacci"]
# Measured before broadcasts forwarded one child at a time (bluetooth, 8 ranks):
# best forced topology, auto, Open MPI 4.1's MPI_Bcast; medians of 5.
before = {16: (40e3, 67e3, 96e3), 1024: (106e3, 118e3, 112e3), 4096: (317e3, 365e3, 306e3),
          65536: (3.5e6, 5.4e6, 5.4e6)}


def human(size):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def ms(us):
    return "-" if us is None else (f"{us / 1000:.0f}" if us >= 10e3 else f"{us / 1000:.1f}")


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "-"


def profile_of(run):
    return run["name"].split()[2]


def by_key(impl, op):
    """(profile, ranks) -> {(size, topology): result} for one implementation and op."""
    table = {}
    for run in runs:
        words = run["name"].split()
        if words[0] != impl or words[1] != op or "results" not in run or run["op"] in ("game", "canvas", "links"):
            continue
        cell = table.setdefault((words[2], run["ranks"]), {})
        for r in run["results"]:
            cell[(r["size"], r.get("topology", ""))] = r
    return table


verdicts = []
# What a profile's wire carries of a tcp payload: 1448 of every 1500 bytes.
payload_rate = {"bluetooth": 90000 * 1448 / 1500, "bluetooth-edr": 270000 * 1448 / 1500, "wifi": 5e6 * 1448 / 1500}
for run in runs:
    if run["op"] == "bcast" and run["ranks"] == 2:
        profile = profile_of(run)
        for r in run["results"]:
            rate = r["size"] / (r["median_us"] / 1e6)
            share = rate / payload_rate[profile]
            print(f"\n2 ranks on {profile}: {human(r['size'])} in {ms(r['median_us'])} ms, {rate / 1000:.1f} kB/s, "
                  f"{share:.2f}x the profile's payload rate ({payload_rate[profile] / 1000:.1f} kB/s)")
            verdicts.append((share >= 0.95, f"{profile} 2 ranks {human(r['size'])}: {share:.2f}x the profile's payload "
                                            "rate (at least 0.95)"))
bcasts, ompi = by_key("mmpi", "bcast"), by_key("openmpi", "bcast")
bcasts = {k: v for k, v in bcasts.items() if k[1] > 2}
models = {(profile_of(r), r["ranks"]): {m["size"]: m for m in r["results"]} for r in runs if r["op"] == "bcast-model"}
for (profile, ranks), cells in sorted(bcasts.items(), key=lambda kv: (kv[0][0], kv[0][1])):
    model = models.get((profile, ranks), {})
    print(f"\nbcast, tcp on emulated {profile}, {ranks} ranks: median milliseconds (rank 0's start to the last rank's end)")
    head = f"  {'size':>7}" + "".join(f"{t:>10}" for t in topologies) + f"{'chosen':>10}{'best':>11}"
    head += f"{'model':>13}{'best/model':>11}{'auto/best':>10}{'OMPI':>8}{'OMPI/auto':>10}"
    with_before = profile == "bluetooth" and ranks == 8
    if with_before:
        head += f"{'| before: best':>15}{'auto':>6}{'OMPI':>6}"
    print(head)
    for size in sorted({s for s, _ in cells}):
        row = {t: cells[(size, t)] for t in topologies if (size, t) in cells}
        forced = {t: row[t]["median_us"] for t in topologies[1:] if t in row}
        best = min(forced, key=forced.get) if forced else None
        auto = row.get("auto", {}).get("median_us")
        m = model.get(size)
        optimum = m["best_us"] if m else None
        mpi = ompi.get((profile, ranks), {}).get((size, "openmpi"), {}).get("median_us")
        line = f"  {human(size):>7}" + "".join(f"{ms(row[t]['median_us']) if t in row else '-':>10}" for t in topologies)
        line += f"{row.get('auto', {}).get('chosen', '-'):>10}"
        line += f"{(ms(forced[best]) + ' ' + best[:3]) if best else '-':>11}"
        line += f"{(ms(optimum) + ' ' + m['best'][:3]) if m else '-':>13}"
        line += f"{ratio(forced[best] if best else None, optimum):>11}{ratio(auto, forced[best] if best else None):>10}"
        line += f"{ms(mpi):>8}{ratio(mpi, auto):>10}"
        if with_before and size in before:
            line += "".join(f"{ms(v):>{w}}" for v, w in zip(before[size], (15, 6, 6)))
        print(line)
        where = f"{profile} {ranks} ranks {human(size)}"
        # The model's targets are set for bluetooth; on wifi a frame's CPU
        # cost, which the model leaves out, is most of a small broadcast.
        if best and optimum and profile == "bluetooth":
            verdicts.append((forced[best] <= 1.15 * optimum,
                             f"{where}: best forced ({best}) {forced[best] / optimum:.2f}x the model (at most 1.15)"))
        if auto and best:
            verdicts.append((auto <= 1.10 * forced[best],
                             f"{where}: auto {auto / forced[best]:.2f}x the best forced topology (at most 1.10)"))
        if auto and mpi:
            verdicts.append((auto < mpi, f"{where}: Open MPI {mpi / auto:.2f}x auto's time (auto ahead: above 1)"))

others = sorted({run["op"] for run in runs if run["op"] not in ("bcast", "bcast-model", "canvas", "game", "links")})
for profile in sorted({profile_of(r) for r in runs}):
    for op in others:
        mine, theirs = by_key("mmpi", op), by_key("openmpi", op)
        keys = sorted(k for k in mine if k[0] == profile)
        if not keys:
            continue
        print(f"\n{op}, tcp on emulated {profile}: median milliseconds, MMPI (Open MPI, its time / MMPI's)")
        sizes = sorted({s for k in keys for s, _ in mine[k]})
        print(f"  {'ranks':>5}" + "".join(f"{human(s):>22}" for s in sizes))
        for key in keys:
            line = f"  {key[1]:>5}"
            for s in sizes:
                a = next((r["median_us"] for (size, _), r in mine[key].items() if size == s), None)
                b = next((r["median_us"] for (size, _), r in theirs.get(key, {}).items() if size == s), None)
                line += f"{(ms(a) + ' (' + ms(b) + ', ' + ratio(b, a) + ')'):>22}"
            print(line)

links = [r for r in runs if r["op"] == "links"]
if links:
    print("\nlinks of a fresh world (mmpi-bench links, sending nothing): ms after formation until every rank")
    print("knew all its latencies and a rate (the slowest rank), and the medians over ranks of the two")
    for run in links:
        res = run["results"]
        known = lambda key: max(r[key] for r in res) if all(r[key] >= 0 for r in res) else None
        mid = lambda key: sorted(r[key] for r in res)[len(res) // 2]
        print(f"  {profile_of(run):>10} {run['ranks']:>3} ranks: latencies after {ms(known('latency_known_ms') and known('latency_known_ms') * 1000)} ms, "
              f"{mid('latency_us') / 1000:.1f} ms one way; a rate after {ms(known('rate_known_ms') and known('rate_known_ms') * 1000)} ms, "
              f"{mid('rate') / 1000:.1f} kB/s")

canvas = [r for r in runs if r["op"] == "canvas"]
if canvas:
    print("\ncanvas (mmpi-bench canvas): primitives per second until every rank has applied the last frame")
    for run in canvas:
        for r in run["results"]:
            print(f"  {profile_of(run):>10} {run['ranks']:>3} ranks: {r['primitives_per_s']:>8.0f} /s, "
                  f"{r['bytes_per_primitive']:.1f} B per primitive, {r['frames']} frames of "
                  f"{r['primitives_per_frame']} in {r['seconds']:.2f} s")

games = [r for r in runs if r["op"] == "game"]
if games:
    print("\ngame (mmpi-game --bots, 200 ticks): ticks per second reaching the slowest device, and how far")
    print("behind the root it ended")
    for run in games:
        for r in run["results"]:
            where = f"  {profile_of(run):>10} {run['ranks']:>3} ranks, {r['tick_ms']:>3} ms a tick ({r['nominal_hz']:.0f}/s): "
            if "achieved_hz" in r:
                print(where + f"{r['achieved_hz']:6.1f} /s, {r['lag_ms']:7.1f} ms behind")
            else:
                print(where + f"did not finish within 2 minutes ({r['finished']} of {run['ranks']} devices did)")

print("\nTargets (bluetooth: best forced within 1.15x the model; auto within 10 % of the best; auto ahead of Open MPI)")
if not verdicts:
    print("  nothing to judge (no broadcast results)")
for ok, text in verdicts:
    print(f"  {'met' if ok else 'not met':<8} {text}")
PYTHON
}

main() {
    bench_start "$0" "$@"
    parse_arguments "$@"
    bin=$build/bin
    results=$build/emulated.jsonl
    local program profile n why status=0
    for program in mmpi-linkemu mmpirun mmpi-bench mmpi-game; do
        if [ ! -x "$bin/$program" ]; then
            echo "bench/emulated.sh: $bin/$program does not exist yet (build the targets mmpi-linkemu mmpirun mmpi-bench mmpi-game)" >&2
            exit 1
        fi
    done
    why=$("$bin/mmpi-linkemu" --nodes 1 -- true 2>&1) || status=$?
    if [ "$status" -ne 0 ]; then
        echo "bench/emulated.sh: cannot emulate links here: ${why:-mmpi-linkemu exited with $status}" >&2
        exit 1
    fi
    for profile in ${profiles//,/ }; do
        profile_link "$profile" >/dev/null || { echo "bench/emulated.sh: unknown profile '$profile'" >&2; exit 2; }
    done
    if [ "$openmpi" = 1 ] && [[ $ops == *bcast* || $ops == *collectives* ]]; then
        if ! bench_ensure_openmpi || ! bench_build_mpi_collectives; then
            bench_skip "openmpi" "$why"
            openmpi=0
        fi
    fi
    : >"$results"
    echo "collectives on emulated links, $(hostname), $(nproc) cores; build $build"
    for profile in ${profiles//,/ }; do
        [[ $ops == *bcast* ]] && [ -z "${quick:-}" ] && run_pair "$profile"
        for n in ${rank_list//,/ }; do
            [[ $ops == *bcast* ]] && run_bcast "$profile" "$n"
            [[ $ops == *collectives* ]] && run_collectives "$profile" "$n"
            [[ $ops == *canvas* ]] && run_canvas "$profile" "$n"
            if [[ $ops == *game* ]]; then
                run_game "$profile" "$n" 50
                run_game "$profile" "$n" 20
            fi
        done
    done
    if [ ! -s "$results" ]; then
        echo "no benchmark produced results" >&2
        exit 1
    fi
    # A run narrowed by options goes beside the whole one, not over it.
    if [ "$profiles,$rank_list,$ops,$iterations,$openmpi" = "bluetooth,wifi,4,8,16,bcast,collectives,canvas,game,5,1" ] \
        && [ -z "${quick:-}${bcast_size_list:-}" ]; then
        bench_report emulated "Collectives over tcp on emulated radio links (bench/emulated.sh)" report
    else
        bench_report emulated-partial "Collectives over tcp on emulated radio links, part of them (bench/emulated.sh)" report
    fi
    echo "JSON lines: $results"
}

main "$@"
