#!/usr/bin/env bash
# failstop-validate, a short run, and its report's facts against the runs.
#
#   bash tests/tools/test_validate.sh BUILD_DIR [FABRICS]
#
# 1. failstop-validate over FABRICS (default ucx:shm), 1 repetition of every
#    scenario and a 15 s soak, 3 ranks, under a hard time limit; runs may
#    take 12 s (--timeout), shorter than the soak, whose limit has to start
#    after it (a 1-minute soak once always counted as a hang).
# 2. The report against the raw data, recomputed here independently:
#    every scenario of every fabric present; no run hung; each survivor's
#    probe line says MPI_ERR_RANK_FAIL_STOP and intact messages, or the
#    verdict is FAIL; each run's failstop-run --report JSON parses and
#    names the victim as the failure, with every survivor having learned of
#    it, its time no later than the first survivor's error; index.html has
#    an inline plot per fabric and report.md every table; each fabric names
#    the transport/device its ranks used.
# 3. The verdict rules against planted faults in a copy of the raw data
#    (the report writer rerun on it): a wrong class, a survivor that printed
#    nothing, a run that hung, a false alarm in the soak each make the
#    verdict FAIL with the reason named; deaths found only by the heartbeat
#    make it WARN.  Each plant is checked to have changed the data, so a
#    plant that misses cannot pass silently.
set -uo pipefail

build=$(cd "${1:?usage: test_validate.sh BUILD_DIR [FABRICS]}" && pwd)
fabrics=${2:-ucx:shm}
tmp=$(mktemp -d /tmp/fs-validate.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() {  # WHAT CONDITION...
    local what=$1; shift
    if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}

# ---- 1. the run -----------------------------------------------------------------
out=$tmp/report
timeout -k 10 600 "$build/bin/failstop-validate" --fabric "$fabrics" --reps 1 --soak 0.25 \
    --timeout 12 --out "$out" > "$tmp/log" 2>&1
rc=$?
check "failstop-validate ended by itself (status $rc, not the time limit)" [ $rc -ne 124 ] && [ $rc -ne 137 ]
check "it passed or warned (status $rc)" [ $rc -eq 0 ]
[ $rc -eq 0 ] || tail -20 "$tmp/log"
raw=$out/raw

# ---- 2. the report's facts against the runs --------------------------------------
scens="idle eager rndv-in rndv-out coll wildcard stop exit early soak"
IFS=, read -ra fablist <<< "$fabrics"
for f in "${fablist[@]}"; do
    for s in $scens; do
        check "$f $s: one run, in summary.tsv" \
            awk -F'\t' -v f="$f" -v s="$s" '$1 == f && $2 == s && $3 == 1 { ok = 1 } END { exit !ok }' "$raw/summary.tsv"
    done
    check "$f: a verdict" grep -q "^$f"$'\t' "$raw/verdicts.tsv"
    check "$f: its detection plot inline in index.html" grep -q "Detection latency over $f" "$out/index.html"
    check "$f: what its ranks' traffic went over (devices.tsv, from the ranks' records)" \
        awk -F'\t' -v f="$f" '$1 == f && $3 ~ /.\/./ { ok = 1 } END { exit !ok }' "$raw/devices.tsv"
done
check "no run hung (runs.tsv)" awk -F'\t' '$8 != 0 { bad = 1 } END { exit bad }' "$raw/runs.tsv"
check "index.html holds SVG plots (no external file needed)" grep -q '<svg' "$out/index.html"
for t in "Verdicts" "Per scenario" "Error classes" "Who found each death" "Topology"; do
    check "report.md has its '$t' section" grep -q "^## $t" "$out/report.md"
done
all_right() {
    awk -F'\t' '($4 == "soak" && $7 != "success") || ($4 != "soak" && ($7 != "failstop" ||
                $8 != "MPI_ERR_RANK_FAIL_STOP" || $12 != "ok" || $13 != "ok" || $14 == "bad")) { bad = 1 }
                END { exit bad }' "$raw/probe.tsv"
}
lines_complete() {   # every run: np-1 survivor lines (soak: np)
    awk -F'\t' 'FILENAME ~ /runs/ { want[$1, $2, $3] = ($2 == "soak") ? $4 : $4 - 1; next }
                { got[$1, $2, $3]++ }
                END { for (k in want) if (got[k] != want[k]) exit 1 }' "$raw/runs.tsv" "$raw/probe.tsv"
}
# the run passed (above): that must be what the raw data says
check "every survivor got MPI_ERR_RANK_FAIL_STOP with intact messages (probe.tsv)" all_right
check "every run has every survivor's line" lines_complete
json_facts() {   # every fault run's JSON: the victim failed, all survivors learned, in order
    python3 - "$raw/runs" <<'PY'
import json, os, sys
d = sys.argv[1]
for name in sorted(os.listdir(d)):
    if not name.endswith('.json'):
        continue
    r = json.load(open(os.path.join(d, name)))
    victim = r['size'] - 1
    if '_soak_' in name:
        assert r['failures'] == [], (name, 'a failure in the soak')
        continue
    f = [x for x in r['failures'] if x['rank'] == victim]
    assert len(f) == 1 and len(r['failures']) == 1, (name, 'not exactly the victim failed')
    f = f[0]
    assert f['knew'] == f['survivors'] == victim, (name, 'not every survivor learned')
    assert f['first_know_ms'] is not None and f['all_know_ms'] >= f['first_know_ms'] >= 0, name
    assert len(f['learned']) == victim, name
    assert r['exit_status'] == 0, (name, 'exit status', r['exit_status'])
PY
}
check "each run's failstop-run --report: the victim failed, every survivor learned, times ordered" json_facts

