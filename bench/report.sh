#!/usr/bin/env bash
# Turns the raw numbers bench/run.sh left in OUT_DIR/perf into summaries,
# plots and the generated section of OUT_DIR/PERFORMANCE.md. Rerunnable on
# its own (bash bench/report.sh docs) to regenerate without re-measuring.
#
# Reads  perf/tests.txt perf/meta.tsv perf/runs.tsv perf/<test>.tsv
# Writes perf/<test>_summary.tsv perf/{latency,bandwidth,bibw}.png and the
# text between <!-- bench:begin --> and <!-- bench:end --> in PERFORMANCE.md
# (text outside the markers is kept; the file is created when absent).
set -euo pipefail

die() { echo "bench: $*" >&2; exit 1; }
[ $# -eq 1 ] || die "usage: bash bench/report.sh OUT_DIR"
OUT=$1
PERF=$OUT/perf
MD=$OUT/PERFORMANCE.md
CFGS="failstop ucx ob1"  # column order everywhere
BEGIN_MARK='<!-- bench:begin -->'
END_MARK='<!-- bench:end -->'
for f in tests.txt meta.tsv runs.tsv; do
    [ -f "$PERF/$f" ] || die "$PERF/$f missing: run bench/run.sh first"
done

meta() { awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$PERF/meta.tsv" | paste -sd';'; }

# Raw "round config size value" -> one row per size with, per config in
# CFGS order: median min max n ("-" where a config has no value).
summarize() {
    awk -F'\t' -v cfgs="$CFGS" '
    function isort(a, n,    i, j, t) {
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    }
    /^#/ || NF < 4 { next }
    {
        k = $3 SUBSEP $2
        v[k, ++n[k]] = $4 + 0
        if (!($3 in seen)) { seen[$3] = 1; sizes[++ns] = $3 + 0 }
    }
    END {
        nc = split(cfgs, c, " ")
        isort(sizes, ns)
        print "# size\t" cfgs " (each: median min max n)"
        for (i = 1; i <= ns; i++) {
            line = sizes[i]
            for (j = 1; j <= nc; j++) {
                k = sizes[i] SUBSEP c[j]
                m = n[k] + 0
                if (m == 0) { line = line "\t-\t-\t-\t0"; continue }
                delete a
                for (x = 1; x <= m; x++) a[x] = v[k, x]
                isort(a, m)
                med = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
                line = line "\t" med "\t" a[1] "\t" a[m] "\t" m
            }
            print line
        }
    }' "$1"
}

# Markdown table for one test from its summary. Latency-like tests are
# "lower is better"; a cell with fewer values than rounds says how many.
md_table() {
    local key=$1 unit=$2 fmt=$3
    awk -F'\t' -v cfgs="$CFGS" -v fmt="$fmt" -v rounds="$(meta rounds)" \
        -v active=" $(meta active) " -v unit="$unit" '
    function human(s) {
        if (s < 1024) return s " B"
        if (s < 1048576) return s / 1024 " KiB"
        return s / 1048576 " MiB"
    }
    function cell(j, r) {
        if (index(active, " " c[j] " ") == 0) return "—"
        if (r[4 * j + 1] == 0) return "fail"
        s = sprintf(fmt, r[4 * j - 2])
        return r[4 * j + 1] < rounds + 0 ? s " (" r[4 * j + 1] "/" rounds ")" : s
    }
    function ratio(r, a, b) {
        if (r[4 * a + 1] == 0 || r[4 * b + 1] == 0 || r[4 * b - 2] == 0) return "—"
        return sprintf("%.2f", r[4 * a - 2] / r[4 * b - 2])
    }
    BEGIN {
        nc = split(cfgs, c, " ")
        print "| size | failstop | pml ucx | ob1 | failstop/ucx | failstop/ob1 |"
        print "|---:|---:|---:|---:|---:|---:|"
    }
    /^#/ { next }
    {
        split($0, r, "\t")
        printf "| %s | %s | %s | %s | %s | %s |\n", human($1), cell(1, r), cell(2, r),
            cell(3, r), ratio(r, 1, 2), ratio(r, 1, 3)
    }' "$PERF/${key}_summary.tsv"
}

# Prints "failstop ucx" value pair at one size of a summary ("-" if none).
pair_at() {
    awk -F'\t' -v s="$2" '$1 == s { f = $2; u = $6 } END { print (f == "" ? "-" : f), (u == "" ? "-" : u) }' \
        "$PERF/$1_summary.tsv" 2>/dev/null || echo "- -"
}

# Per-round failstop/ucx ratios at one size: "median min max" ("- - -" if
# none). Configs of a round ran back to back, so pairing them by round
# cancels most of the drift the ratio of medians still carries.
paired_ratio() {
    awk -F'\t' -v s="$2" '
    !/^#/ && $3 == s { v[$1 "/" $2] = $4; r[$1] = 1 }
    END {
        for (k in r)
            if ((k "/failstop") in v && v[k "/ucx"] > 0) a[++n] = v[k "/failstop"] / v[k "/ucx"]
        if (!n) { print "- - -"; exit }
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        print (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2), a[1], a[n]
    }' "$PERF/$1.tsv" 2>/dev/null || echo "- - -"
}

goal_row() {
    local label=$1 key=$2 size=$3 op=$4 target=$5 fmt=$6 f u pm plo phi
    read -r f u <<<"$(pair_at "$key" "$size")"
    read -r pm plo phi <<<"$(paired_ratio "$key" "$size")"
    awk -v l="$label" -v f="$f" -v u="$u" -v op="$op" -v t="$target" -v fmt="$fmt" \
        -v pm="$pm" -v plo="$plo" -v phi="$phi" '
    function show(x) { return x == "-" ? "—" : sprintf(fmt, x) }
    BEGIN {
        p = pm == "-" ? "—" : sprintf("%.2f [%.2f–%.2f]", pm, plo, phi)
        if (f == "-" || u == "-" || u + 0 == 0) {
            printf "| %s | %s | %s | — | %s | %s %s | NOT met (no data) |\n", l, show(f), show(u),
                p, op, t
            exit
        }
        r = f / u
        ok = (op == "≤") ? (r <= t + 0) : (r >= t + 0)
        printf "| %s | %s | %s | %.2f | %s | %s %s | %s |\n", l, show(f), show(u), r, p, op, t,
            ok ? "met" : "**NOT met**"
    }'
}

goals() {
    echo "### Goals"
    echo
    echo "Status uses the ratio of the medians below; the per-round column pairs"
    echo "failstop with the pml ucx run right next to it in the same round"
    echo "(median [min–max] over rounds) and shows how much of a miss is noise."
    echo
    echo "| goal | failstop | pml ucx | ratio failstop/ucx | per-round ratio | target | status |"
    echo "|---|---:|---:|---:|---:|---:|---|"
    goal_row "8 B latency, µs (lower is better)" latency 8 "≤" 1.10 %.3f
    goal_row "1 MiB bandwidth, MB/s" bw 1048576 "≥" 1.00 %.0f
    goal_row "4 MiB bandwidth, MB/s" bw 4194304 "≥" 1.00 %.0f
    echo
}

# key|title|unit|printf format|which way is better
test_info() {
    case $1 in
    latency) echo "Latency, shared memory, 2 ranks|µs one-way|%.3f|lower" ;;
    bw) echo "Bandwidth, shared memory, 2 ranks, window 64|MB/s (10^6 B/s)|%.0f|higher" ;;
    bibw) echo "Bidirectional bandwidth, shared memory, 2 ranks, window 64|MB/s, both directions summed|%.0f|higher" ;;
    mr) echo "Message rate, 4 ranks (2 pairs) on 2 cores, oversubscribed, window 64|messages/s, aggregate|%.0f|higher" ;;
    latency_tcp) echo "Latency over TCP (loopback host), 2 ranks|µs one-way|%.2f|lower" ;;
    bw_tcp) echo "Bandwidth over TCP (loopback host), 2 ranks, window 64|MB/s (10^6 B/s)|%.0f|higher" ;;
    *) echo "$1|value|%g|higher" ;;
    esac
}

