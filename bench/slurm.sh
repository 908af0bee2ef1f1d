#!/usr/bin/env bash
# bench/slurm.sh BUILD_DIR: failures across simulated hosts under Slurm and
# under mpirun, in the same run (issue 41).  FS_BENCH_ROUNDS (5) rounds; in
# each, tests/hosts/net.sh's kill, crash and partition at 3 hosts (two ranks
# each) under mpirun, then under Slurm (tests/hosts/slurm.sh: each job
# failstop-run in an allocation of its own, ranks started by srun).  Writes
# docs/perf/slurm.md: per launcher and scenario, the median / worst over
# survivors and rounds of first error, first known and all known (seconds
# after the action, as docs/perf/hosts.md), and per run the time from the
# last survivor's end to the job's end (failstop-run returning).  The
# scenarios are checked as in make test: a failed run fails this.
set -u -o pipefail

die() { echo "bench/slurm.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
BUILD=$(cd "$1" && pwd) || die "no build directory $1"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROUNDS=${FS_BENCH_ROUNDS:-5}
OUT="$HERE/../docs/perf/slurm.md"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fs-bench-slurm.XXXXXX") || die "mktemp"
trap 'rm -rf "$TMP"' EXIT

fail=0
for ((r = 1; r <= ROUNDS; r++)); do
    for l in mpirun slurm; do
        FS_HOSTS_LAUNCHER=$l FS_NET_REPEAT=1 FS_NET_ONLY='^(kill|crash|partition)$' \
            FS_NET_TIMES="$TMP/times.$l" FS_NET_ENDS="$TMP/ends.$l" \
            bash "$HERE/../tests/hosts/net.sh" "$BUILD" | grep '^\(PASS\|FAIL\)' || fail=1
    done
done

stats() {   # stats FILE SCENARIO: "first error | first known | all known | samples"
    awk -v sc="$2" '
        function stat(a, n,   i, j, t) {
            if (n == 0) return "-"
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            return sprintf("%.3f / %.3f", a[int((n + 1) / 2)], a[n])
        }
        $1 == sc {
            s++
            if ($5 > 0) fe[++nfe] = $5 - $4
            fk[++nfk] = $6 - $4
            ak[++nak] = $7 - $4
        }
        END { printf "%s | %s | %s | %d", stat(fe, nfe), stat(fk, nfk), stat(ak, nak), s }' "$1"
}
ends() {    # ends FILE SCENARIO: "last survivor end -> job end" median / worst
    awk -v sc="$2" '
        $1 == sc && $4 > 0 { d[++n] = $5 - $4 }
        END {
            if (n == 0) { printf "-"; exit }
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                if (d[j] < d[i]) { t = d[i]; d[i] = d[j]; d[j] = t }
            printf "%.2f / %.2f", d[int((n + 1) / 2)], d[n]
        }' "$1"
}
{
    echo "# Failures across hosts under Slurm and under mpirun"
    echo
    echo "\`bench/slurm.sh\`, $(date -u +%Y-%m-%d), $ROUNDS rounds, launchers interleaved"
    echo "round by round. Three simulated hosts (network namespaces on one $(nproc)-core"
    echo "machine), two ranks each, UCX over TCP between hosts, default detector"
    echo "settings. mpirun: Open MPI 4.1's rsh launcher entering the hosts; Slurm"
    echo "$(srun --version 2>/dev/null | awk '{print $2}'): slurmctld and a slurmd per host, each job"
    echo "failstop-run in an allocation of its own (salloc -N3 -n6 -m block -k),"
    echo "ranks started by srun --mpi=pmix. Seconds after the action, median / worst"
    echo "over every survivor of every round; *job end* is per run, from the last"
    echo "survivor's end to failstop-run's return (srun alone waits for Slurm to"
    echo "declare a lost node down: SlurmdTimeout, 30 s here, 300 s by default)."
    echo
    echo "| launcher | scenario | first error | first known | all known | survivor samples | last survivor -> job end |"
    echo "|---|---|---:|---:|---:|---:|---:|"
    for sc in kill crash partition; do
        for l in mpirun slurm; do
            echo "| $l | $sc | $(stats "$TMP/times.$l" "$sc") | $(ends "$TMP/ends.$l" "$sc") |"
        done
    done
} > "$OUT"
cat "$OUT"
exit $fail
