#!/usr/bin/env bash
# Report of bench/osu.sh: from PERF/NAME.tsv (one line per OSU result) writes
# PERF/NAME_summary.tsv (median, min, max per transport, benchmark, ranks,
# size and configuration), PERF/NAME.md and, with gnuplot, PERF/NAME_*.png.
#
#   bash bench/osu_report.sh PERF_DIR
#
# FS_OSU_NAME (osu): file names.  FS_OSU_REF (ucx): the configuration failstop
# is judged against besides ob1 ("cm" for pml cm + mtl ofi: bench-osu-ofi).
# Goals (issue "performance"), shared memory, against pml ucx at each size:
# osu_latency <= 1.10x; osu_bw, osu_bibw >= 0.90x; osu_mbw_mr at 8 B >= 1.0x;
# collectives <= 1.15x.  Stretch: as fast as the faster of pml ucx and ob1.
# Over OFI (issue "OFI transport"): at least as fast as pml cm and ob1 at
# every size (both paired ratios, where the other runs at all).
set -u -o pipefail

PERF=${1:?usage: osu_report.sh PERF_DIR}
NAME=${FS_OSU_NAME:-osu}
REF=${FS_OSU_REF:-ucx}
case $REF in ucx) REF_LABEL="pml ucx" ;; cm) REF_LABEL="pml cm (mtl ofi)" ;; *) REF_LABEL=$REF ;; esac
TSV=$PERF/$NAME.tsv
SUM=$PERF/${NAME}_summary.tsv
[ -s "$TSV" ] || { echo "osu_report.sh: no $TSV" >&2; exit 2; }

# median/min/max per key; the key's columns kept for the tables below
tail -n +2 "$TSV" | sort -t$'\t' -k2,2 -k3,3 -k4,4n -k5,5n -k6,6 -k7,7g |
    awk -F'\t' -v OFS='\t' '
        function flush() { if (n) print key, v[int((n + 1) / 2)], v[1], v[n], n; n = 0 }
        { k = $2 OFS $3 OFS $4 OFS $5 OFS $6 }
        k != key { flush(); key = k }
        { v[++n] = $7 }
        END { flush() }' > "$SUM"

# failstop / other within each round (runs of one round are minutes apart
# at most, so they share the host's state), median over the rounds
PAIRED=$PERF/.${NAME}_paired
tail -n +2 "$TSV" |
    awk -F'\t' -v OFS='\t' -v ref="$REF" '{ v[$1 OFS $2 OFS $3 OFS $4 OFS $5, $6] = $7; k[$2 OFS $3 OFS $4 OFS $5] = 1; r[$1] = 1 }
        END { for (key in k) for (o = 1; o <= 2; o++) {
                  other = (o == 1) ? ref : "ob1"; n = 0
                  for (round in r) {
                      f = v[round OFS key, "failstop"]; x = v[round OFS key, other]
                      if (f > 0 && x > 0) q[++n] = f / x
                  }
                  if (!n) continue
                  for (i = 2; i <= n; i++) { t = q[i]; for (j = i - 1; j >= 1 && q[j] > t; j--) q[j + 1] = q[j]; q[j + 1] = t }
                  print key, other, (n % 2) ? q[(n + 1) / 2] : (q[n / 2] + q[n / 2 + 1]) / 2
              } }' > "$PAIRED"

kind_of() { case $1 in osu_bw|osu_bibw|osu_mbw_mr) echo bw ;; *) echo lat ;; esac; }
goal_of() {   # transport bench -> the goal ratio against REF, or -
    case $1 in
    ofi-*) case $2 in osu_latency|osu_bw|osu_bibw) echo 1.00 ;; *) echo - ;; esac; return ;;
    shm) ;;
    *) echo -; return ;;
    esac
    case $2 in
    osu_latency) echo 1.10 ;; osu_bw|osu_bibw) echo 0.90 ;; osu_mbw_mr) echo 1.00 ;;
    *) echo 1.15 ;;
    esac
}

