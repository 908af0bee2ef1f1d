#!/usr/bin/env bash
# tests/hosts/validate.sh BUILD_DIR [OUT_DIR [failstop-validate options...]]:
# failstop-validate across FS_VAL_HOSTS (3) simulated hosts
# (tests/hosts/hosts.sh), two ranks each, run from h1 with the hosts'
# hostfile: every scenario over UCX TCP (the hosts share no memory), the
# victim (the last rank) on the last host.  The report goes to OUT_DIR
# (default BUILD_DIR/validate-hosts: the hosts share this file system, not
# /tmp).  Exit status: failstop-validate's.
set -u -o pipefail

die() { echo "validate.sh: $*" >&2; exit 2; }
[ $# -ge 1 ] || die "usage: $0 BUILD_DIR [OUT_DIR [options...]]"
BUILD=$(cd "$1" && pwd) || die "no build directory $1"
OUT=${2:-$BUILD/validate-hosts}
shift $(( $# >= 2 ? 2 : 1 ))
case $OUT in /tmp/*) die "OUT_DIR under /tmp: each simulated host has its own /tmp" ;; esac
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=hosts.sh
. "$HERE/hosts.sh"
H=${FS_VAL_HOSTS:-3}
hosts_up "$H" || die "cannot create the simulated hosts (root and iproute2 needed)"
hosts_launch_env
rm -rf "$OUT"
hosts_run 1 "$BUILD/bin/failstop-validate" --hosts "$HOSTS_DIR/hostfile" --fabric ucx:tcp \
    --ranks $((2 * H)) --out "$OUT" "$@"
