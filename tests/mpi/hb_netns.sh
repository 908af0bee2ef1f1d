#!/usr/bin/env bash
# tests/mpi/hb_netns.sh BUILD_DIR: the failure detector on a host whose
# first interface is a bridge that heartbeats cannot cross (issue 10, item
# 7).  In a network namespace this script creates: a bridge br0 (created
# first, so listed first; up, 192.0.2.1/24), loopback, and a routing rule
# that blackholes 192.0.2.1, so a datagram sent there goes nowhere, as it
# would to a container bridge on another host.  A detector that publishes
# the first non-loopback interface suspects every process once the start-up
# grace is over; tf_hb_compute (3.5 s without MPI calls on one rank, then
# checks that nobody was failed) must pass.  Needs root (network
# namespaces) and iproute2; each run is under a hard limit of 60 s.
# Exit status: 0 passed, 1 failed, 2 usage/setup error.
set -u -o pipefail

die() { echo "hb_netns.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
BUILD=$(cd "$1" && pwd) || die "no build directory $1"
RUN="$BUILD/bin/failstop-run"
PROG="$BUILD/tests/mpi/tf_hb_compute"
[ -x "$RUN" ] && [ -x "$PROG" ] || die "build first ($RUN, $PROG)"
command -v ip >/dev/null || die "iproute2 (ip) is not installed"
NS="fs-hbif-$$"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fs-hbnetns.XXXXXX") || die "mktemp"
trap 'ip netns del "$NS" 2>/dev/null; rm -rf "$WORK"' EXIT

in_ns() { ip netns exec "$NS" "$@"; }
ip netns add "$NS" || die "cannot create a network namespace (root needed)"
in_ns ip link add br0 type bridge || die "cannot create a bridge"
in_ns ip addr add 192.0.2.1/24 dev br0
in_ns ip link set br0 up
in_ns ip link set lo up
# local delivery is looked up after the blackhole, for that one address
in_ns ip rule add pref 50 to 192.0.2.1/32 blackhole
in_ns ip rule add pref 100 lookup local
in_ns ip rule del pref 0
if in_ns bash -c 'exec 3<>/dev/udp/192.0.2.1/9 && echo x >&3' 2>/dev/null; then
    die "the blackhole rule does not hold"
fi

fail=0
for np in 3 4; do
    t0=$SECONDS
    in_ns timeout -k 5 60 "$RUN" --strict --oversubscribe --bind-to none -np "$np" \
        "$PROG" > "$WORK/out.$np" 2>&1 < /dev/null
    rc=$?
    ok=$(grep -c "^MPITEST OK tf_hb_compute" "$WORK/out.$np")
    if [ "$rc" -eq 0 ] && [ "$ok" -eq "$np" ]; then
        echo "PASS hb-netns np=$np: bridge first, no suspicion $((SECONDS - t0))s"
    else
        echo "FAIL hb-netns np=$np: exit $rc, $ok of $np ranks OK"
        tail -20 "$WORK/out.$np"
        fail=1
    fi
done
exit $fail
