#!/usr/bin/env bash
# tests/tools/test_fence.sh BUILD_DIR: checks that failstop-rank fences a
# rank that stays stopped, so that the job ends (mpirun 4.1 with
# --enable-recovery waits for every process), and only such a rank.
#
# Runs a trivial non-MPI program under BUILD_DIR/bin/failstop-run: rank 1
# sleeps, the other ranks exit at once.  Cases:
#   fence     --kill 1@0.5:STOP --fence-stopped 1000: rank 1 is fenced
#             (signal 9, "fenced after stopped N ms", N >= 1000), the others
#             exit 0, failstop-run --strict exits 0, well within 30 s
#   cont      --kill 1@0.5:SIGSTOP --kill 1@0.8:CONT --fence-stopped 2000:
#             rank 1 is stopped for 0.3 s only and exits 0, not fenced
#   env       FAILSTOP_FENCE_STOPPED_MS=800 and --kill 1@0.3:19: fenced
#   bad       --fence-stopped x: failstop-run refuses it (status 2)
# Each run is under `setsid timeout 30` (FS_TEST_TIMEOUT); about 7 s in all.
# Exit status: 0 all passed, 1 something failed, 2 usage/setup error.
set -u -o pipefail

die() { echo "test_fence.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
RUN="$1/bin/failstop-run"
[ -x "$RUN" ] || die "launcher $RUN not found (build first)"
command -v timeout >/dev/null || die "timeout(1) is required"
command -v setsid >/dev/null || die "setsid(1) is required"
TMO=${FS_TEST_TIMEOUT:-30}   # hard limit per run, seconds

# rank 1 runs `sleep $1` (exec: the stopped process is the rank itself),
# every other rank exits 0
PROG=(bash -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exec sleep "$1"; fi; exit 0' fence-prog)

sid=""
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fs-fencetest.XXXXXX") || die "mktemp"
reap_session() {
    local pid
    [ -n "$1" ] || return 0
    for pid in $(ps -o pid= -s "$1" 2>/dev/null); do
        kill -KILL "$pid" 2>/dev/null
    done
}
trap 'reap_session "$sid"; rm -rf "$WORK"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

now_ms() { echo $(( ${EPOCHREALTIME//[!0-9]/} / 1000 )); }   # bash >= 5

# run NAME [failstop-run options...] -- SLEEP: runs the job; sets rc, secs.
run() {
    local name=$1 t0; shift
    local opts=() sleep_s
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    sleep_s=$2
    ST="$WORK/$name"; OUT="$WORK/$name.out"
    rm -rf "$ST"
    t0=$(now_ms)
    setsid -w timeout -k 5 "$TMO" "$RUN" --strict --status-dir "$ST" "${opts[@]}" \
        --oversubscribe --bind-to none -np 3 "${PROG[@]}" "$sleep_s" >"$OUT" 2>&1 &
    sid=$!
    wait "$sid"
    rc=$?
    reap_session "$sid"
    sid=""
    ms=$(( $(now_ms) - t0 ))
}

# line N of rank R's record
rec() { sed -n "${2}p" "$ST/rank.$1" 2>/dev/null; }

FAILED=0
check() {   # check NAME WHY-IF-FAILED CONDITION...
    local name=$1 why=$2; shift 2
    if ! "$@"; then
        echo "FAIL $name: $why"
        FAILED=$((FAILED + 1))
        return 1
    fi
}
report() {   # report NAME: prints PASS, or the job's output after failures
    if [ "$FAILED" -eq "$1" ]; then
        printf 'PASS %s %d.%ds\n' "$2" $((ms / 1000)) $((ms % 1000 / 100))
    else
        echo "    --- output ---"; sed 's/^/    /' "$OUT"
        for f in "$ST"/*; do [ -e "$f" ] && sed "s|^|    ${f##*/}: |" "$f"; done
    fi
}
fenced_ms() {   # fenced_ms R: N of "fenced after stopped N ms", or nothing
    rec "$1" 2 | sed -n 's/^fenced after stopped \([0-9]*\) ms.*/\1/p'
}
exited0() { [[ $(rec "$1" 1) =~ ^exit\ 0\  ]]; }

# ---- fence: stopped for good -> SIGKILL after the limit ---------------------
f0=$FAILED
run fence --kill 1@0.5:STOP --fence-stopped 1000 -- 60
check fence "job did not end (status $rc after ${ms} ms)" [ "$rc" -ne 124 -a "$rc" -ne 137 ]
check fence "failstop-run --strict exited $rc" [ "$rc" -eq 0 ]
check fence "rank 1 record '$(rec 1 1)', want 'signal 9 ... injected'" \
    eval '[[ $(rec 1 1) =~ ^signal\ 9\ .*\ injected$ ]]'
n=$(fenced_ms 1)
check fence "rank 1 not recorded as fenced ('$(rec 1 2)')" [ -n "$n" ]
check fence "rank 1 fenced after ${n:-?} ms, limit 1000" [ "${n:-0}" -ge 1000 ]
check fence "no stopped.1 record" [ -s "$ST/stopped.1" ]
check fence "rank 0 did not exit 0: '$(rec 0 1)'" exited0 0
check fence "rank 2 did not exit 0: '$(rec 2 1)'" exited0 2
check fence "took ${ms} ms" [ "$ms" -lt 15000 ]
report "$f0" "fence (stop, SIGKILL after 1000 ms)"

# ---- cont: continued before the limit -> not fenced -------------------------
# rank 1 sleeps 3 s; a fence would come at 0.5 + 2 s, before that
f0=$FAILED
run cont --kill 1@0.5:SIGSTOP --kill 1@0.8:CONT --fence-stopped 2000 -- 3
check cont "failstop-run --strict exited $rc after ${ms} ms" [ "$rc" -eq 0 ]
check cont "rank 1 did not exit 0: '$(rec 1 1)'" exited0 1
check cont "rank 1 was fenced: '$(rec 1 2)'" [ -z "$(rec 1 2)" ]
check cont "rank 1 was never stopped (no stopped.1)" [ -s "$ST/stopped.1" ]
check cont "rank 0 did not exit 0: '$(rec 0 1)'" exited0 0
check cont "rank 2 did not exit 0: '$(rec 2 1)'" exited0 2
report "$f0" "cont (stop 0.3 s, limit 2000 ms: not fenced)"

# ---- env: the limit from FAILSTOP_FENCE_STOPPED_MS, signal by number --------
f0=$FAILED
FAILSTOP_FENCE_STOPPED_MS=800 run env --kill 1@0.3:19 -- 60
n=$(fenced_ms 1)
check env "job did not end or failed (status $rc after ${ms} ms)" [ "$rc" -eq 0 ]
check env "rank 1 fenced after '${n:-not fenced}' ms, want >= 800" [ "${n:-0}" -ge 800 ]
check env "rank 1 fenced after $n ms, want about 800" [ "${n:-0}" -lt 5000 ]
report "$f0" "env (FAILSTOP_FENCE_STOPPED_MS=800, --kill 1@0.3:19)"

# ---- bad: an invalid limit is refused ---------------------------------------
f0=$FAILED
ms=0
"$RUN" --fence-stopped x -np 1 true >"$WORK/bad.out" 2>&1
rc=$?
check bad "failstop-run --fence-stopped x exited $rc, want 2" [ "$rc" -eq 2 ]
[ "$FAILED" -eq "$f0" ] && echo "PASS bad (--fence-stopped x refused)"

[ "$FAILED" -eq 0 ] && { echo "test_fence.sh: all passed"; exit 0; }
echo "test_fence.sh: $FAILED check(s) failed"
exit 1
