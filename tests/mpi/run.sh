#!/usr/bin/env bash
# tests/mpi/run.sh BUILD_DIR: runs every MPI integration test program
# (tests/mpi/t_*.c, and tf_*.c under failstop; binaries in
# BUILD_DIR/tests/mpi/) at several rank counts and over two transport
# configurations; one line per run, then a summary.
# Exit status: 0 all passed, 1 something failed, 2 usage/setup error.
#
# Environment:
#   FS_TEST_LAUNCHER  launcher command line, split on whitespace
#                     (default: "BUILD_DIR/bin/failstop-run --strict"; it adds
#                     --mca pml failstop itself). "--oversubscribe" is always
#                     added. To validate against stock Open MPI, e.g.:
#                       "mpirun --allow-run-as-root --mca pml ob1"
#                       "mpirun --allow-run-as-root --mca pml ucx
#                        --mca pml_ucx_tls any --mca pml_ucx_devices any"
#   FS_TEST_SHM_OPTS  launcher options of the "shm" config
#                     (default: none; with pml ob1: --mca btl self,vader)
#   FS_TEST_TCP_OPTS  launcher options of the "tcp" config
#                     (default: -x UCX_TLS=tcp; with pml ob1:
#                     --mca btl tcp,self)
#   FS_TEST_EXTRA_OPTS  more launcher options for every run
#                     (default: --bind-to none)
#   FS_TEST_CONFIGS   configs to run (default: "shm tcp"): shm and tcp are
#                     UCX's (or ob1's, see above); ofi-net, ofi-shm,
#                     ofi-sockets, ofi-rxm (tcp;ofi_rxm) and ofi-rxd
#                     (udp;ofi_rxd) select failstop's OFI transport and
#                     that libfabric provider
#   FS_TEST_FILTER    extended regex; only matching test names run
#   FS_TEST_EXCLUDE   extended regex; matching test names do not run
#   FS_TEST_FAILSTOP_TESTS  1 to also run the failstop-specific tf_*.c
#                     programs (default: 1 with the failstop launcher, 0 when
#                     FS_TEST_LAUNCHER is set)
#   FS_TEST_NPS       rank counts (default: "2 3 4")
#   FS_TEST_TIMEOUT   hard limit per run in seconds (default: 60)
#   FS_TEST_PERTURB   glibc's M_PERTURB byte for the ranks (mpitest.h), 0 for none
#                     (default 90 under failstop, 0 with FS_TEST_LAUNCHER)
#   FS_ASAN=1         export ASAN_OPTIONS=detect_leaks=0 to the ranks
#   FS_TSAN=1         ranks built with -fsanitize=thread (make tsan): export
#                     TSAN_OPTIONS (first report ends the rank, exit 66;
#                     suppressions tests/tsan.supp) and turn UCX's memory
#                     hooks off (see the Makefile's tsan target); a run whose
#                     output holds a ThreadSanitizer report fails
#   FS_TEST_REPEAT    runs in a row of each fault test (FS_TEST_FAULT: 1) in
#                     each config, at the first of its rank counts; the other
#                     rank counts run once (default 1; `make test` uses 20)
#   FS_TEST_REPEAT_ALL_NPS  1: repeat at every rank count
#   FS_TEST_FAULT_NPS rank counts for fault tests (default: each test's own)
#   FS_TEST_LABEL     a word added to each PASS/FAIL line (e.g. slurm)
#   FS_TEST_FIRST_NP  1: every test at the first of its rank counts only
#   FS_TEST_FAULT_ONLY 1: only the fault tests (FS_TEST_FAULT: 1)
#
# A test's leading comment may hold lines " * FS_TEST_<KEY>: value":
#   NPS             rank counts for this test (instead of FS_TEST_NPS)
#   OPTS            extra mpirun options (e.g. --mca pml_failstop_inject ...)
#   RUN_OPTS        failstop-run options (e.g. --kill 2@1.5), before the rest
#   FAULT           1: a fault-injection test (repeated FS_TEST_REPEAT times):
#                   at least one rank must have died on purpose (ft_die(),
#                   --kill or pml_failstop_inject, as failstop-run records
#                   it), and every other rank must print its OK line
#   REPEAT_MAX      at most this many runs in a row (slow fault tests;
#                   FS_TEST_NO_REPEAT_MAX=1 ignores it)
#   EXPECT          "abort": the job must end with a non-zero status, promptly,
#                   and print EXPECT_OUTPUT (an extended regex) on stderr/stdout;
#                   "ok-or-abort": that, or (no EXPECT_OUTPUT) the FAULT verdict
#   EXPECT_OUTPUT   see EXPECT
set -u -o pipefail

