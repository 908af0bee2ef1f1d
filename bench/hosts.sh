#!/usr/bin/env bash
# bench/hosts.sh BUILD_DIR: detection across simulated hosts (issue 11).
# Runs tests/hosts/net.sh's kill, crash and partition scenarios
# FS_BENCH_ROUNDS (5) times at 3 and 6 hosts (two ranks each) and writes
# docs/perf/hosts.md: per scenario and job size, the median and the worst
# over survivors and rounds of
#   first error  the survivor's first failed operation (ranks that talk to
#                the victims; others never get one),
#   first known  its failed group's first member,
#   all known    its failed group complete (both ranks of a crashed or
#                cut-off host),
# in seconds after the action (wall clock on one machine).  The scenarios
# themselves are checked as in make hosts-test: a failed run fails this.
set -u -o pipefail

die() { echo "bench/hosts.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
BUILD=$(cd "$1" && pwd) || die "no build directory $1"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROUNDS=${FS_BENCH_ROUNDS:-5}
OUT="$HERE/../docs/perf/hosts.md"
TIMES=$(mktemp "${TMPDIR:-/tmp}/fs-hosts-times.XXXXXX") || die "mktemp"
trap 'rm -f "$TIMES"' EXIT

fail=0
for h in 3 6; do
    FS_NET_HOSTS=$h FS_NET_REPEAT=$ROUNDS FS_NET_ONLY='^(kill|crash|partition)$' \
        FS_NET_TIMES="$TIMES" bash "$HERE/../tests/hosts/net.sh" "$BUILD" || fail=1
done

{
    echo "# Detection across simulated hosts"
    echo
    echo "\`make bench-hosts\` (bench/hosts.sh), $(date -u +%Y-%m-%d), $ROUNDS rounds per row;"
    echo "hosts are network namespaces on one $(nproc)-core machine joined by a bridge"
    echo "(tests/hosts/hosts.sh), two ranks per host, UCX over TCP between hosts,"
    echo "default detector settings (period 100 ms, timeout 1000 ms within a host,"
    echo "2500 ms across hosts, a silent host failed after 4000 ms). Seconds after"
    echo "the action: median / worst over"
    echo "every survivor of every round. kill: SIGKILL to one rank of the last"
    echo "host; crash: the last host's link down and all its processes killed;"
    echo "partition: its link down for good."
    echo
    echo "| scenario | hosts | ranks | first error | first known | all known | survivor samples |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for sc in kill crash partition; do
        for h in 3 6; do
            awk -v sc="$sc" -v h="$h" '
                function stat(a, n,   i, j, t) {
                    if (n == 0) return "-"
                    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                        if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                    return sprintf("%.3f / %.3f", a[int((n + 1) / 2)], a[n])
                }
                $1 == sc && $2 == h {
                    s++
                    if ($5 > 0) fe[++nfe] = $5 - $4
                    fk[++nfk] = $6 - $4
                    ak[++nak] = $7 - $4
                }
                END {
                    if (s == 0) exit
                    printf "| %s | %d | %d | %s | %s | %s | %d |\n", sc, h, 2 * h,
                           stat(fe, nfe), stat(fk, nfk), stat(ak, nak), s
                }' "$TIMES"
        done
    done
} > "$OUT"
echo "wrote $OUT"
exit $fail
