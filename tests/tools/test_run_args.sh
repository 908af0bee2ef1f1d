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
#   launcher --launcher takes srun or mpirun only; srun outside a Slurm
#            allocation is refused (status 2, saying why)
#   srun     inside an allocation (SLURM_JOB_ID set) the ranks are started
#            by srun (FAILSTOP_SRUN: a stand-in recording what it got):
#            --no-kill --kill-on-bad-exit=0 --mpi=pmix, mpirun's -np,
#            --oversubscribe and --bind-to none as srun's -n, --overcommit
#            and --cpu-bind=none, srun's own options passed through, each
#            task failstop-rank PROGRAM; --mca K V and -x N=V in the
#            environment with failstop's settings and the PMIx hold; its
#            exit status 0 is failstop-run's (rank records: none, status 1
#            by the rules, here the stand-in's 0 with no ranks: 1)
#   placement  mpirun's placement options under srun are refused (status
#            2, naming srun's)
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
for opt in --kill --strict --fence-stopped --status-dir --verbose --launcher --help; do
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
timeout 10 "$RUN" --launcher bogus -np 1 true > "$WORK/l.out" 2>&1; rc=$?
[ "$rc" -eq 2 ] && grep -q "bad launcher 'bogus'" "$WORK/l.out"
check launcher-bad $? "status $rc: $(head -c 200 "$WORK/l.out")"
env -u SLURM_JOB_ID timeout 10 "$RUN" --launcher srun -np 1 true > "$WORK/l.out" 2>&1; rc=$?
[ "$rc" -eq 2 ] && grep -q "outside a Slurm allocation" "$WORK/l.out"
check launcher-srun-outside $? "status $rc: $(head -c 200 "$WORK/l.out")"

# a stand-in srun: its arguments, one a line, and the environment it got
cat > "$WORK/srun" <<'FAKE'
#!/usr/bin/env bash
printf '%s\n' "$@" > "$FAKE_OUT.args"
env > "$FAKE_OUT.env"
exit 0
FAKE
chmod +x "$WORK/srun"
SLURM_JOB_ID=7 FAILSTOP_SRUN="$WORK/srun" FAKE_OUT="$WORK/fake" timeout 10 "$RUN" \
    --oversubscribe --bind-to none --mca pml_failstop_hb_period_ms 50 -x FS_ARGS_X=bar \
    --ntasks-per-node 2 -m cyclic --label -np 3 prog a1 > "$WORK/s.out" 2>&1
rc=$?
want="--no-kill --kill-on-bad-exit=0 --mpi=pmix --overcommit --cpu-bind=none --ntasks-per-node 2 -m cyclic --label -n 3 $(dirname "$RUN")/../libexec/failstop/failstop-rank prog a1"
got=$(tr '\n' ' ' < "$WORK/fake.args" 2>/dev/null)
why=""
[ "${got% }" = "$(echo "$want" | sed "s|$(dirname "$RUN")/../|$(cd "$(dirname "$RUN")/.." && pwd)/|")" ] ||
    why="; srun got '$got'"
for kv in OMPI_MCA_pml_failstop_hb_period_ms=50 FS_ARGS_X=bar OMPI_MCA_pml=failstop \
          OMPI_MCA_async_mpi_finalize=1 FAILSTOP_PMIX_HOLD=1; do
    grep -qx "$kv" "$WORK/fake.env" 2>/dev/null || why="$why; $kv not in its environment"
done
grep -q "^FAILSTOP_STATUS_DIR=" "$WORK/fake.env" 2>/dev/null || why="$why; no FAILSTOP_STATUS_DIR"
[ "$rc" -eq 1 ] || why="$why; status $rc (no rank left a record: 1)"
[ -z "$why" ]
check srun $? "${why#; }"
SLURM_JOB_ID=7 FAILSTOP_SRUN="$WORK/srun" FAKE_OUT="$WORK/fake2" timeout 10 "$RUN" \
    --map-by node -np 3 prog > "$WORK/p.out" 2>&1
rc=$?
[ "$rc" -eq 2 ] && [ ! -e "$WORK/fake2.args" ] && grep -q "\-\-map-by is mpirun's" "$WORK/p.out"
check placement $? "status $rc: $(head -c 200 "$WORK/p.out")"
exit $fail