die() { echo "run.sh: $*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
BUILD=$1
[ -d "$BUILD" ] || die "no such build directory: $BUILD"
SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TMO=${FS_TEST_TIMEOUT:-60}
NPS=${FS_TEST_NPS:-2 3 4}
CONFIGS=${FS_TEST_CONFIGS:-shm tcp}
FILTER=${FS_TEST_FILTER:-}

if [ -n "${FS_TEST_LAUNCHER:-}" ]; then
    read -r -a LAUNCHER <<< "$FS_TEST_LAUNCHER"
else
    # --strict: fail unless every rank exited 0 (the default would report
    # only rank 0's status)
    LAUNCHER=("$BUILD/bin/failstop-run" --strict)
    [ -x "${LAUNCHER[0]}" ] || die "launcher ${LAUNCHER[0]} not found" \
        "(build first, or set FS_TEST_LAUNCHER)"
fi
command -v timeout >/dev/null || die "timeout(1) is required"
command -v setsid >/dev/null || die "setsid(1) is required"

# Transport defaults depend on the PML the launcher selects.
if [[ " ${LAUNCHER[*]} " =~ [[:space:]]pml[[:space:]]+ob1[[:space:]] ]] ||
   [ "${OMPI_MCA_pml:-}" = ob1 ]; then
    DEF_SHM="--mca btl self,vader"
    DEF_TCP="--mca btl tcp,self"
else
    DEF_SHM=""
    DEF_TCP="-x UCX_TLS=tcp"
fi
read -r -a SHM_OPTS <<< "${FS_TEST_SHM_OPTS-$DEF_SHM}"
read -r -a TCP_OPTS <<< "${FS_TEST_TCP_OPTS-$DEF_TCP}"

# Ranks are oversubscribed on a shared machine: binding a 2-rank job to one
# core per rank starves multithreaded ranks, so do not bind by default.
read -r -a EXTRA <<< "--oversubscribe ${FS_TEST_EXTRA_OPTS---bind-to none}"
if [ "${FS_ASAN:-0}" = 1 ]; then
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    EXTRA+=(-x ASAN_OPTIONS)
fi
# glibc fills each new allocation with a non-zero byte (M_PERTURB): a field
# the PML never sets then reads as garbage in every run, not as zero in
# most (t_reqpool).  Only under failstop by default: ob1's Bsend_init
# restart bug (t_persistent) then shows as garbage data.
if [ -n "${FS_TEST_LAUNCHER:-}" ]; then DEF_PERTURB=0; else DEF_PERTURB=90; fi
# (mpitest.h mt_perturb: not MALLOC_PERTURB_, which would reach the launcher)
if [ "${FS_TEST_PERTURB:-$DEF_PERTURB}" != 0 ] && [ "${FS_ASAN:-0}" != 1 ]; then
    export MT_MALLOC_PERTURB=${FS_TEST_PERTURB:-$DEF_PERTURB}
    EXTRA+=(-x MT_MALLOC_PERTURB)
fi
SHOW_LINES=80
if [ "${FS_TSAN:-0}" = 1 ]; then
    # libucm's hooks (madvise, called by glibc while a thread exits, after
    # TSan has dropped its state) crash TSan: UCX runs without them
    export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1:history_size=7:suppressions=$SRCDIR/../tsan.supp${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
    export UCX_MEM_MMAP_HOOK_MODE=none UCX_MEM_MALLOC_HOOKS=no
    EXTRA+=(-x TSAN_OPTIONS -x UCX_MEM_MMAP_HOOK_MODE -x UCX_MEM_MALLOC_HOOKS)
    SHOW_LINES=200
fi

# t_*.c test standard MPI behaviour and run under any launcher; tf_*.c test
# failstop-specific features and by default only run under failstop.
if [ -n "${FS_TEST_LAUNCHER:-}" ]; then DEF_TF=0; else DEF_TF=1; fi
PATTERNS=("$SRCDIR"/t_*.c)
if [ "${FS_TEST_FAILSTOP_TESTS:-$DEF_TF}" = 1 ]; then
    PATTERNS+=("$SRCDIR"/tf_*.c)
fi
TESTS=()
for src in "${PATTERNS[@]}"; do
    [ -e "$src" ] || continue
    name=$(basename "$src" .c)
    if { [ -z "$FILTER" ] || [[ $name =~ $FILTER ]]; } &&
       { [ -z "${FS_TEST_EXCLUDE:-}" ] || ! [[ $name =~ $FS_TEST_EXCLUDE ]]; }; then
        TESTS+=("$name")
    fi
done
[ ${#TESTS[@]} -gt 0 ] || die "no test matches FS_TEST_FILTER='$FILTER'"

# Kills whatever is left in the session of one run (ranks run in their own
# process groups, so a killed launcher can orphan them; the session id
# still identifies exactly this run's processes).
reap_session() {
    local pid
    [ -n "$1" ] || return 0
    for pid in $(ps -o pid= -s "$1" 2>/dev/null); do
        kill -KILL "$pid" 2>/dev/null
    done
}

# Each run has its own session, so a ^C does not reach it: clean up here.
sid=""
LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/fs-mpitest.XXXXXX") || die "mktemp"
trap 'reap_session "$sid"; rm -rf "$LOGDIR"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Checks exit status and that each rank printed its one OK line; prints
# the reason for a failure (empty when the run passed).
verdict() {
    local name=$1 np=$2 rc=$3 out=$4 r n
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "timeout after ${TMO}s"; return
    fi
    [ "$rc" -eq 0 ] || { echo "exit status $rc"; return; }
    n=$(grep -c '^MPITEST OK ' "$out")
    [ "$n" -eq "$np" ] || { echo "$n OK lines, want $np"; return; }
    for ((r = 0; r < np; r++)); do
        n=$(grep -cx "MPITEST OK $name rank $r/$np" "$out")
        [ "$n" -eq 1 ] || { echo "rank $r printed $n OK lines"; return; }
    done
}

now_us() { echo "${EPOCHREALTIME//[!0-9]/}"; }   # bash >= 5
fmt_secs() { printf '%d.%d' $(($1 / 1000000)) $(($1 % 1000000 / 100000)); }

show_output() {
    local f
    for f in "$@"; do
        [ -s "$f" ] || continue
        echo "    --- ${f##*.} (last $SHOW_LINES lines) ---"
        tail -n "$SHOW_LINES" "$f" | sed 's/^/    /'
    done
}

# The value of " * FS_TEST_<key>: value" in a test's source, or nothing.
meta() {
    sed -n "s/^ \* FS_TEST_$2: *//p" "$SRCDIR/$1.c" | head -n 1
}

# A run without failures prints nothing from the transport or the runtime:
# a warning there (a UCX buffer still held at exit, a PMIx error) is a bug,
# and MPICH's test runner counts any stray output as a failure.
verdict_quiet() {
    local stray
    stray=$(cat "$1" "$2" | grep -E 'UCX +(WARN|ERROR)|PMIX ERROR|ORTE_ERROR_LOG|\[failstop:[0-9]+\] (WARN|ERROR)' | head -n 1)
    [ -z "$stray" ] || echo "stray output: $stray"
}

# Under FS_TSAN: a ThreadSanitizer report (or its own failure) anywhere in
# the run's output fails it, whatever the ranks' exit status.
verdict_tsan() {
    [ "${FS_TSAN:-0}" = 1 ] || return 0
    if grep -q 'ThreadSanitizer' "$1" "$2"; then
        echo "$(grep -m 1 -ho 'ThreadSanitizer: [a-z -]*' "$1" "$2" | head -n 1)"
    fi
}

# A test that must end the job (MPI_ERRORS_ARE_FATAL): non-zero status, not a
# hang, and the expected message.
verdict_abort() {
    local rc=$1 out=$2 err=$3 want=$4
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "timeout after ${TMO}s: the job did not abort"; return
    fi
    [ "$rc" -ne 0 ] || { echo "exit status 0, want an aborted job"; return; }
    cat "$out" "$err" | grep -Eq "$want" || echo "no output matching /$want/"
}

# A fault test: some rank died on purpose, every other one passed.
# A rank stopped by a planned signal (--kill R@T:STOP) that its waiter then
# fenced (SIGKILL after $FAILSTOP_FENCE_STOPPED_MS) died on purpose too: its
# record reads "signal 9 TIME injected" plus "fenced after stopped ..."; a
# rank fenced without a planned signal or marker did not.
verdict_fault() {
    local name=$1 np=$2 rc=$3 out=$4 st=$5 r n dead=0 kind rest line2
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "timeout after ${TMO}s"; return
    fi
    for ((r = 0; r < np; r++)); do
        n=$(grep -cx "MPITEST OK $name rank $r/$np" "$out")
        kind=""; rest=""; line2=""
        [ -f "$st/rank.$r" ] &&
            { read -r kind rest; IFS= read -r line2; } < "$st/rank.$r"
        [[ $line2 == fenced* ]] || line2=""
        if [ "$kind" = signal ] &&
           { [ -e "$st/injected.$r" ] || [[ $rest == *injected* ]]; }; then
            dead=$((dead + 1))
            [ "$n" -eq 0 ] || { echo "killed rank $r printed OK"; return; }
        elif [ "$n" -ne 1 ]; then
            echo "rank $r printed $n OK lines (ended: ${kind:-?} ${rest%% *}${line2:+, $line2})"
            return
        fi
    done
    [ "$dead" -gt 0 ] || { echo "no rank died: the fault was not injected"; return; }
    [ "$rc" -eq 0 ] || echo "exit status $rc"
}

# ofi-PROVIDER configs: failstop's OFI transport over one libfabric provider
ofi_provider() {
    case $1 in
    ofi-rxm) echo "tcp;ofi_rxm" ;;
    ofi-rxd) echo "udp;ofi_rxd" ;;
    *) echo "${1#ofi-}" ;;
    esac
}

PASSED=0
FAILED=()
T0=$(now_us)
for name in "${TESTS[@]}"; do
    bin="$BUILD/tests/mpi/$name"
    test_nps=$(meta "$name" NPS)
    test_opts=$(meta "$name" OPTS)
    run_opts=$(meta "$name" RUN_OPTS)
    expect=$(meta "$name" EXPECT)
    expect_out=$(meta "$name" EXPECT_OUTPUT)
    repeat=1
    repeat_fault=$(meta "$name" FAULT)
    [ "${FS_TEST_FAULT_ONLY:-0}" = 1 ] && [ "$repeat_fault" != 1 ] && continue
    if [ "$repeat_fault" = 1 ]; then
        repeat=${FS_TEST_REPEAT:-1}
        test_nps=${FS_TEST_FAULT_NPS:-$test_nps}
        rmax=$(meta "$name" REPEAT_MAX)
        if [ -n "$rmax" ] && [ "$repeat" -gt "$rmax" ] &&
           [ "${FS_TEST_NO_REPEAT_MAX:-0}" != 1 ]; then repeat=$rmax; fi
    fi
    read -r -a topts <<< "$test_opts"
    read -r -a ropts <<< "$run_opts"
    test_nps=${test_nps:-$NPS}
    [ "${FS_TEST_FIRST_NP:-0}" = 1 ] && test_nps=${test_nps%% *}
    first_np=1
    for np in $test_nps; do
        reps=$repeat
        [ "$first_np" = 1 ] || [ "${FS_TEST_REPEAT_ALL_NPS:-0}" = 1 ] || reps=1
        first_np=0
        for cfg in $CONFIGS; do
          for ((it = 1; it <= reps; it++)); do
            case $cfg in
            shm) opts=("${SHM_OPTS[@]}") ;;
            tcp) opts=("${TCP_OPTS[@]}") ;;
            ofi-*) opts=(--mca pml_failstop_transport ofi
                         --mca pml_failstop_ofi_provider "$(ofi_provider "$cfg")") ;;
            *) die "unknown config '$cfg' (shm, tcp, ofi-net, ofi-shm, ofi-sockets, ofi-rxm, ofi-rxd)" ;;
            esac
            tag="$name np=$np $cfg${FS_TEST_LABEL:+ $FS_TEST_LABEL}"
            [ "$reps" -gt 1 ] && tag="$tag #$it"
            out="$LOGDIR/run.stdout"
            err="$LOGDIR/run.stderr"
            t1=$(now_us)
            stdir="$LOGDIR/status"
            rm -rf "$stdir"
            sopts=()
            [ "$repeat_fault" = 1 ] && sopts=(--status-dir "$stdir")
            if [ -x "$bin" ]; then
                setsid -w timeout -k 5 "$TMO" "${LAUNCHER[@]}" "${sopts[@]}" "${ropts[@]}" \
                    "${EXTRA[@]}" "${opts[@]}" "${topts[@]}" -np "$np" "$bin" \
                    >"$out" 2>"$err" &
                sid=$!
                wait "$sid"
                rc=$?
                reap_session "$sid"
                sid=""
                if [ "$expect" = abort ] ||
                   { [ "$expect" = ok-or-abort ] && [ "$rc" -ne 0 ] &&
                     cat "$out" "$err" | grep -Eq "$expect_out"; }; then
                    why=$(verdict_abort "$rc" "$out" "$err" "$expect_out")
                elif [ "$repeat_fault" = 1 ]; then
                    why=$(verdict_fault "$name" "$np" "$rc" "$out" "$stdir")
                else
                    why=$(verdict "$name" "$np" "$rc" "$out")
                    [ -n "$why" ] || why=$(verdict_quiet "$out" "$err")
                fi
                tsan=$(verdict_tsan "$out" "$err")
                [ -z "$tsan" ] || why="$tsan${why:+; $why}"
            else
                : >"$out"; : >"$err"
                why="binary $bin missing"
            fi
            secs=$(fmt_secs $(($(now_us) - t1)))
            if [ -z "$why" ]; then
                printf 'PASS %s %ss\n' "$tag" "$secs"
                PASSED=$((PASSED + 1))
            else
                printf 'FAIL %s %ss (%s)\n' "$tag" "$secs" "$why"
                show_output "$out" "$err"
                FAILED+=("$tag")
            fi
          done
        done
    done
done
printf 'SUMMARY: %d passed, %d failed, %ss (launcher: %s)\n' \
    "$PASSED" "${#FAILED[@]}" "$(fmt_secs $(($(now_us) - T0)))" \
    "${LAUNCHER[*]}"
for f in "${FAILED[@]}"; do
    echo "  failed: $f"
done
[ ${#FAILED[@]} -eq 0 ]
