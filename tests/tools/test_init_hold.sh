#!/usr/bin/env bash
# tests/tools/test_init_hold.sh BUILD_DIR: checks that failstop-rank, whose
# rank ended inside MPI_Init after the address exchange, records the end at
# once but holds its own exit while another rank is still in MPI_Init (the
# runtime must see the dead process's PMIx connection drop before it
# deregisters it, or MPI_Init's closing fence waits for it for ever:
# failstop-rank.c), and only then.
#
# Runs BUILD_DIR/libexec/failstop/failstop-rank directly (no MPI) as rank 1
# of 3, in a status directory made here; its program writes up.1 (or not)
# and kills itself with SIGKILL.  Rank 2 has ended (rank.2), rank 0 has
# started (started.0).  Cases:
#   release   rank 0 leaves MPI_Init (ready.0) 1 s later: the waiter exits
#             after that, well before its 4 s bound; rank.1 was written at
#             once
#   bound     rank 0 never leaves: the waiter exits after its 4 s bound
#   early     no up.1 (died before the address exchange): no hold
#   after     ready.1 too (died after MPI_Init): no hold
# Each run under `timeout 30`; about 6 s in all.
# Exit status: 0 all passed, 1 something failed, 2 usage/setup error.
set -u -o pipefail

die() { echo "test_init_hold.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
WAITER="$1/libexec/failstop/failstop-rank"
[ -x "$WAITER" ] || die "$WAITER not found (build first)"
command -v timeout >/dev/null || die "timeout(1) is required"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/fs-inithold.XXXXXX") || die "mktemp"
trap 'rm -rf "$WORK"' EXIT

now_ms() { echo $(( ${EPOCHREALTIME//[!0-9]/} / 1000 )); }   # bash >= 5

# run NAME MARKS [READY_AFTER_S]: rank 1's program writes the records MARKS
# (e.g. "up") for itself and kills itself; ready.0 appears READY_AFTER_S
# seconds after the start if given.  Sets rc, ms (the waiter's run time) and
# rec_ms (when rank.1 appeared, -1 if it did not within the run).
run() {
    local name=$1 marks=$2 after=${3:-} t0 m
    ST="$WORK/$name"
    mkdir -p "$ST"
    echo "3 host" > "$ST/started.0"
    echo "3 host" > "$ST/started.2"
    echo "exit 0 0" > "$ST/rank.2"
    t0=$(now_ms)
    FAILSTOP_STATUS_DIR="$ST" OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=3 \
        timeout -k 5 30 "$WAITER" bash -c \
        'for m in '"$marks"'; do echo 0 > "$FAILSTOP_STATUS_DIR/$m.1"; done; kill -9 $$' \
        2>"$WORK/$name.err" &
    local pid=$!
    if [ -n "$after" ]; then
        (sleep "$after"; echo 0 > "$ST/ready.0") &
    fi
    rec_ms=-1
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$rec_ms" -lt 0 ] && [ -e "$ST/rank.1" ]; then rec_ms=$(( $(now_ms) - t0 )); fi
        sleep 0.05
    done
    wait "$pid"
    rc=$?
    ms=$(( $(now_ms) - t0 ))
    [ "$rec_ms" -ge 0 ] || { [ -e "$ST/rank.1" ] && rec_ms=$ms; }
    wait
}

FAILED=0
check() {   # check NAME WHY-IF-FAILED CONDITION...
    local name=$1 why=$2; shift 2
    if ! "$@"; then
        echo "FAIL $name: $why"
        FAILED=$((FAILED + 1))
    fi
}
report() {   # report F0 NAME
    if [ "$FAILED" -eq "$1" ]; then
        printf 'PASS %s %d.%ds\n' "$2" $((ms / 1000)) $((ms % 1000 / 100))
    else
        sed 's/^/    stderr: /' "$WORK/$3.err"
        for f in "$ST"/*; do sed "s|^|    ${f##*/}: |" "$f"; done
    fi
}
signal9() { [[ $(sed -n 1p "$ST/rank.1" 2>/dev/null) =~ ^signal\ 9\  ]]; }

f0=$FAILED
run release up 1
check release "waiter exited $rc, want 137 (the rank's SIGKILL)" [ "$rc" -eq 137 ]
check release "rank.1 record '$(sed -n 1p "$ST/rank.1" 2>/dev/null)', want 'signal 9 ...'" signal9
check release "rank.1 written after ${rec_ms} ms, want at once (< 700 ms)" \
    [ "$rec_ms" -ge 0 -a "$rec_ms" -lt 700 ]
check release "waiter exited after ${ms} ms, before rank 0 left MPI_Init (1000 ms)" [ "$ms" -ge 1000 ]
check release "waiter exited after ${ms} ms: not released by ready.0" [ "$ms" -lt 3500 ]
report "$f0" "release (held until the other rank left MPI_Init)" release

f0=$FAILED
run bound up
check bound "waiter exited $rc, want 137" [ "$rc" -eq 137 ]
check bound "waiter exited after ${ms} ms, want its 4000 ms bound" [ "$ms" -ge 4000 ]
check bound "waiter exited after ${ms} ms, want about 4000" [ "$ms" -lt 8000 ]
report "$f0" "bound (held 4 s at most)" bound

f0=$FAILED
run early ""
check early "waiter exited $rc, want 137" [ "$rc" -eq 137 ]
check early "waiter held ${ms} ms for a rank that died before the address exchange" [ "$ms" -lt 1000 ]
report "$f0" "early (no up record: no hold)" early

f0=$FAILED
run after "up ready"
check after "waiter exited $rc, want 137" [ "$rc" -eq 137 ]
check after "waiter held ${ms} ms for a rank that had left MPI_Init" [ "$ms" -lt 1000 ]
report "$f0" "after (ready record: no hold)" after

[ "$FAILED" -eq 0 ] && { echo "test_init_hold.sh: all passed"; exit 0; }
echo "test_init_hold.sh: $FAILED check(s) failed"
exit 1