tables() {
    local key title unit fmt better
    while read -r key; do
        [ -f "$PERF/${key}_summary.tsv" ] || continue
        IFS='|' read -r title unit fmt better <<<"$(test_info "$key")"
        echo "### $title"
        echo
        echo "Median over rounds, $unit, **$better is better**; ratios are failstop's" \
             "median over the other's, so a ratio $([ "$better" = lower ] && echo '< 1.00' || echo '> 1.00')" \
             "favours failstop. Raw: [perf/$key.tsv](perf/$key.tsv)," \
             "min/max: [perf/${key}_summary.tsv](perf/${key}_summary.tsv)."
        echo
        md_table "$key" "$unit" "$fmt"
        echo
    done <"$PERF/tests.txt"
}

failures() {
    local bad
    bad=$(awk -F'\t' '!/^#/ && $4 != "ok"' "$PERF/runs.tsv")
    echo "### Failed runs"
    echo
    if [ -z "$bad" ]; then
        echo "None: all $(grep -vc '^#' "$PERF/runs.tsv") runs completed."
    else
        echo "| round | test | config | status | log |"
        echo "|---:|---|---|---|---|"
        printf '%s\n' "$bad" | awk -F'\t' '{ printf "| %s | %s | %s | %s | `%s.err` |\n", $1, $2, $3, $4, $6 }'
    fi
    echo
}

