#!/usr/bin/env bash
# Failure-free collectives before and after a change, with the unmodified
# OSU Micro-Benchmarks 7.4: osu_allreduce, osu_bcast and osu_barrier at 2
# and 4 ranks over UCX shared memory, failstop built at BASE_REV against
# failstop as checked out, interleaved run by run over FS_AB_ROUNDS rounds
# (the machine is shared and noisy: medians, and the ratio of medians).
#
#   bash bench/osu_coll_ab.sh BUILD_DIR [BASE_REV]
#
# BASE_REV defaults to 3bd95f3 (before the recovery issue's collectives
# work).  OSU is built once into BUILD_DIR/osu from ../shared/third_party
# (never into the tree); BASE_REV into BUILD_DIR/ab-base through a git
# worktree.  Writes docs/perf/coll_ab.md and coll_ab.tsv.
# Environment: FS_AB_ROUNDS (5), FS_AB_NPS ("2 4"), FS_AB_MAX (65536),
# FS_AB_REPORT_ONLY=1 (only the report, from the last run's coll_ab.tsv).
set -u -o pipefail

die() { echo "osu_coll_ab.sh: $*" >&2; exit 2; }
[ $# -ge 1 ] || die "usage: $0 BUILD_DIR [BASE_REV]"
BUILD=$(cd "$1" && pwd) || die "no build directory $1"
BASE_REV=${2:-3bd95f3}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$HERE/docs/perf
ROUNDS=${FS_AB_ROUNDS:-5} NPS=${FS_AB_NPS:-2 4} MAX=${FS_AB_MAX:-65536}
mkdir -p "$OUT"

. "$HERE/bench/osu_build.sh"
osu_build || die "no OSU"
base=$BUILD/ab-base
if [ ! -x "$base/build/bin/failstop-run" ] ||
   [ "$(cat "$base/rev" 2>/dev/null)" != "$(git -C "$HERE" rev-parse "$BASE_REV")" ]; then
    echo "building failstop $BASE_REV into $base"
    rm -rf "$base" && git -C "$HERE" worktree prune &&
        git -C "$HERE" worktree add -f -q --detach "$base" "$BASE_REV" &&
        make -s -C "$base" all >/dev/null 2>&1 ||
        die "building $BASE_REV failed"
    git -C "$HERE" rev-parse "$BASE_REV" > "$base/rev"
fi

TSV=$OUT/coll_ab.tsv
[ -n "${FS_AB_REPORT_ONLY:-}" ] && ROUNDS=$(tail -n +2 "$TSV" | cut -f1 | sort -n | tail -1)
[ -n "${FS_AB_REPORT_ONLY:-}" ] || printf 'round\tversion\tbench\tnp\tsize\tus\n' > "$TSV"
run() {   # round version runner bench np
    local b=$OSU/collective/blocking/$4 extra=(-m "1:$MAX")
    [ "$4" = osu_barrier ] && extra=()
    timeout -k 5 300 "$3" --allow-run-as-root --oversubscribe --bind-to none -np "$5" \
        "$b" "${extra[@]}" 2>/dev/null |
        awk -v r="$1" -v v="$2" -v b="$4" -v n="$5" '
            /^[0-9]/ && b != "osu_barrier" { printf "%s\t%s\t%s\t%s\t%s\t%s\n", r, v, b, n, $1, $2 }
            /^ *[0-9.]+ *$/ && b == "osu_barrier" { printf "%s\t%s\t%s\t%s\t0\t%s\n", r, v, b, n, $1 }' \
        >> "$TSV" || echo "osu_coll_ab.sh: $* failed" >&2
}
for r in $(seq 1 "$ROUNDS"); do
    [ -n "${FS_AB_REPORT_ONLY:-}" ] && break
    for np in $NPS; do
        for b in osu_allreduce osu_bcast osu_barrier; do
            # which runs first alternates: the host drifts within a round
            if [ $((r % 2)) -eq 1 ]; then
                run "$r" base "$base/build/bin/failstop-run" "$b" "$np"
                run "$r" new "$BUILD/bin/failstop-run" "$b" "$np"
            else
                run "$r" new "$BUILD/bin/failstop-run" "$b" "$np"
                run "$r" base "$base/build/bin/failstop-run" "$b" "$np"
            fi
        done
    done
    echo "round $r of $ROUNDS done"
done

# median per (bench, np, size, version), then new / base
tail -n +2 "$TSV" | sort -t$'\t' -k3,3 -k4,4n -k5,5n -k2,2 -k6,6g |
    awk -F'\t' '{ k = $3 "\t" $4 "\t" $5 "\t" $2 }
        k != last && NR > 1 { print last "\t" v[int((n + 1) / 2)]; n = 0 }
        { last = k; v[++n] = $6 }
        END { if (n) print last "\t" v[int((n + 1) / 2)] }' |
    awk -F'\t' '{ key = $1 "\t" $2 "\t" $3; m[key, $4] = $5; keys[key] = 1 }
        END { for (k in keys) if (((k SUBSEP "base") in m) && ((k SUBSEP "new") in m))
                  printf "%s\t%s\t%s\t%.3f\n", k, m[k, "base"], m[k, "new"],
                         (m[k, "base"] > 0 ? m[k, "new"] / m[k, "base"] : 0) }' |
    sort -t$'\t' -k1,1 -k2,2n -k3,3n > "$OUT/coll_ab_summary.tsv"
{
    echo "# Failure-free collectives before and after ($BASE_REV vs $(git -C "$HERE" rev-parse --short HEAD))"
    echo
    echo "Measured by \`bench/osu_coll_ab.sh\` ($(date -u +%Y-%m-%d), $(nproc) cores, UCX shared memory):"
    echo "OSU 7.4 unmodified, microseconds, median of $ROUNDS interleaved rounds; ratio = after / before."
    echo
    echo "| benchmark | ranks | bytes | before µs | after µs | ratio |"
    echo "|---|---|---|---|---|---|"
    awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }' \
        "$OUT/coll_ab_summary.tsv"
    echo
    awk -F'\t' '{ s += log($6); n++ } END { if (n) printf "Geometric mean of the ratios: %.3f over %d cells.\n", exp(s / n), n }' \
        "$OUT/coll_ab_summary.tsv"
} > "$OUT/coll_ab.md"
echo "wrote $OUT/coll_ab.md"
