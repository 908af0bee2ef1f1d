#!/usr/bin/env bash
# Failure-free comparison of pml failstop against Open MPI's pml ucx and ob1.
#
#   bash bench/run.sh BUILD_DIR
#
# Runs bench/fs_bench for every (round, test, config), configs interleaved
# round-robin so machine drift hits all of them alike, then hands the raw
# numbers to bench/report.sh, which writes docs/PERFORMANCE.md and docs/perf/.
#
# Environment:
#   FS_BENCH_ROUNDS   rounds (default 5; 1 with FS_BENCH_QUICK=1)
#   FS_BENCH_QUICK    1 = smoke run: few sizes, 1 round
#   FS_BENCH_TCP      1 = also latency/bw over TCP (default 1)
#   FS_BENCH_TIMEOUT  seconds per mpirun before it is killed (default 120)
#   FS_BENCH_CONFIGS  subset/order of "failstop ucx ob1" (default all three)
#   FS_BENCH_OUT      output directory (default <repo>/docs)
#   MPICC             compiler used if fs_bench must be (re)built (mpicc)
set -euo pipefail

die() { echo "bench: $*" >&2; exit 1; }
warn() { echo "bench: warning: $*" >&2; }

[ $# -eq 1 ] || die "usage: bash bench/run.sh BUILD_DIR"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$1/bench"
BUILD=$(cd "$1" && pwd)
BIN=$BUILD/bench/fs_bench
RUNNER=$BUILD/bin/failstop-run
QUICK=${FS_BENCH_QUICK:-0}
[ "$QUICK" = 1 ] && ROUNDS=${FS_BENCH_ROUNDS:-1} || ROUNDS=${FS_BENCH_ROUNDS:-5}
TCP=${FS_BENCH_TCP:-1}
TMO=${FS_BENCH_TIMEOUT:-120}
read -ra CONFIGS <<<"${FS_BENCH_CONFIGS:-failstop ucx ob1}"
OUT=${FS_BENCH_OUT:-$ROOT/docs}
PERF=$OUT/perf
LOGS=$BUILD/bench/logs
CUR=""  # session id of the running job, for the signal trap

[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "FS_BENCH_ROUNDS must be a positive integer"
[[ "$TMO" =~ ^[1-9][0-9]*$ ]] || die "FS_BENCH_TIMEOUT must be a positive integer"
for c in "${CONFIGS[@]}"; do
    [[ "$c" =~ ^(failstop|ucx|ob1)$ ]] || die "unknown config '$c' in FS_BENCH_CONFIGS"
done

# Builds fs_bench with the project's flags when missing or stale, so the
# harness also works on a bare build directory (make bench builds it anyway).
build_bench() {
    local src=$ROOT/bench/fs_bench.c
    [ -x "$BIN" ] && [ "$BIN" -nt "$src" ] && return 0
    echo "bench: building $BIN" >&2
    "${MPICC:-mpicc}" -O2 -g -std=gnu11 -fPIC -fvisibility=hidden -mcx16 \
        -fno-strict-aliasing -Wall -Wextra -Werror -Wshadow \
        -Wno-missing-field-initializers -o "$BIN" "$src"
}

# Test table: key, ranks, transport, fs_bench arguments. TCP gets fewer
# sizes and iterations: one round trip costs ~10 us instead of ~0.2 us.
define_tests() {
    if [ "$QUICK" = 1 ]; then
        TESTS=("latency 2 shm latency -s 0,8,1K,64K,1M,4M"
               "bw 2 shm bw -s 8,64K,1M,4M"
               "bibw 2 shm bibw -s 8,64K,1M"
               "mr 4 shm mr -s 8")
        TCP_TESTS=("latency_tcp 2 tcp latency -i 1000 -w 100 -s 8,64K"
                   "bw_tcp 2 tcp bw -i 100 -w 10 -I 10 -W 2 -s 64K,1M")
    else
        TESTS=("latency 2 shm latency" "bw 2 shm bw" "bibw 2 shm bibw" "mr 4 shm mr -s 8")
        TCP_TESTS=("latency_tcp 2 tcp latency -i 2000 -w 200 -s 0,8,64,512,4K,32K,256K,1M,4M"
                   "bw_tcp 2 tcp bw -i 200 -w 20 -I 10 -W 2 -s 1K,8K,64K,256K,1M,4M")
    fi
    [ "$TCP" = 1 ] && TESTS+=("${TCP_TESTS[@]}")
    return 0
}

# Sets CMD for one run. 2 ranks get a core each; the 4-rank message-rate test
# oversubscribes the 2 cores, where pinning would stack ranks on one core.
make_cmd() {
    local cfg=$1 np=$2 tr=$3 place
    shift 3
    [ "$np" -le 2 ] && place=(--bind-to core) || place=(--oversubscribe --bind-to none)
    case $cfg in
    failstop)
        [ "$np" -le 2 ] && place=(--bind-to core) || place=(--bind-to none)
        CMD=("$RUNNER" --oversubscribe "${place[@]}")
        [ "$tr" = tcp ] && CMD+=(-x UCX_TLS=tcp) ;;
    ucx)
        CMD=(mpirun --allow-run-as-root --mca pml ucx --mca pml_ucx_tls any
             --mca pml_ucx_devices any "${place[@]}")
        [ "$tr" = tcp ] && CMD+=(-x "UCX_TLS=tcp,self") ;;
    ob1)
        CMD=(mpirun --allow-run-as-root --mca pml ob1 "${place[@]}")
        [ "$tr" = tcp ] && CMD+=(--mca btl "tcp,self") || CMD+=(--mca btl "vader,self") ;;
    esac
    CMD=(timeout -k 5 "$TMO" "${CMD[@]}" -np "$np" "$BIN" "$@")
}

