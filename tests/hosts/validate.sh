#!/usr/bin/env bash
# tests/hosts/validate.sh BUILD_DIR [OUT_DIR [failstop-validate options...]]:
# failstop-validate across FS_VAL_HOSTS (3) simulated hosts
# (tests/hosts/hosts.sh), two ranks each, run from h1 with the hosts'
# hostfile: every scenario over UCX TCP (the hosts share no memory), the
# victim (the last rank) on the last host; with --node-action
# $HOSTS_DIR/node-action (written here: crash, cut and restore a simulated
# host with hosts.sh) also node-crash, partition and flap.  The report goes to OUT_DIR
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
# the node action runs inside h1 (where failstop-validate runs): it reaches
# the switch and the other hosts through /run, as this script does
cat > "$HOSTS_DIR/node-action" <<EOF
#!/usr/bin/env bash
. "$HERE/hosts.sh"
HOSTS_DIR=$HOSTS_DIR HOSTS_TAG=$HOSTS_TAG HOSTS_N=$HOSTS_N
i=\${2#h}
case \$1 in
crash) hosts_crash "\$i" ;;
cut) hosts_link "\$i" down ;;
uncut) hosts_link "\$i" up ;;
restore) hosts_restore "\$i" ;;
*) echo "node-action: crash|cut|uncut|restore hI" >&2; exit 2 ;;
esac
EOF
chmod +x "$HOSTS_DIR/node-action"
hosts_run 1 "$BUILD/bin/failstop-validate" --hosts "$HOSTS_DIR/hostfile" --fabric ucx:tcp \
    --ranks $((2 * H)) --node-action "$HOSTS_DIR/node-action" --out "$OUT" "$@"