# 1-minute load before each run: min/median/max. The benchmark itself adds
# about 2 itself (4 for mr), so above nproc + 1 someone else was running.
load_note() {
    awk -F'\t' -v np="$(meta nproc)" '
    !/^#/ && $7 != "" { a[++n] = $7 + 0 }
    END {
        if (!n) { print "per-run load not recorded"; exit }
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        for (i = 1; i <= n; i++) busy += a[i] > np + 1
        printf "before each run min %.2f / median %.2f / max %.2f", a[1], a[int((n + 1) / 2)], a[n]
        if (busy) printf " (**%d of %d runs started above %d: machine busy, treat with care**)", busy, n, np + 1
    }' "$PERF/runs.tsv"
}

machine() {
    local s
    echo "Generated by \`bench/run.sh\` on $(meta date); do not edit between the markers."
    echo
    echo "| | |"
    echo "|---|---|"
    echo "| CPU | $(meta cpu), $(meta nproc) cores (nproc) |"
    echo "| kernel | $(meta kernel) |"
    echo "| Open MPI | $(meta openmpi) |"
    echo "| UCX | $(meta ucx) |"
    echo "| rounds | $(meta rounds)$([ "$(meta quick)" = 1 ] && echo ' (quick smoke run: few sizes)'), configs interleaved round-robin |"
    echo "| wall time | $(meta wall) s |"
    echo "| load average | $(meta load_start) at start, $(meta load_end) at end; $(load_note) |"
    echo "| UCX_*/OMPI_MCA_* in environment | $(meta env) |"
    echo
    s=$(meta skipped)
    [ -n "$s" ] && { echo "**Skipped:** $s."; echo; }
    cat <<'EOF'
Configurations: `failstop` = `failstop-run` (pml failstop over UCX);
`ucx` = `mpirun --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any`;
`ob1` = `mpirun --mca pml ob1 --mca btl vader,self` (`tcp,self` for the TCP
tests). TCP runs set `UCX_TLS=tcp` (failstop) / `UCX_TLS=tcp,self` (ucx).
2-rank tests use `--bind-to core`; the 4-rank message rate uses
`--oversubscribe --bind-to none`. Each value is the median over rounds of one
`bench/fs_bench` run (OSU-style methodology, payload verified once per size
outside the timed loop); min/max are in the summary TSVs and the plot error bars.

EOF
}

# True when the summary holds any value for config number $2 (1-based).
has_data() {
    [ -f "$PERF/$1_summary.tsv" ] &&
        awk -F'\t' -v col=$((4 * $2 + 1)) '!/^#/ && $col > 0 { f = 1 } END { exit !f }' \
            "$PERF/$1_summary.tsv"
}

