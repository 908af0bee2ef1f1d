#!/usr/bin/env bash
# ULFM's API tests (ICLDisco/ulfm-testing api/, unmodified) over failstop,
# each judged by the criterion ULFM's own api/run_tests.sh applies to its
# output, at 4 ranks.  Sources come from a checkout (FS_ULFM_REPO: a git
# directory or work tree; the tool library's `fetch` gives one); compiled as
# written with failstop.h force-included.  Not in `make test`: CI has no
# copy.  Left out, with the reason printed: init_errh_info (mpiexec
# --initial-errhandler, an Open MPI 5 launcher option) and the
# "--with-ft no" run of bindings (failstop is always fault-tolerant);
# err_returnsf (Fortran); revshrinkkillrecover (run_tests.sh does not run
# it: it loops forever by design).
#
#   bash tests/ftsuites/ulfm_api.sh BUILD_DIR      (make ft-ulfm)
#
# Environment: FS_ULFM_REPO (default /work/.mirror/ICLDisco+ulfm-testing/repo),
# FS_FT_FILTER (regex on the program name), FS_FT_TIMEOUT (120 s; err_handler
# sleeps 45 s by design), FS_FT_OPTS (more failstop-run options).
set -u -o pipefail

die() { echo "ulfm_api.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
BUILD=$(cd "$1" && pwd) || die "no build directory $1"
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
REPO=${FS_ULFM_REPO:-/work/.mirror/ICLDisco+ulfm-testing/repo}
FILTER=${FS_FT_FILTER:-.} LIMIT=${FS_FT_TIMEOUT:-120} NP=4
GIT="git -C $REPO"
[ -d "$REPO/.git" ] || GIT="git --git-dir=$REPO"
$GIT rev-parse -q --verify HEAD >/dev/null || die "no ulfm-testing checkout at $REPO (set FS_ULFM_REPO)"

work=$BUILD/ftsuites/ulfm
rm -rf "$work" && mkdir -p "$work"
$GIT archive HEAD api | tar x -C "$work" || die "cannot export api/"
echo "ULFM api tests from $($GIT rev-parse --short HEAD), over failstop ($(git -C "$TOP" rev-parse --short HEAD))"
echo "SKIP ulfm-api init_errh_info: mpiexec --initial-errhandler is an Open MPI 5 launcher option"
echo "SKIP ulfm-api bindings (--with-ft no): failstop is always fault-tolerant"
echo "SKIP ulfm-api err_returnsf: Fortran"
echo "SKIP ulfm-api revshrinkkillrecover: not in api/run_tests.sh (an endless kill-shrink-spawn loop, no verdict)"

# name  awk program judging the output (exit 0: pass), as api/run_tests.sh
tests=(
  "bindings|BEGIN{m=0} /NOT COMPLIANT/{m++} END{exit m != 0}"
  "err_returns|BEGIN{m=0} /TEST PASSED/{m++} END{exit m == 0}"
  "err_handler|BEGIN{m=0} /TEST PASSED/{m++} END{exit m == 0}"
  "err_any|BEGIN{m=0} /TEST PASSED/{m++} END{exit m == 0}"
  "err_insulation|BEGIN{m=0} /TEST FAILED/{m++} END{exit m > 0}"
  "getack|BEGIN{m=0} /TEST FAILED/{m++} END{exit m > 0}"
  "revoke|"
  "revshrink|BEGIN{m=0} /COMPLIANT @ repeat 99/{m++} END{exit m == 0}"
  "revshrinkkill|BEGIN{k=0; f=0} /Finalizing/{f++} /Killing Self/{k++} END{exit (f != 1 || k != $((NP - 1)))}"
  "buddycr|BEGIN{m=0} /starting bcast 5/{m++} END{exit m == 0}"
  "shrink|"
)
pass=0 fail=0 failed=""
for t in "${tests[@]}"; do
    prog=${t%%|*} judge=${t#*|}
    [[ $prog =~ $FILTER ]] || continue
    log=$work/$prog.log
    if ! mpicc -g -include "$TOP/include/failstop.h" -o "$work/$prog" "$work/api/$prog.c" \
            -L"$BUILD/lib" -Wl,-rpath,"$BUILD/lib" -lfailstop -lm > "$log" 2>&1; then
        echo "FAIL ulfm-api $prog: does not compile"; tail -5 "$log" | sed 's/^/    /'
        fail=$((fail + 1)) failed="$failed $prog"; continue
    fi
    t0=$SECONDS rc=0
    (cd "$work" && timeout -k 5 "$LIMIT" "$BUILD/bin/failstop-run" --oversubscribe \
        --allow-run-as-root ${FS_FT_OPTS:-} -np $NP "./$prog") < /dev/null > "$log.out" 2>&1 || rc=$?
    cat "$log.out" >> "$log"
    ok=0
    # a run that reached the limit failed; otherwise ULFM's criterion (the
    # exit status only where run_tests.sh has no other: failstop-run's is
    # non-zero whenever a rank died, as these tests' victims do)
    if [ $((SECONDS - t0)) -ge "$LIMIT" ]; then ok=0
    elif [ -z "$judge" ]; then [ $rc -eq 0 ] && ok=1
    elif awk "$judge" "$log.out"; then ok=1; fi
    if [ $ok -eq 1 ]; then
        echo "PASS ulfm-api $prog np=$NP $((SECONDS - t0))s"; pass=$((pass + 1))
    else
        echo "FAIL ulfm-api $prog np=$NP rc=$rc $((SECONDS - t0))s"; tail -8 "$log" | sed 's/^/    /'
        fail=$((fail + 1)) failed="$failed $prog"
    fi
done
echo "SUMMARY ulfm-api: $pass passed, $fail failed${failed:+ (}${failed# }${failed:+)}"
[ "$fail" -eq 0 ]