# Kills whatever is left in a run's session: mpirun puts ranks in their own
# process groups, so a rank orphaned by a killed mpirun escapes timeout.
sweep() {
    local sid=$1 pids
    # zombies are already dead and only wait for their reaper
    mapfile -t pids < <(ps -eo pid=,sid=,stat= | awk -v s="$sid" '$2 == s && $3 !~ /^Z/ { print $1 }')
    [ ${#pids[@]} -eq 0 ] && return 0
    warn "killing leftover processes of session $sid: ${pids[*]}"
    kill -KILL "${pids[@]}" 2>/dev/null || true
}

on_signal() {
    [ -n "$CUR" ] && { kill -TERM -- "-$CUR" 2>/dev/null || true; sleep 1; sweep "$CUR"; }
    die "interrupted"
}

# Runs one (round, test, config); records RESULT lines and the run's status.
run_one() {
    local round=$1 key=$2 cfg=$3 log rc=0 t0 secs status load
    log=$LOGS/r${round}_${key}_${cfg}
    printf '%s\n' "${CMD[*]}" >"$log.cmd"
    # other work on the machine shows up here before it shows in the numbers
    load=$(cut -d' ' -f1 /proc/loadavg)
    t0=$(date +%s.%N)
    # own session (setsid does not fork here: we are no group leader), so
    # the trap and sweep can find every process of this run by its id
    setsid --wait "${CMD[@]}" </dev/null >"$log.out" 2>"$log.err" &
    CUR=$!
    wait "$CUR" || rc=$?
    sweep "$CUR"
    CUR=""
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    case $rc in
    0) status=ok ;;
    124 | 137) status=timeout ;;
    *) status="exit-$rc" ;;
    esac
    [ "$rc" = 0 ] && ! grep -q '^RESULT ' "$log.out" && status=no-output
    awk -v r="$round" -v c="$cfg" '$1 == "RESULT" && NF == 4 {
        printf "%s\t%s\t%s\t%s\n", r, c, $3, $4 }' "$log.out" >>"$PERF/$key.tsv"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$key" "$cfg" "$status" "$secs" \
        "$log" "$load" >>"$PERF/runs.tsv"
    [ "$status" = ok ] || warn "round $round $key $cfg: $status (see $log.err)"
    echo "bench: round $round/$ROUNDS $key $cfg: $status ${secs}s" >&2
}

# Drops configs that cannot run; failstop may not be built yet.
active_configs() {
    ACTIVE=()
    SKIPPED=()
    for c in "${CONFIGS[@]}"; do
        if [ "$c" = failstop ] && [ ! -x "$RUNNER" ]; then
            warn "skipping failstop: $RUNNER not found"
            SKIPPED+=("failstop: $RUNNER not found")
            continue
        fi
        ACTIVE+=("$c")
    done
    [ ${#ACTIVE[@]} -gt 0 ] || die "no configuration can run"
}

tool_version() { "$@" 2>/dev/null | head -1 | sed 's/^# *//' || true; }

write_meta() {
    local m=$PERF/meta.tsv envs
    envs=$(env | grep -E '^(UCX_|OMPI_MCA_)' | sort | tr '\n' ' ' || true)
    {
        printf 'date\t%s\n' "$START_DATE"
        printf 'nproc\t%s\n' "$(nproc)"
        printf 'cpu\t%s\n' "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
        printf 'kernel\t%s\n' "$(uname -sr)"
        printf 'openmpi\t%s\n' "$(tool_version ompi_info --version)"
        printf 'ucx\t%s\n' "$(tool_version ucx_info -v)"
        printf 'rounds\t%s\n' "$ROUNDS"
        printf 'quick\t%s\n' "$QUICK"
        printf 'configs\t%s\n' "${CONFIGS[*]}"
        printf 'active\t%s\n' "${ACTIVE[*]}"
        for s in "${SKIPPED[@]}"; do printf 'skipped\t%s\n' "$s"; done
        printf 'load_start\t%s\n' "$LOAD_START"
        printf 'load_end\t%s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
        printf 'wall\t%s\n' "$(($(date +%s) - START))"
        printf 'env\t%s\n' "${envs:-none}"
    } >"$m"
}

main() {
    trap on_signal INT TERM
    command -v mpirun >/dev/null || die "mpirun not found"
    build_bench
    define_tests
    active_configs
    START=$(date +%s)
    START_DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
    LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
    rm -rf "$LOGS"
    mkdir -p "$LOGS" "$PERF"
    local t key np tr args argv
    for t in "${TESTS[@]}"; do
        read -r key _ <<<"$t"
        printf '# round\tconfig\tsize\tvalue\n' >"$PERF/$key.tsv"
    done
    printf '# round\ttest\tconfig\tstatus\tseconds\tlog\tload1\n' >"$PERF/runs.tsv"
    for ((r = 1; r <= ROUNDS; r++)); do
        for t in "${TESTS[@]}"; do
            read -r key np tr args <<<"$t"
            read -ra argv <<<"$args"
            for c in "${ACTIVE[@]}"; do
                make_cmd "$c" "$np" "$tr" "${argv[@]}"
                run_one "$r" "$key" "$c"
            done
        done
    done
    write_meta
    printf '%s\n' "${TESTS[@]}" | awk '{ print $1 }' >"$PERF/tests.txt"
    bash "$ROOT/bench/report.sh" "$OUT"
    echo "bench: done in $(($(date +%s) - START)) s; report in $OUT/PERFORMANCE.md" >&2
}

main