# One gnuplot clause per (test, config) with data: median line, min/max bars.
plot_clauses() {
    local dash=$1 label=$2 key=$3 i=0 c colors=("#d62728" "#1f77b4" "#2ca02c") nudge=(0.92 1 1.08)
    for c in $CFGS; do
        i=$((i + 1))
        has_data "$key" "$i" || continue
        # configs are nudged sideways (x0.92, x1, x1.08) so error bars stay apart
        printf "'%s' using (\$1 > 0 ? \$1 * %s : 1/0):%d:%d:%d with yerrorlines lw 2 pt 7 ps 0.6 lc rgb '%s' dt %d title '%s%s', " \
            "$PERF/${key}_summary.tsv" "${nudge[$((i - 1))]}" $((4 * i - 2)) $((4 * i - 1)) $((4 * i)) \
            "${colors[$((i - 1))]}" "$dash" "$c" "$label"
    done
}

plot() {
    local png=$1 ylabel=$2 clauses=$3 where=$4
    [ -n "$clauses" ] || return 0
    gnuplot <<EOF
set terminal pngcairo size 900,560 font ",10"
set output '$PERF/$png'
set datafile separator "\t"
set datafile missing "-"
set logscale xy
set xrange [0.7:6e6]
set xtics ("1" 1, "4" 4, "16" 16, "64" 64, "256" 256, "1K" 1024, "4K" 4096, \
    "16K" 16384, "64K" 65536, "256K" 262144, "1M" 1048576, "4M" 4194304)
set xlabel "message size (bytes)"
set ylabel "$ylabel"
set grid
set key $where
plot ${clauses%, }
EOF
}

plots() {
    command -v gnuplot >/dev/null || { echo "bench: gnuplot missing, no plots" >&2; return 0; }
    plot latency.png "one-way latency (µs), lower is better" \
        "$(plot_clauses 1 ' shm' latency; plot_clauses 2 ' tcp' latency_tcp)" "top left"
    plot bandwidth.png "bandwidth (MB/s), higher is better" \
        "$(plot_clauses 1 ' shm' bw; plot_clauses 2 ' tcp' bw_tcp)" "bottom right"
    plot bibw.png "bidirectional bandwidth (MB/s), higher is better" \
        "$(plot_clauses 1 ' shm' bibw)" "bottom right"
}

section() {
    echo "$BEGIN_MARK"
    echo "## Measured results"
    echo
    machine
    goals
    for p in latency bandwidth bibw; do
        [ -f "$PERF/$p.png" ] && echo "![$p](perf/$p.png)" && echo
    done
    tables
    failures
    echo "$END_MARK"
}

# Replaces the marked section, keeping hand-written text around it.
splice() {
    local new=$1
    if [ ! -f "$MD" ]; then
        { echo "# failstop performance"; echo
          echo "Failure-free comparison against Open MPI's own PMLs; regenerate with"
          echo "\`make bench\` or \`bash bench/run.sh BUILD_DIR\`. Analysis goes outside the"
          echo "markers below, which \`bench/report.sh\` overwrites."; echo
          cat "$new"; } >"$MD"
    elif grep -qF "$BEGIN_MARK" "$MD" && grep -qF "$END_MARK" "$MD"; then
        awk -v b="$BEGIN_MARK" -v e="$END_MARK" -v f="$new" '
            $0 == b { while ((getline l < f) > 0) print l; skip = 1; next }
            $0 == e { skip = 0; next }
            !skip' "$MD" >"$MD.tmp" && mv "$MD.tmp" "$MD"
    else
        { echo; cat "$new"; } >>"$MD"
    fi
}

main() {
    local key new
    while read -r key; do
        [ -f "$PERF/$key.tsv" ] && summarize "$PERF/$key.tsv" >"$PERF/${key}_summary.tsv"
    done <"$PERF/tests.txt"
    rm -f "$PERF"/{latency,bandwidth,bibw}.png
    plots
    new=$(mktemp)
    section >"$new"
    splice "$new"
    rm -f "$new"
}

main
