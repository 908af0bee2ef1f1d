#!/usr/bin/env bash
# bench/flap.sh BUILD_DIR: what a network outage costs across simulated
# hosts (issue 40), at 3 hosts (3 ranks each) and 6 (2 each), default
# detector settings.  Through tests/hosts/flap.sh:
#   - the tolerance: one flap of the last host's link, of each length in
#     FS_BENCH_FLAPS ("1 2 2.5 3 3.5 4" s), FS_BENCH_ROUNDS (5) times: a
#     run passes if nobody was suspected, every payload arrived and the job
#     exited 0; the longest length every run of which passed is the
#     tolerance (the phase of Linux's neighbour re-resolution, once a
#     second, decides how much silence a flap costs: f to f + 1 s);
#   - the time to exclude a cut-off host: its link down for 8 s (outage),
#     FS_BENCH_ROUNDS times: per survivor, when its failed group first had
#     a member and when it held the whole host, after the link went down;
#     when the cut-off ranks ended themselves (their records).
# Writes docs/perf/flap.md and docs/perf/flap.png (gnuplot), and the raw
# data in docs/perf/flap.tsv.  Not a test: long flaps are meant to fail.
set -u -o pipefail

die() { echo "bench/flap.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
BUILD=$(cd "$1" && pwd) || die "no build directory $1"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROUNDS=${FS_BENCH_ROUNDS:-5}
FLAPS=${FS_BENCH_FLAPS:-1 2 2.5 3 3.5 4}
PERF="$HERE/../docs/perf"
TSV="$PERF/flap.tsv"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fs-bench-flap.XXXXXX") || die "mktemp"
trap 'rm -rf "$TMP"' EXIT

scen=""
for f in $FLAPS; do scen+="flap$f "; done
: > "$TMP/times"
for h in 3 6; do
    FS_FLAP_HOSTS=$h FS_FLAP_REPEAT=$ROUNDS FS_FLAP_SCENARIOS="$scen outage" \
        FS_FLAP_TIMES="$TMP/times" bash "$HERE/../tests/hosts/flap.sh" "$BUILD" \
        > "$TMP/out.$h" 2>&1
    grep -E '^(PASS|FAIL) hosts-flap' "$TMP/out.$h"
done

# raw data: kind hosts scenario value...
{
    printf 'kind\thosts\tscenario\tresult\n'
    for h in 3 6; do
        grep -E '^(PASS|FAIL) hosts-flap' "$TMP/out.$h" |
            awk -v h="$h" '{ print "run\t" h "\t" $3 "\t" $1 }'
    done
    # outage: scenario hosts rank down up first-known all-known
    awk '{ printf "outage\t%s\trank%s\t%.3f %.3f\n", $2, $3, $6 - $4, $7 - $4 }' "$TMP/times"
} > "$TSV"

# pass fraction per flap length and host count
for h in 3 6; do
    for f in $FLAPS; do
        awk -v h="$h" -v s="flap$f" -v f="$f" -F'\t' '
            $1 == "run" && $2 == h && $3 == s { n++; p += ($4 == "PASS") }
            END { printf "%s %d %d\n", f, p, n }' "$TSV"
    done > "$TMP/pass.$h"
done

gnuplot <<GP 2>/dev/null || echo "bench/flap.sh: gnuplot failed (no plot)" >&2
set terminal pngcairo size 720,420 font ",11"
set output "$PERF/flap.png"
set title "One flap of a host's link: runs with nobody suspected"
set xlabel "link down (s)"
set ylabel "runs passed (fraction)"
set yrange [-0.05:1.05]
set key bottom left
set grid
plot "$TMP/pass.3" using 1:(\$3 > 0 ? \$2/\$3 : 1/0) with linespoints lw 2 title "3 hosts x 3 ranks", \
     "$TMP/pass.6" using 1:(\$3 > 0 ? \$2/\$3 : 1/0) with linespoints lw 2 title "6 hosts x 2 ranks"
GP

tolerance() {
    awk '$2 == $3 && $3 > 0 { t = $1 } $2 != $3 { exit } END { print (t == "" ? "none" : t " s") }' "$1"
}

stat() {    # column of "outage" rows for host count $1: median / worst
    awk -F'\t' -v h="$1" -v c="$2" '$1 == "outage" && $2 == h { split($4, v, " "); a[++n] = v[c] }
        END {
            if (n == 0) { print "-"; exit }
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            printf "%.2f / %.2f (%d)", a[int((n + 1) / 2)], a[n], n
        }' "$TSV"
}

{
    echo "# Link flaps across simulated hosts"
    echo
    echo "\`make bench-flap\` (bench/flap.sh), $(date -u +%Y-%m-%d), $ROUNDS runs per row; hosts"
    echo "are network namespaces on one $(nproc)-core machine joined by a bridge"
    echo "(tests/hosts/hosts.sh), UCX over TCP between hosts, x_flap's mixed traffic"
    echo "(every pair both ways every millisecond, 64 B and 256 KiB, and an"
    echo "MPI_Allreduce each round), default settings (hb_period_ms 100,"
    echo "hb_timeout_remote_ms 2500, hb_timeout_host_ms 4000).  The last host's"
    echo "link (its port on the bridge) goes down for the time shown, then up."
    echo
    echo "## Tolerance: one flap, runs with nobody suspected"
    echo
    echo "| link down (s) | 3 hosts x 3 ranks | 6 hosts x 2 ranks |"
    echo "|---:|---:|---:|"
    for f in $FLAPS; do
        printf '| %s | %s | %s |\n' "$f" \
            "$(awk -v f="$f" '$1 == f { print $2 " of " $3 }' "$TMP/pass.3")" \
            "$(awk -v f="$f" '$1 == f { print $2 " of " $3 }' "$TMP/pass.6")"
    done
    echo
    echo "Longest flap every run of which passed: $(tolerance "$TMP/pass.3") at 3 hosts,"
    echo "$(tolerance "$TMP/pass.6") at 6 hosts."
    echo
    echo "![pass fraction against flap length](flap.png)"
    echo
    echo "## Excluding a host cut off for good (its link down for 8 s)"
    echo
    echo "Seconds after the link went down, median / worst (samples), over every"
    echo "survivor of every run: when its failed group first had a member, and when"
    echo "it held both (3 hosts: all three) ranks of the cut-off host."
    echo
    echo "| hosts | first known | all known |"
    echo "|---:|---:|---:|"
    for h in 3 6; do
        printf '| %s | %s | %s |\n' "$h" "$(stat "$h" 1)" "$(stat "$h" 2)"
    done
} > "$PERF/flap.md"
echo "wrote $PERF/flap.md"