# One table per (transport, bench, ranks); prints "met total" counts to fd 3.
table() {
    local tr=$1 b=$2 np=$3 kind goal
    kind=$(kind_of "$b") goal=$(goal_of "$tr" "$b")
    echo "### $b, $np ranks, $tr"
    echo
    echo "| bytes | failstop | $REF_LABEL | ob1 | ÷ $REF | ÷ ob1 | ÷ $REF paired | ÷ ob1 paired | goal |"
    echo "|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' -v tr="$tr" -v b="$b" -v np="$np" -v kind="$kind" -v goal="$goal" -v ref="$REF" '
        FILENAME ~ /paired/ { if ($1 == tr && $2 == b && $3 == np) { if ($5 == ref) pr[$4] = $6; else if ($5 == "ob1") po[$4] = $6 }
                              next }
        $1 == tr && $2 == b && $3 == np { m[$4, $5] = $6; lo[$4, $5] = $7; hi[$4, $5] = $8
                                          if (!($4 in seen)) { seen[$4] = 1; sz[++ns] = $4 } }
        function cell(s, c) { return ((s, c) in m) ? sprintf("%s [%s–%s]", m[s, c], lo[s, c], hi[s, c]) : "–" }
        function ratio(s, c) { return (((s, "failstop") in m) && ((s, c) in m) && m[s, c] > 0) ? m[s, "failstop"] / m[s, c] : -1 }
        END {
            met = 0; tot = 0
            for (i = 1; i <= ns; i++) {
                s = sz[i]; ru = ratio(s, ref); ro = ratio(s, "ob1"); g = "–"
                pu = (s in pr) ? pr[s] : -1
                pb = (s in po) ? po[s] : -1
                # judged on the paired ratio; for osu_mbw_mr only the 8 B rate
                # counts; over OFI against ob1 too (and alone where pml cm
                # cannot run: it refuses libfabric shm)
                if (goal != "-" && (pu >= 0 || (tr ~ /^ofi-/ && pb >= 0)) && (b != "osu_mbw_mr" || s == 8)) {
                    ok = 1
                    if (pu >= 0) ok = (kind == "lat") ? (pu <= goal + 0) : (pu >= goal + 0)
                    if (tr ~ /^ofi-/ && pb >= 0) ok = ok && ((kind == "lat") ? (pb <= goal + 0) : (pb >= goal + 0))
                    g = ok ? "met" : "**missed**"; tot++; met += ok
                }
                printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", s, cell(s, "failstop"), cell(s, ref),
                       cell(s, "ob1"), ru < 0 ? "–" : sprintf("%.3f", ru), ro < 0 ? "–" : sprintf("%.3f", ro),
                       pu < 0 ? "–" : sprintf("%.3f", pu), pb < 0 ? "–" : sprintf("%.3f", pb), g
            }
            if (tot) printf "%s\t%s\t%s\t%d\t%d\n", tr, b, np, met, tot >> "/dev/fd/3"
        }' "$PAIRED" "$SUM"
    echo
}

plot() {   # png title ylabel "transport bench np" ...
    local png=$1 title=$2 ylabel=$3 clauses="" spec tr b np cfg f
    shift 3
    for spec in "$@"; do
        read -r tr b np <<<"$spec"
        for cfg in failstop "$REF" ob1; do
            f=$PERF/.${NAME}_plot_${tr}_${b}_${np}_$cfg
            awk -F'\t' -v tr="$tr" -v b="$b" -v np="$np" -v c="$cfg" \
                '$1 == tr && $2 == b && $3 == np && $5 == c && $4 > 0 { print $4, $6, $7, $8 }' \
                "$SUM" > "$f"
            [ -s "$f" ] && clauses+="${clauses:+, }'$f' using 1:2:3:4 with yerrorlines title '$cfg $tr ${np}r'"
        done
    done
    [ -n "$clauses" ] || { rm -f "$PERF"/.${NAME}_plot_*; return 0; }
    gnuplot <<EOF
set terminal pngcairo size 900,560 font ",10"
set output '$PERF/$png'
set title "$title"
set logscale x 2
set logscale y 10
set format x "%.0b%BB"
set termoption noenhanced
set xlabel "message size"
set ylabel "$ylabel"
set key left top
set grid
plot $clauses
EOF
    rm -f "$PERF"/.${NAME}_plot_*
}

