#!/usr/bin/env bash
# bench/ompi5_report.sh DIR: docs/perf/ompi5.md and ompi5.png from the
# TSVs bench/ompi5.sh wrote into DIR (medians over its passes, ratios
# against pml ucx and against ob1 with Open MPI's own ULFM).
set -u -o pipefail
DIR=${1:?usage: $0 DIR}
cd "$DIR" || exit 2

python3 - <<'EOF'
import csv, statistics as st
from collections import defaultdict

osu = defaultdict(list)
for r in csv.DictReader(open("ompi5_osu.tsv"), delimiter="\t"):
    osu[(r["bench"], r["pml"], int(r["size"]))].append(float(r["value"]))
ulfm = defaultdict(list)
for r in csv.DictReader(open("ompi5_ulfm.tsv"), delimiter="\t"):
    ulfm[(r["op"], r["pml"], int(r["np"]))].append(float(r["median_us"]))
kill = defaultdict(list)
for r in csv.DictReader(open("ompi5_kill.tsv"), delimiter="\t"):
    kill[(r["pml"], int(r["np"]))].append((float(r["first_ms"]), float(r["all_ms"])))
med = lambda v: st.median(v) if v else float("nan")
passes = max([len(v) for v in osu.values()] + [len(v) for v in ulfm.values()] + [0])

out = []
out.append("# failstop under Open MPI 5 (bench/ompi5.sh)\n")
out.append("Debian 13 chroot on this host: Open MPI 5.0.7, UCX 1.18, shared memory, "
           "2 cores. failstop (`failstop-run`), pml ucx (no fault tolerance) and ob1 "
           "with Open MPI's own ULFM (`--with-ft ulfm`); medians of %d interleaved "
           "passes. Ratios: failstop / the other (latency: below 1 is faster; "
           "bandwidth: above 1 is faster).\n" % passes)
for bench, unit, better in (("osu_latency", "us", "lower"), ("osu_bw", "MB/s", "higher")):
    sizes = sorted({k[2] for k in osu if k[0] == bench})
    out.append("\n## %s (%s, %s is better)\n" % (bench, unit, better))
    out.append("| size | failstop | pml ucx | ob1 + ULFM | ÷ ucx | ÷ ob1+ULFM |")
    out.append("|---:|---:|---:|---:|---:|---:|")
    for s in sizes:
        f, u, o = (med(osu[(bench, p, s)]) for p in ("failstop", "ucx", "ulfm-ob1"))
        out.append("| %d | %.2f | %.2f | %.2f | %.2f | %.2f |" % (s, f, u, o, f / u, f / o))
out.append("\n## Open MPI 5's ULFM calls (bench/u5_lat), µs per call\n")
out.append("The same program (libmpi's `MPIX_Comm_agree`, `MPIX_Comm_shrink`, "
           "`MPIX_Comm_revoke` until every rank knows; `MPI_Allreduce` of one int as "
           "the reference) over failstop and over ob1 with ULFM. Above 2 ranks the "
           "processes outnumber the cores.\n")
out.append("| op | np | failstop | ob1 + ULFM | ÷ ob1+ULFM |")
out.append("|---|---:|---:|---:|---:|")
for op in ("agree", "shrink", "revoke", "allreduce"):
    for n in sorted({k[2] for k in ulfm if k[0] == op}):
        f, o = med(ulfm[(op, "failstop", n)]), med(ulfm[(op, "ulfm-ob1", n)])
        out.append("| %s | %d | %.1f | %.1f | %.2f |" % (op, n, f, o, f / o))
out.append("\n## Kill to error (bench/u5_kill), ms\n")
out.append("SIGKILL of the last rank while every other one waits in a receive from "
           "it: to the first survivor's error and to the last's (medians of every run, "
           "min-max in brackets).\n")
out.append("| np | failstop first | failstop all | ob1 + ULFM first | ob1 + ULFM all | runs |")
out.append("|---:|---:|---:|---:|---:|---:|")
for n in sorted({k[1] for k in kill}):
    cells = []
    for p in ("failstop", "ulfm-ob1"):
        for j in (0, 1):
            v = [x[j] for x in kill[(p, n)]]
            cells.append("%.1f [%.1f-%.1f]" % (med(v), min(v), max(v)) if v else "-")
    out.append("| %d | %s | %d/%d |" % (n, " | ".join(cells), len(kill[("failstop", n)]),
                                        len(kill[("ulfm-ob1", n)])))
open("ompi5.md", "w").write("\n".join(out) + "\n")

with open("ompi5_plot.dat", "w") as d:
    for bench in ("osu_latency", "osu_bw"):
        for p in ("failstop", "ucx", "ulfm-ob1"):
            for s in sorted({k[2] for k in osu if k[0] == bench}):
                d.write("%d %g\n" % (s, med(osu[(bench, p, s)])))
            d.write("\n\n")
    for op in ("agree", "shrink", "revoke"):
        for p in ("failstop", "ulfm-ob1"):
            for n in sorted({k[2] for k in ulfm if k[0] == op}):
                d.write("%d %g\n" % (n, med(ulfm[(op, p, n)])))
            d.write("\n\n")
EOF
gnuplot <<'EOF'
set terminal pngcairo size 1500,450 font ",10"
set output "ompi5.png"
set multiplot layout 1,3
set logscale x 2; set logscale y; set grid; set key top left
set title "osu\\_latency, 2 ranks, shm (Open MPI 5)"; set xlabel "bytes"; set ylabel "us"
plot "ompi5_plot.dat" index 0 w lp t "failstop", "" index 1 w lp t "pml ucx", "" index 2 w lp t "ob1 + ULFM"
set title "osu\\_bw"; set ylabel "MB/s"; set key bottom right
plot "ompi5_plot.dat" index 3 w lp t "failstop", "" index 4 w lp t "pml ucx", "" index 5 w lp t "ob1 + ULFM"
set title "ULFM calls (libmpi's), us per call"; set xlabel "ranks"; set ylabel "us"; set key top left
plot "ompi5_plot.dat" index 6 w lp t "agree failstop", "" index 7 w lp t "agree ob1+ULFM", \
     "" index 8 w lp t "shrink failstop", "" index 9 w lp t "shrink ob1+ULFM", \
     "" index 10 w lp t "revoke failstop", "" index 11 w lp t "revoke ob1+ULFM"
unset multiplot
EOF
rm -f ompi5_plot.dat
echo "wrote $DIR/ompi5.md and ompi5.png"
