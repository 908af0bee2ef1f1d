#!/usr/bin/env bash
# MPICH's fault-tolerance tests (test/mpi/ft, 22 programs), unmodified, over
# failstop.  Not in `make test`: the suite's tarball in ../shared/third_party
# leaves ft/ out, so the sources come from a checkout of pmodels/mpich
# (FS_MPICH_REPO: a git directory or work tree; the tool library's `fetch`
# gives one).  Each program is compiled as written with failstop.h
# force-included (the MPIX_ names) against the MPICH test utilities the
# conformance build made (`make conformance` first), and run under
# failstop-run at its testlist rank count with a hard limit; it passes as
# its testlist says: " No Errors" printed (any case) (TestStatusNoErrors), or a
# non-zero exit (TestStatus: abort).  MPICH's own expected failures
# (xfail=) are reported, not excused.
#
#   bash tests/ftsuites/mpich_ft.sh BUILD_DIR      (make ft-mpich)
#
# Environment: FS_MPICH_REPO (default /work/.mirror/pmodels+mpich/repo),
# FS_FT_FILTER (regex on the program name), FS_FT_TIMEOUT (60 s),
# FS_FT_OPTS (more failstop-run options).  Per-program options this script
# adds: anysource expects ULFM's pending rule (pml_failstop_anysource_pending=1).
set -u -o pipefail

die() { echo "mpich_ft.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
BUILD=$(cd "$1" && pwd) || die "no build directory $1"
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
REPO=${FS_MPICH_REPO:-/work/.mirror/pmodels+mpich/repo}
FILTER=${FS_FT_FILTER:-.} LIMIT=${FS_FT_TIMEOUT:-60}
CONF=$BUILD/conformance
[ -f "$CONF/obj/util/.libs/libmtest.a" ] || die "no MPICH test utilities: run make conformance first"
GIT="git -C $REPO"
[ -d "$REPO/.git" ] || GIT="git --git-dir=$REPO"
$GIT rev-parse -q --verify HEAD >/dev/null || die "no MPICH checkout at $REPO (set FS_MPICH_REPO)"

work=$BUILD/ftsuites/mpich
rm -rf "$work" && mkdir -p "$work"
$GIT archive HEAD test/mpi/ft | tar x -C "$work" || die "cannot export test/mpi/ft"
src=$work/test/mpi/ft
echo "MPICH ft tests from $($GIT rev-parse --short HEAD), over failstop ($(git -C "$TOP" rev-parse --short HEAD))"

pass=0 fail=0 failed=""
while read -r prog np rest; do
    case $prog in ''|\#*) continue ;; esac
    [[ $prog =~ $FILTER ]] || continue
    opts=() want=noerrors
    [[ $rest == *"resultTest=TestStatus "* || $rest == *"resultTest=TestStatus" ]] && want=status
    [ "$prog" = anysource ] && opts=(--mca pml_failstop_anysource_pending 1)
    log=$work/$prog.log
    if ! mpicc -g -O1 -include "$TOP/include/failstop.h" -I"$CONF/src/test/mpi/include" \
            -I"$CONF/obj/include" -o "$work/$prog" "$src/$prog.c" \
            "$CONF/obj/util/.libs/libmtest.a" "$CONF/obj/util/.libs/libmtest_single.a" -L"$BUILD/lib" -Wl,-rpath,"$BUILD/lib" \
            -lfailstop > "$log" 2>&1; then
        echo "FAIL mpich-ft $prog: does not compile"; tail -5 "$log"
        fail=$((fail + 1)) failed="$failed $prog"; continue
    fi
    t0=$SECONDS rc=0
    (cd "$work" && timeout -k 5 "$LIMIT" "$BUILD/bin/failstop-run" --oversubscribe \
        --allow-run-as-root "${opts[@]}" ${FS_FT_OPTS:-} -np "$np" "./$prog") < /dev/null >> "$log" 2>&1 || rc=$?
    ok=0
    if [ "$want" = status ]; then [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && ok=1
    else grep -qi "^ No Errors" "$log" && ok=1; fi
    note=""; [[ $rest == *xfail=* ]] && note=" (MPICH marks it xfail)"
    if [ $ok -eq 1 ]; then
        echo "PASS mpich-ft $prog np=$np $((SECONDS - t0))s$note"; pass=$((pass + 1))
    else
        echo "FAIL mpich-ft $prog np=$np rc=$rc $((SECONDS - t0))s$note"; tail -8 "$log" | sed 's/^/    /'
        fail=$((fail + 1)) failed="$failed $prog"
    fi
done < "$src/testlist"
echo "SUMMARY mpich-ft: $pass passed, $fail failed${failed:+ (}${failed# }${failed:+)}"
[ "$fail" -eq 0 ]
