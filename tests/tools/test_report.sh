#!/usr/bin/env bash
# failstop-report (failstop-run --report) on status directories made here,
# no MPI:
#   crash     rank 2 killed (fault.2), ranks 0 and 1 learned at +5 and
#             +9 ms: one failure, both survivors knew, first/all know
#             5 and 9 ms, the first error after the fault, valid JSON
#   partition ranks 2 and 3 cut off (fault records), and before ending they
#             learned that 0 and 1 had failed: the failures are 2 and 3
#             only, with 0 and 1 as their survivors
#   nofault   no fault record (a program that crashed by itself): rank 1
#             is a failure because rank 0 learned it
#   empty     a directory without records: an empty report, not an error
#
# Every case runs under mawk (Debian's awk) and gawk (RHEL's and Fedora's),
# each put first in PATH as awk: gawk 5.2 once aborted on the partition case.
#
#   bash tests/tools/test_report.sh BUILD_DIR
set -uo pipefail

build=$(cd "${1:?usage: test_report.sh BUILD_DIR}" && pwd)
if [ -z "${FS_REPORT_AWK:-}" ]; then
    rc=0
    for a in mawk gawk; do
        if ! command -v "$a" >/dev/null; then
            echo "FAIL report under $a: $a is not installed (make deps)"; rc=1; continue
        fi
        shim=$(mktemp -d /tmp/fs-awk.XXXXXX)
        ln -s "$(command -v "$a")" "$shim/awk"
        echo "test_report.sh: awk is $a"
        PATH=$shim:$PATH FS_REPORT_AWK=$a bash "$0" "$build" || rc=1
        rm -rf "$shim"
    done
    exit $rc
fi
report=$build/libexec/failstop/failstop-report
tmp=$(mktemp -d /tmp/fs-report.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() {  # WHAT CONDITION...
    local what=$1; shift
    if "$@"; then echo "PASS report $what"; else echo "FAIL report $what"; fails=$((fails + 1)); fi
}
rec() { printf '%s\n' "$3" > "$tmp/$1/$2"; }   # CASE FILE TEXT
tsv() { "$report" --tsv "$tmp/$1" 0 0 prog; }
# failure row of V: "V FAULT SURVIVORS KNEW FIRST ALL FIRST-ERROR"
failure_is() {  # CASE V WANT
    [ "$(tsv "$1" | awk -F'\t' -v v="$2" '$1 == "failure" && $2 == v { print $2, $3, $5, $6, $7, $8, $9 }')" = "$3" ]
}
failures_are() {  # CASE "V..."
    [ "$(tsv "$1" | awk -F'\t' '$1 == "failure" { s = s (s == "" ? "" : " ") $2 } END { print s }')" = "$2" ]
}

mkdir -p "$tmp/crash" "$tmp/partition" "$tmp/nofault" "$tmp/empty"
for r in 0 1 2; do rec crash "started.$r" "3 h1"; done
rec crash fault.2 "signal 9 100.000000"
rec crash rank.2 "signal 9 100.001000"
rec crash learned-2.0 "100.005000 transport UCS_ERR_CONNECTION_RESET"
rec crash learned-2.1 "100.009000 notice 0"
rec crash errored.1 "100.009500 peer process failed (fail-stop) 93"
rec crash rank.0 "exit 0 101.000000"
rec crash rank.1 "exit 0 101.000000"
check "crash: one failure, both survivors knew in 5 and 9 ms, first error 9.5 ms" \
    failure_is crash 2 "2 signal_9 2 2 5.000 9.000 9.500"
check "crash: how each learned" \
    bash -c '[ "$("$0" --tsv "$1" 0 0 p | awk -F"\t" "\$1 == \"learned\" { print \$3, \$5, \$6 }" | sort | tr "\n" ,)" = "0 transport UCS_ERR_CONNECTION_RESET,1 notice 0," ]' \
    "$report" "$tmp/crash"
check "crash: the JSON parses and says the same" \
    python3 -c 'import json, sys; d = json.load(sys.stdin); f = d["failures"]
assert d["size"] == 3 and len(f) == 1 and f[0]["rank"] == 2 and f[0]["all_know_ms"] == 9.0, d
assert d["ranks"][1]["first_error"]["mpi_code"] == 93, d' < <("$report" "$tmp/crash" 0 0 prog)

for r in 0 1 2 3; do rec partition "started.$r" "4 h$((r / 2 + 1))"; done
rec partition fault.2 "cut 0 200.000000"
rec partition fault.3 "cut 0 200.000000"
for v in 0 1; do for r in 2 3; do rec partition "learned-$v.$r" "200.500000 detector heartbeat"; done; done
for v in 2 3; do for r in 0 1; do rec partition "learned-$v.$r" "202.500000 detector heartbeat"; done; done
check "partition: the cut-off ranks are the failures, not those they believed failed" \
    failures_are partition "2 3"
check "partition: each with the other side as its survivors" \
    failure_is partition 3 "3 cut_0 2 2 2500.000 2500.000 -"
check "partition: the JSON parses and names the same failures" \
    python3 -c 'import json, sys; d = json.load(sys.stdin)
assert [f["rank"] for f in d["failures"]] == [2, 3] and d["ranks"][0]["host"] == "h1", d' \
    < <("$report" "$tmp/partition" 0 0 prog)

for r in 0 1; do rec nofault "started.$r" "2 h1"; done
rec nofault rank.1 "signal 11 300.000000"
rec nofault learned-1.0 "300.020000 transport UCS_ERR_CONNECTION_RESET"
check "no fault record: a rank learned failed is a failure, timed from its end" \
    failure_is nofault 1 "1 signal_11 1 1 20.000 20.000 -"

check "empty directory: a report with nothing in it" \
    bash -c '"$0" "$1" 0 0 p | python3 -c "import json, sys; d = json.load(sys.stdin); assert d[\"size\"] == 0 and d[\"failures\"] == []"' \
    "$report" "$tmp/empty"

[ $fails -eq 0 ] && echo "test_report.sh ($FS_REPORT_AWK): all passed" || echo "test_report.sh ($FS_REPORT_AWK): $fails failed"
exit $((fails != 0))
