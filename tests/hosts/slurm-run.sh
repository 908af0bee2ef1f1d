#!/usr/bin/env bash
# tests/hosts/slurm-run.sh BUILD_DIR: failstop across simulated hosts under
# Slurm (issue 41).  A Slurm cluster of three hosts (tests/hosts/slurm.sh:
# slurmctld on h1, a slurmd per host, in the hosts' namespaces only); every
# job is failstop-run inside an allocation of its own (salloc -N3
# --ntasks-per-node=2 -m block -k), which starts the ranks with srun
# --mpi=pmix.  Runs, FS_HOSTS_REPEAT (3) times each:
#   - fault tests whose victims land on other hosts, through
#     tests/mpi/run.sh: a killed rank, a failure in point-to-point and in a
#     collective, two failures, a failure around MPI_Finalize, a SIGSTOPped
#     rank (fenced by its waiter) (FS_SLURM_FAULT_FILTER);
#   - tests/hosts/net.sh: a killed rank, node crash, partition;
#   - tests/hosts/flap.sh at 3 hosts: a 0.3 s flap, five in a row, one
#     during wire-up and one during MPI_Finalize, and an outage longer than
#     the tolerance (FS_SLURM_FLAP_SCENARIOS).
# and once each, the forms a user types:
#   place    salloc -N3 -n6 --ntasks-per-node=2 -m cyclic -k failstop-run
#            -np 6 PROG: rank R runs on h(R mod 3 + 1), as the allocation
#            says; exit 0
#   sbatch   sbatch -k (same allocation) --wrap "failstop-run --report F
#            --kill 4@2 -np 6 x_net 4 r4": the 5 survivors finish checked,
#            the job's exit code is 0 (the dead rank was declared failed),
#            and the report names rank 4 the one failure, known to all 5
#            survivors, every rank on its cyclic host
#   srun     the srun-only form, for sites where users call srun
#            themselves: srun --mpi=pmix -k --kill-on-bad-exit=0 --wait=5
#            with FAILSTOP_PMIX_HOLD=1, each task failstop-rank x_net,
#            rank 4 killed (FAILSTOP_KILL): the 5 survivors finish checked
#            (without the hold Slurm's PMIx plugin kills the step) and the
#            step ends once they have
# Needs root, iproute2 and Slurm's daemons (make deps installs them).
# Exit status: 0 all passed, 1 something failed, 2 usage/setup error.
set -u -o pipefail

