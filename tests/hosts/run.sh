#!/usr/bin/env bash
# tests/hosts/run.sh BUILD_DIR: failstop across simulated hosts (issue 11).
# Three hosts (tests/hosts/hosts.sh: network, UTS and IPC namespaces joined
# by a bridge), two ranks each, launched by Open MPI's own rsh launcher
# entering them; mpirun runs on h1.  Runs, through tests/mpi/run.sh:
#   - the failure-free MPI suite (t_*) once at 6 ranks: shared memory inside
#     a host, UCX TCP between hosts;
#   - fault tests whose victims land on other hosts, FS_HOSTS_REPEAT times;
#   - tests/hosts/net.sh: packet loss, delay, a cut at start-up, a killed
#     rank, a killed daemon, node crash and partition, FS_HOSTS_REPEAT times
#     each;
#   - tests/hosts/flap.sh: link flaps (0.1-2 s, five in a row, during
#     wire-up, a 64 MiB rendezvous, MPI_Allreduce, MPI_Finalize; an outage
#     the transport holds; one longer than the tolerance) at 3 and 6 hosts,
#     FS_HOSTS_REPEAT times each;
#   - tests/hosts/validate.sh: failstop-validate's scenarios once each.
# Exit status: 0 all passed, 1 something failed, 2 usage/setup error.
set -u -o pipefail

die() { echo "hosts/run.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
BUILD=$(cd "$1" && pwd) || die "no build directory $1"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPEAT=${FS_HOSTS_REPEAT:-10}
# hosts other than h1 have their own /tmp and /var/tmp (hosts.sh), as
# separate machines do: a build there is missing on them, and every run
# would wait for ranks that cannot start until its time limit
case $BUILD/ in
/tmp/*|/var/tmp/*) die "the build ($BUILD) is under /tmp or /var/tmp, which the simulated hosts h2 and h3 do not share: build elsewhere (e.g. clone to /work or /root)" ;;
esac
# shellcheck source=hosts.sh
. "$HERE/hosts.sh"
hosts_up 3 || die "cannot create the simulated hosts (root and iproute2 needed)"

# the hosts reach mpirun through the environment, so that run.sh can still
# put failstop-run's own options first
hosts_launch_env
LAUNCH="nsenter -t $(cat "$HOSTS_DIR/h1.pid") --net --uts --ipc -- \
$BUILD/bin/failstop-run --strict"
fail=0
FS_TEST_LAUNCHER="$LAUNCH" FS_TEST_FAILSTOP_TESTS=0 FS_TEST_CONFIGS=shm FS_TEST_NPS=6 \
    FS_TEST_FILTER="${FS_HOSTS_SUITE_FILTER:-^t_}" bash "$HERE/../mpi/run.sh" "$BUILD" || fail=1
FS_TEST_LAUNCHER="$LAUNCH" FS_TEST_FAILSTOP_TESTS=1 FS_TEST_CONFIGS=shm \
    FS_TEST_FAULT_NPS=6 FS_TEST_REPEAT="$REPEAT" \
    FS_TEST_FILTER="${FS_HOSTS_FAULT_FILTER:-^(tf_fail_(kill|p2p|two|coll)|tf_hb_stop)$}" \
    bash "$HERE/../mpi/run.sh" "$BUILD" || fail=1
# the network and the hosts misbehave (link flap, loss, node crash,
# partition), FS_HOSTS_REPEAT times each, on hosts of its own
hosts_down
FS_NET_REPEAT="$REPEAT" bash "$HERE/net.sh" "$BUILD" || fail=1
FS_FLAP_REPEAT="$REPEAT" bash "$HERE/flap.sh" "$BUILD" || fail=1
# failstop-validate across the hosts, every scenario once (its exit
# scenario found mpirun 4.1 never ending a job whose rank on another host
# exited without MPI_Finalize); the report under the build directory
bash "$HERE/validate.sh" "$BUILD" "$BUILD/validate-hosts-test" --reps 1 --soak 0.1 || fail=1
exit $fail
