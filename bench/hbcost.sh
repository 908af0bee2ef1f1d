#!/usr/bin/env bash
# What the failure detector costs a failure-free run: 8-byte and 64 KiB
# latency over shared memory (2 ranks, one core each) with the detector on
# (default) and off (--mca pml_failstop_hb_period_ms 0), interleaved round
# by round so drift of the machine hits both alike.  Prints one line per
# run and the medians; writes nothing else.
#
#   bash bench/hbcost.sh BUILD_DIR [ROUNDS]
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [ROUNDS]" >&2; exit 2; }
BUILD=$1
ROUNDS=${2:-7}
BIN=$BUILD/bench/fs_bench
RUNNER=$BUILD/bin/failstop-run
[ -x "$BIN" ] && [ -x "$RUNNER" ] || { echo "build first (make all bench binaries)" >&2; exit 2; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for ((r = 1; r <= ROUNDS; r++)); do
    for cfg in on off; do
        opts=()
        [ "$cfg" = off ] && opts=(--mca pml_failstop_hb_period_ms 0)
        timeout -k 5 120 "$RUNNER" --bind-to core "${opts[@]}" -np 2 "$BIN" latency \
            -s 8,64K >"$OUT/r$r.$cfg" 2>/dev/null
        awk -v r="$r" -v c="$cfg" '$1 == "RESULT" { print r, c, $3, $4 }' "$OUT/r$r.$cfg" |
            tee -a "$OUT/all"
    done
done
echo "median latency (us) over $ROUNDS rounds:"
for size in $(awk '{ print $3 }' "$OUT/all" | sort -un); do
    for cfg in on off; do
        printf '  %8s B detector %-3s %s\n' "$size" "$cfg" "$(awk -v s="$size" -v c="$cfg" \
            '$3 == s && $2 == c { print $4 }' "$OUT/all" | sort -g |
            awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2) }')"
    done
done