die() { echo "hosts/slurm-run.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
BUILD=$(cd "$1" && pwd) || die "no build directory $1"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPEAT=${FS_HOSTS_REPEAT:-3}
case $BUILD/ in
/tmp/*|/var/tmp/*) die "the build ($BUILD) is under /tmp or /var/tmp, which the simulated hosts h2 and h3 do not share: build elsewhere" ;;
esac
for d in slurmctld slurmd salloc srun; do
    command -v "$d" > /dev/null || die "Slurm's $d is not installed (make deps)"
done
# shellcheck source=slurm.sh
. "$HERE/slurm.sh"
fail=0
slurm_up 3 || die "cannot start the Slurm cluster on the simulated hosts (its logs: ${SLURM_DIR:-?})"
LAUNCH="nsenter -t $(cat "$HOSTS_DIR/h1.pid") --net --uts --ipc -- \
salloc --quiet -N3 -n6 --ntasks-per-node=2 -m block -k $BUILD/bin/failstop-run --strict"
FS_TEST_LAUNCHER="$LAUNCH" FS_TEST_FAILSTOP_TESTS=1 FS_TEST_CONFIGS=shm \
    FS_TEST_FAULT_NPS=6 FS_TEST_REPEAT="$REPEAT" FS_TEST_LABEL=slurm \
    FS_TEST_FILTER="${FS_SLURM_FAULT_FILTER:-^(tf_fail_(kill|p2p|two|coll|finalize)|tf_hb_stop)$}" \
    bash "$HERE/../mpi/run.sh" "$BUILD" || fail=1
RUN=$BUILD/bin/failstop-run XNET=$BUILD/tests/mpi/x_net
export FS_NET_DIR=$HOSTS_DIR    # x_net's cue file (ready)
check() {   # check NAME WHY: PASS if WHY is empty
    if [ -z "$2" ]; then echo "PASS slurm-form $1"; else echo "FAIL slurm-form $1: ${2#; }"; fail=1; fi
}
ALLOC=(salloc --quiet -N3 -n6 --ntasks-per-node=2 -k)
# place
out=$(hosts_run 1 timeout -k 5 60 "${ALLOC[@]}" -m cyclic "$RUN" -np 6 \
      bash -c 'echo "PLACE $OMPI_COMM_WORLD_RANK $(hostname)"' 2>&1)
rc=$? why=""
[ "$rc" -eq 0 ] || why="; exit status $rc"
for r in 0 1 2 3 4 5; do
    grep -qx "PLACE $r h$((r % 3 + 1))" <<< "$out" ||
        why="$why; rank $r not on h$((r % 3 + 1)): $(grep "^PLACE $r " <<< "$out")"
done
check place "$why"
# sbatch
why=""
jid=$(slurm_run 1 sbatch --parsable -k -N3 -n6 --ntasks-per-node=2 -m cyclic \
      -o "$HOSTS_DIR/sbatch.out" \
      --wrap "$RUN --report $HOSTS_DIR/report.json --kill 4@2 -np 6 $XNET 4 r4")
state=""
for ((t = 0; t < 600; t++)); do
    state=$(slurm_run 1 scontrol show job "$jid" 2>/dev/null | grep -o 'JobState=[A-Z_]*')
    case $state in *PENDING|*RUNNING|*CONFIGURING|*COMPLETING|"") sleep 0.1 ;; *) break ;; esac
done
code=$(slurm_run 1 scontrol show job "$jid" 2>/dev/null | grep -o ' ExitCode=[0-9:]*')
[ "$state" = JobState=COMPLETED ] && [ "$code" = " ExitCode=0:0" ] ||
    why="; $state$code (want COMPLETED, 0:0)"
ok=$(grep -c "^MPITEST OK x_net" "$HOSTS_DIR/sbatch.out" 2>/dev/null)
[ "$ok" -eq 5 ] || why="$why; ${ok:-0} of 5 survivors OK"
# the report (records from every node, through srun): rank 4 the one
# failure, known to all 5 survivors; every rank on its cyclic host
why="$why$(python3 - "$HOSTS_DIR/report.json" <<'PY' 2>&1
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("; no report (%s)" % e); sys.exit()
f = r.get("failures", [])
if [x.get("rank") for x in f] != [4] or f[0].get("knew") != 5 or f[0].get("survivors") != 5:
    print("; report failures %s, not rank 4 known to 5 survivors" % f)
hosts = {x.get("rank"): x.get("host") for x in r.get("ranks", [])}
if hosts != {k: "h%d" % (k % 3 + 1) for k in range(6)}:
    print("; report hosts %s, not cyclic" % hosts)
PY
)"
check sbatch "$why"
# srun
t0=$SECONDS
out=$(hosts_run 1 timeout -k 5 60 "${ALLOC[@]}" -m block srun --mpi=pmix -k \
      --kill-on-bad-exit=0 --wait=5 --export=ALL,FAILSTOP_PMIX_HOLD=1,FAILSTOP_KILL=4@2 \
      "$BUILD/libexec/failstop/failstop-rank" "$XNET" 4 r4 2>&1)
rc=$? why=""
ok=$(grep -c "^MPITEST OK x_net" <<< "$out")
[ "$ok" -eq 5 ] || why="; $ok of 5 survivors OK"
[ "$rc" -ne 124 ] || why="$why; the step did not end in 60 s"
check srun "$why${why:+ (output: $(tail -n 5 <<< "$out" | tr '\n' ' '))}"
[ -z "$why" ] && echo "    (srun-only form: $((SECONDS - t0)) s for 4 s of traffic)"
slurm_down
export FS_HOSTS_LAUNCHER=slurm
FS_NET_REPEAT="$REPEAT" bash "$HERE/net.sh" "$BUILD" || fail=1
FS_FLAP_REPEAT="$REPEAT" FS_FLAP_HOSTS=3 \
    FS_FLAP_SCENARIOS="${FS_SLURM_FLAP_SCENARIOS:-flap0.3 flaps5 wireup fin outage}" \
    bash "$HERE/flap.sh" "$BUILD" || fail=1
exit $fail