{
    rounds=$(tail -n +2 "$TSV" | cut -f1 | sort -n | tail -1)
    echo "# OSU Micro-Benchmarks 7.4: failstop, $REF_LABEL, ob1"
    echo
    echo "Written by \`bench/osu_report.sh\` from \`docs/perf/$NAME.tsv\` (\`bench/osu.sh\`,"
    echo "$(date -u +%Y-%m-%d), $(nproc) cores): medians of $rounds interleaved rounds,"
    echo "[min–max] beside them; µs for latency, MB/s for bandwidth.  ÷ columns:"
    echo "failstop's median over the other's; paired: the median over the rounds of"
    echo "failstop over the other in the same round (the host switches speed for minutes"
    echo "at a time; goals are judged on it).  Goals against pml ucx (shared"
    echo "memory): latency ≤ 1.10, bandwidth ≥ 0.90, message rate at 8 B ≥ 1.0,"
    echo "collectives ≤ 1.15; over OFI (\`ofi-PROVIDER\`): latency ≤ 1.0 and bandwidth"
    echo "≥ 1.0 against both pml cm (mtl ofi, the same provider) and ob1 (btl tcp; vader"
    echo "for ofi-shm, which pml cm refuses)."
    echo
    echo "## Goals met"
    echo
    echo "| transport | benchmark | ranks | sizes meeting the goal |"
    echo "|---|---|---|---|"
    echo "@GOALS@"
    echo
    for spec in $(cut -f1-3 "$SUM" | sort -u -t$'\t' -k1,1 -k2,2 -k3,3n | tr '\t' ':'); do
        IFS=: read -r tr b np <<<"$spec"
        table "$tr" "$b" "$np"
    done 3> "$PERF/.osu_goals"
} > "$PERF/$NAME.md.tmp"
goals=$(awk -F'\t' '{ printf "| %s | %s | %s | %d of %d |\\n", $1, $2, $3, $4, $5 }' "$PERF/.osu_goals")
awk -v g="$goals" '$0 == "@GOALS@" { printf "%s", g; next } { print }' "$PERF/$NAME.md.tmp" > "$PERF/$NAME.md"
rm -f "$PERF/$NAME.md.tmp" "$PERF/.osu_goals" "$PAIRED"

if ! command -v gnuplot >/dev/null; then
    echo "osu_report.sh: gnuplot missing, no plots" >&2
elif [ "$REF" = cm ]; then
    for tr in $(cut -f1 "$SUM" | sort -u); do
        plot "${NAME}_latency_$tr.png" "osu_latency, 2 ranks, $tr" "µs (lower is better)" \
            "$tr osu_latency 2"
        plot "${NAME}_bw_$tr.png" "osu_bw and osu_bibw, 2 ranks, $tr" "MB/s (higher is better)" \
            "$tr osu_bw 2" "$tr osu_bibw 2"
    done
else
    plot osu_latency.png "osu_latency, 2 ranks" "µs (lower is better)" \
        "shm osu_latency 2" "tcp osu_latency 2"
    plot osu_bw.png "osu_bw and osu_bibw, 2 ranks, shared memory" "MB/s (higher is better)" \
        "shm osu_bw 2" "shm osu_bibw 2"
    plot osu_bw_tcp.png "osu_bw and osu_bibw, 2 ranks, TCP" "MB/s (higher is better)" \
        "tcp osu_bw 2" "tcp osu_bibw 2"
    for b in osu_allreduce osu_bcast osu_alltoall osu_iallreduce; do
        plot "$b.png" "$b, shared memory" "µs (lower is better)" "shm $b 2" "shm $b 4"
    done
fi
echo "wrote $PERF/$NAME.md"