# ---- 3. the verdict rules against planted faults ----------------------------------
writer=$build/libexec/failstop/failstop-validate-report
f1=${fablist[0]}
plant() {  # NAME AWK-PROGRAM FILE: a copy of the report with FILE rewritten
    local name=$1 prog=$2 file=$3
    rm -rf "$tmp/$name"; cp -r "$out" "$tmp/$name"
    awk -F'\t' -v OFS='\t' -v f="$f1" "$prog" "$out/raw/$file" > "$tmp/$name/raw/$file"
    if cmp -s "$out/raw/$file" "$tmp/$name/raw/$file"; then
        echo "FAIL: plant $name changed nothing"; fails=$((fails + 1)); return 1
    fi
    "$writer" "$tmp/$name" > /dev/null 2>&1
    return 0
}
verdict_is() {  # NAME VERDICT [REASON-TEXT]
    awk -F'\t' -v f="$f1" -v v="$2" -v why="${3:-}" '$1 == f && $2 == v && index($3, why) { ok = 1 }
        END { exit !ok }' "$tmp/$1/raw/verdicts.tsv"
}
plant wrongclass '$1 == f && $2 == "eager" && !done { $7 = "error"; $8 = "MPI_ERR_INTERN"; done = 1 } 1' probe.tsv &&
    check "plant: a survivor got MPI_ERR_INTERN -> FAIL naming it" verdict_is wrongclass FAIL "MPI_ERR_INTERN"
plant silent '$1 == f && $2 == "rndv-in" && !done { done = 1; next } 1' probe.tsv &&
    check "plant: a survivor printed nothing -> FAIL (crashed or lost)" verdict_is silent FAIL "printed nothing"
plant hung '$1 == f && $2 == "coll" { $8 = 1 } 1' runs.tsv &&
    check "plant: a run outlived its limit -> FAIL (hang)" verdict_is hung FAIL "hang"
plant falsealarm '$1 == f && $2 == "soak" && !done { $7 = "error"; $8 = "MPI_ERR_RANK_FAIL_STOP"; done = 1 } 1' probe.tsv &&
    check "plant: an error in the soak -> FAIL (false alarm)" verdict_is falsealarm FAIL "false alarm"
plant corrupt '$1 == f && $2 == "eager" && !done { $13 = "bad"; done = 1 } 1' probe.tsv &&
    check "plant: corrupt messages from the victim -> FAIL" verdict_is corrupt FAIL "corrupt"
plant heartbeat_only '$1 == f && $4 == "learned" { $8 = "detector"; $9 = "heartbeat" } 1' facts.tsv &&
    check "plant: every death found only by the heartbeat -> WARN" verdict_is heartbeat_only WARN "found by the failure detector"

# the known-limitations note: only for a fabric tested, and only one with a note
check "no known-limitations note for $f1" bash -c "! grep -q 'Known limitations' '$out/report.md'"
rm -rf "$tmp/asshm"; cp -r "$out" "$tmp/asshm"
for t in "$tmp/asshm"/raw/*.tsv; do sed -i "s/^$f1\t/ofi:shm\t/" "$t"; done
"$writer" "$tmp/asshm" > /dev/null 2>&1
check "the same runs as ofi:shm: its known limitation beside the verdict (report.md)" \
    grep -q '^| ofi:shm | libfabric shm is not safe' "$tmp/asshm/report.md"
check "the same in index.html" grep -q '<td>libfabric shm is not safe' "$tmp/asshm/index.html"

[ $fails -eq 0 ] && echo "test_validate: all passed" || echo "test_validate: $fails failed"
exit $((fails != 0))
