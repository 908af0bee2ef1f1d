#!/usr/bin/env bash
# Latency of agreement (MPIX_Comm_agree), validation (MPIX_Comm_validate)
# and shrink (MPIX_Comm_shrink) against ranks, failure-free and with one
# member failed (and acknowledged), star and binomial tree, with
# MPI_Allreduce(MPI_BAND) of the same communicator as the non-fault-tolerant
# reference (after the failure: over the survivors of the validated
# communicator).
#
#   bash bench/agree.sh BUILD_DIR
#
# Runs bench/fs_agreelat (its header says what it times) under failstop-run
# over UCX shared memory, cells interleaved round-robin over FS_AG_REPEAT
# passes (the machine is shared: the median of the passes' medians is
# reported).  Writes docs/perf/agree.md, agree.tsv and agree.png (gnuplot).
# Environment: FS_AG_NPS (default "2 4 8 16"), FS_AG_REPEAT (3),
# FS_AG_ITERS (200), FS_AG_ROUNDS (21).
set -u -o pipefail

die() { echo "agree.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
BUILD=$(cd "$1" && pwd) || die "no build directory $1"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$HERE/docs/perf
NPS=${FS_AG_NPS:-2 4 8 16} REPEAT=${FS_AG_REPEAT:-3}
ITERS=${FS_AG_ITERS:-200} ROUNDS=${FS_AG_ROUNDS:-21}
RUN="$BUILD/bin/failstop-run --allow-run-as-root --oversubscribe --bind-to none"
TSV=$OUT/agree.tsv
mkdir -p "$OUT"
printf 'pass\tshape\tcase\top\tnp\tmedian_us\tmin_us\n' > "$TSV"

cell() {   # pass shape(star|tree) case(ok|dead) np
    local star=8 dead=0 np=$4
    [ "$2" = tree ] && star=0
    [ "$3" = dead ] && dead=1
    timeout -k 5 120 $RUN -np "$np" --mca pml_failstop_agree_star_max $star \
        "$BUILD/bench/fs_agreelat" "$ITERS" "$ROUNDS" $dead 2>/dev/null |
        awk -v p="$1" -v s="$2" -v c="$3" 'NF == 4 { printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p, s, c, $1, $2, $3, $4 }' \
        >> "$TSV" || echo "agree.sh: cell $* failed" >&2
}

for pass in $(seq 1 "$REPEAT"); do
    for np in $NPS; do
        for shape in star tree; do
            [ "$shape" = star ] && [ "$np" -gt 8 ] && continue
            cell "$pass" "$shape" ok "$np"
            [ "$np" -gt 2 ] && cell "$pass" "$shape" dead "$np"
        done
    done
done

# median over passes of each (shape, case, op, np)
sort -t$'\t' -k2,2 -k3,3 -k4,4 -k5,5n -k6,6n <(tail -n +2 "$TSV") |
    awk -F'\t' '{ k = $2 "\t" $3 "\t" $4 "\t" $5 }
        k != last && NR > 1 { print last "\t" v[int((n + 1) / 2)]; n = 0 }
        { last = k; v[++n] = $6 }
        END { if (n) print last "\t" v[int((n + 1) / 2)] }' |
    sort -t$'\t' -k1,1 -k2,2 -k3,3 -k4,4n > "$OUT/agree_summary.tsv"
{
    echo "# Agreement, validate and shrink latency"
    echo
    echo "Measured by \`bench/agree.sh\` ($(date -u +%Y-%m-%d), $(nproc) cores, UCX shared memory,"
    echo "ranks oversubscribed beyond $(nproc)): microseconds per call, median over $REPEAT passes of"
    echo "the median of $ROUNDS rounds of $ITERS back-to-back calls.  \`dead\`: the last rank"
    echo "was killed and acknowledged before timing (ranks counted: the survivors)."
    echo "\`allreduce\`: \`MPI_Allreduce\` of one int with \`MPI_BAND\` on the same communicator"
    echo "(Open MPI's tuned component over failstop), the same result without fault tolerance;"
    echo "\`allreduce_survivors\`: the same over the survivors of the validated communicator."
    echo "\`validate\`: one agreement, and with a failure the survivors' shadow communicator"
    echo "rebuilt; \`shrink\`: one agreement, a new communicator built and freed (10x fewer calls)."
    echo
    echo "| shape | case | operation | ranks | µs |"
    echo "|---|---|---|---|---|"
    awk -F'\t' '{ printf "| %s | %s | %s | %s | %.1f |\n", $1, $2, $3, $4, $5 }' "$OUT/agree_summary.tsv"
} > "$OUT/agree.md"
if command -v gnuplot >/dev/null; then
    for s in "star ok agree" "tree ok agree" "star dead agree_after_failure" \
             "tree dead agree_after_failure" "tree ok allreduce" "star ok validate" \
             "tree ok validate" "star dead validate_after_failure" \
             "tree dead validate_after_failure" "star ok shrink" "tree ok shrink" \
             "star dead shrink_after_failure" "tree dead shrink_after_failure"; do
        set -- $s
        awk -F'\t' -v a="$1" -v b="$2" -v c="$3" '$1 == a && $2 == b && $3 == c { print $4, $5 }' \
            "$OUT/agree_summary.tsv" > "$OUT/.agree_$1_$2_$3.dat"
    done
    gnuplot <<GP || echo "agree.sh: gnuplot failed" >&2
set terminal pngcairo size 900,500
set output "$OUT/agree.png"
set title "Agreement, validate and shrink latency (shared memory, $(nproc) cores)"
set xlabel "ranks"; set ylabel "microseconds per call"; set logscale xy 2; set key top left
set key font ",8"
plot "$OUT/.agree_star_ok_agree.dat" w lp t "agree, star", \
     "$OUT/.agree_tree_ok_agree.dat" w lp t "agree, binomial", \
     "$OUT/.agree_star_dead_agree_after_failure.dat" w lp t "agree, one failed (star)", \
     "$OUT/.agree_tree_dead_agree_after_failure.dat" w lp t "agree, one failed (binomial)", \
     "$OUT/.agree_star_ok_validate.dat" w lp t "validate, star", \
     "$OUT/.agree_tree_ok_validate.dat" w lp t "validate, binomial", \
     "$OUT/.agree_star_dead_validate_after_failure.dat" w lp t "validate, one failed (star)", \
     "$OUT/.agree_tree_dead_validate_after_failure.dat" w lp t "validate, one failed (binomial)", \
     "$OUT/.agree_star_ok_shrink.dat" w lp t "shrink, star", \
     "$OUT/.agree_tree_ok_shrink.dat" w lp t "shrink, binomial", \
     "$OUT/.agree_star_dead_shrink_after_failure.dat" w lp t "shrink, one failed (star)", \
     "$OUT/.agree_tree_dead_shrink_after_failure.dat" w lp t "shrink, one failed (binomial)", \
     "$OUT/.agree_tree_ok_allreduce.dat" w lp dt 2 t "MPI_Allreduce BAND (reference)"
GP
    rm -f "$OUT"/.agree_*.dat
fi
echo "wrote $OUT/agree.md"
