#!/usr/bin/env bash
# tests/mpi/hb_foreign.sh BUILD_DIR: a job whose detector sockets another
# job's stale detector floods with crafted datagrams (hb_foreign.py; issue
# 10, item 6).  Every rank must finish x_hb_foreign (nobody failed or
# excluded) and count dropped foreign datagrams.  3 runs of np 3, each
# under a hard limit of 60 s.
# Exit status: 0 passed, 1 failed, 2 usage/setup error.
set -u -o pipefail

die() { echo "hb_foreign.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
RUN="$1/bin/failstop-run"
PROG="$1/tests/mpi/x_hb_foreign"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -x "$RUN" ] && [ -x "$PROG" ] || die "build first ($RUN, $PROG)"
command -v python3 >/dev/null || die "python3 is not installed"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fs-hbforeign.XXXXXX") || die "mktemp"
sid=""
reap() { local p; [ -n "$sid" ] || return 0
    for p in $(ps -o pid= -s "$sid" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done; }
trap 'reap; rm -rf "$WORK"' EXIT

fail=0
for run in 1 2 3; do
    np=3 t0=$SECONDS
    setsid timeout -k 5 60 "$RUN" --strict --oversubscribe --bind-to none -np $np \
        "$PROG" > "$WORK/job.out" 2>&1 < /dev/null &
    sid=$!
    timeout -k 5 40 python3 "$HERE/hb_foreign.py" x_hb_foreign 3 > "$WORK/flood.out" 2>&1
    frc=$?
    wait "$sid"; rc=$?
    reap; sid=""
    ok=$(grep -c "^MPITEST OK x_hb_foreign" "$WORK/job.out")
    counted=$(grep -c "^HB_FOREIGN rank [0-9]* dropped [1-9]" "$WORK/job.out")
    if [ "$frc" -ne 0 ]; then
        echo "FAIL hb-foreign run $run: the flood found no target"; cat "$WORK/flood.out"; fail=1
    elif [ "$rc" -ne 0 ] || [ "$ok" -ne $np ] || [ "$counted" -ne $np ]; then
        echo "FAIL hb-foreign run $run: exit $rc, $ok of $np ranks OK, $counted counted foreign datagrams"
        cat "$WORK/flood.out"; tail -20 "$WORK/job.out"; fail=1
    else
        echo "PASS hb-foreign run $run: $(cat "$WORK/flood.out" | sed 's/^hb_foreign.py: //'), no harm $((SECONDS - t0))s"
    fi
done
exit $fail
