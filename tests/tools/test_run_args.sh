#!/usr/bin/env bash
# tests/tools/test_run_args.sh BUILD_DIR: failstop-run's command line.
#   help     --help prints the usage (its header: every option named) and
#            exits 0; no program at all is a usage error (status 2)
#   mixed    failstop's own options after mpirun's (--oversubscribe --kill
#            1@0.3 --strict --status-dir D): taken by failstop-run, not
#            handed to mpirun (which refuses --kill): rank 1 is killed by
#            SIGKILL as asked, the others exit 0, --strict exits 0
#   clean    a rank's stdout and stderr come through as they are, nothing
#            added, under mawk and under gawk as awk (gawk once wrote two
#            warnings about failstop-run's awk options into every job)
# Each run under `setsid timeout 30`; a few seconds in all.
# Exit status: 0 all passed, 1 something failed, 2 usage/setup error.
set -u -o pipefail

die() { echo "test_run_args.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
RUN="$1/bin/failstop-run"
[ -x "$RUN" ] || die "launcher $RUN not found (build first)"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fs-runargs.XXXXXX") || die "mktemp"
sid=""
# whatever a run left in its session (its ranks, if the limit ended it)
reap() { [ -n "$sid" ] && pkill -KILL -s "$sid" 2>/dev/null; sid=""; }
trap 'reap; rm -rf "$WORK"' EXIT
fail=0
check() {   # check NAME CONDITION-STATUS WHY
    if [ "$2" -eq 0 ]; then echo "PASS run-args $1"; else echo "FAIL run-args $1: $3"; fail=1; fi
}

out=$(timeout 10 "$RUN" --help 2>&1); rc=$?
missing=""
for opt in --kill --strict --fence-stopped --status-dir --verbose --help; do
    [[ $out == *"$opt"* ]] || missing="$missing $opt"
done
[ "$rc" -eq 0 ] && [ -z "$missing" ]
check help $? "status $rc, options not in the usage:$missing"
timeout 10 "$RUN" > "$WORK/none.out" 2>&1; rc=$?
[ "$rc" -eq 2 ] && grep -q "no program given" "$WORK/none.out"
check no-program $? "status $rc: $(head -c 200 "$WORK/none.out")"

# rank 1 sleeps (until killed), every other rank exits 0
PROG=(bash -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exec sleep 20; fi; exit 0' args-prog)
setsid -w timeout -k 5 30 "$RUN" --oversubscribe --bind-to none --kill 1@0.3 --strict \
    --status-dir "$WORK/st" -np 3 "${PROG[@]}" > "$WORK/mixed.out" 2>&1 &
sid=$!
wait "$sid"
rc=$?
reap
rec=$(head -n 1 "$WORK/st/rank.1" 2>/dev/null)
[ "$rc" -eq 0 ] && [[ $rec == "signal 9"* ]]
check mixed $? "status $rc, rank 1 '$rec': $(head -c 300 "$WORK/mixed.out")"
for a in mawk gawk; do
    if ! command -v "$a" > /dev/null; then
        check "clean-$a" 1 "$a is not installed (make deps)"; continue
    fi
    mkdir -p "$WORK/awk-$a" && ln -sf "$(command -v "$a")" "$WORK/awk-$a/awk"
    PATH=$WORK/awk-$a:$PATH timeout -k 5 30 "$RUN" -np 1 \
        bash -c 'echo "No Errors"; echo "a note" >&2' > "$WORK/clean.out" 2> "$WORK/clean.err"
    rc=$?
    [ "$rc" -eq 0 ] && [ "$(cat "$WORK/clean.out")" = "No Errors" ] &&
        [ "$(cat "$WORK/clean.err")" = "a note" ]
    check "clean-$a" $? "status $rc, stdout '$(head -c 200 "$WORK/clean.out")', stderr '$(head -c 300 "$WORK/clean.err")'"
done
exit $fail
