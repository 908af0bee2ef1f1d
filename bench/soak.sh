#!/usr/bin/env bash
# No false suspicion under load: bench/fs_soak (8 ranks: 4 MiB ring
# exchanges, 1 MiB allreduces, compute phases without MPI) for SECONDS
# (default 600) under failstop-run, while two other processes keep both
# cores busy.  Prints fs_soak's SOAK line; exit status 1 if any process was
# suspected or any MPI call failed.
#
#   bash bench/soak.sh BUILD_DIR [SECONDS] [RANKS]
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [SECONDS] [RANKS]" >&2; exit 2; }
BUILD=$1
SECS=${2:-600}
NP=${3:-8}
HOGS=()
cleanup() { [ ${#HOGS[@]} -gt 0 ] && kill "${HOGS[@]}" 2>/dev/null || true; }
trap cleanup EXIT
for i in 1 2; do
    (while :; do :; done) &
    HOGS+=($!)
done
out=$(timeout -k 5 $((SECS + 120)) "$BUILD/bin/failstop-run" --oversubscribe --bind-to none \
      -np "$NP" "$BUILD/bench/fs_soak" -t "$SECS" 2>&1 | tee /dev/stderr | grep '^SOAK' || true)
echo "$out"
[ -n "$out" ] || exit 1
echo "$out" | awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    exit !(v["errors"] == 0 && v["peers_failed"] == 0 && v["suspicions"] == 0) }'
