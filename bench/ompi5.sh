#!/usr/bin/env bash
# failstop against Open MPI 5's own paths, in the Debian 13 chroot of
# tests/ompi5/chroot.sh (Open MPI 5.0.7, UCX 1.18), one host, shared memory:
#   - OSU 7.4 osu_latency and osu_bw, 2 ranks, 1 B - 4 MiB: failstop,
#     pml ucx (no fault tolerance) and ob1 with Open MPI's own ULFM on
#     (--with-ft ulfm);
#   - bench/u5_lat (Open MPI 5's own ULFM calls: agree, shrink, revoke until
#     all know, and MPI_Allreduce as the reference) at FS_O5_NPS ranks
#     ("2 4 8 16"; more ranks than this host's 2 cores above 2) over
#     failstop and over ob1 with ULFM;
#   - bench/u5_kill (SIGKILL of the last rank: to the first survivor's
#     error and to the last's, survivors blocked in a receive from it),
#     FS_O5_KILLS (5) times per cell per pass, same ranks and PMLs.
# Every cell once per pass, the passes interleaved (FS_O5_REPEAT, 3): the
# machine is shared, so the median of the passes is reported.  Writes
# docs/perf/ompi5.md, ompi5_osu.tsv, ompi5_ulfm.tsv, ompi5_kill.tsv and
# ompi5.png
# (gnuplot, outside the chroot).
#
#   bash bench/ompi5.sh            (root; make test-ompi5 made the chroot)
set -u -o pipefail

die() { echo "ompi5.sh: $*" >&2; exit 2; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B5=build-ompi5
OSU_TGZ=osu-micro-benchmarks-7.4.tar.gz

# ---- inside the chroot: build OSU, measure ----
if [ "${1:-}" = --inside ]; then
    cd "$HERE" || exit 2
    REPEAT=${FS_O5_REPEAT:-3} NPS=${FS_O5_NPS:-2 4 8 16}
    OSU=$B5/osu/osu-micro-benchmarks-7.4/c/mpi/pt2pt/standard
    if [ ! -x "$OSU/osu_bw" ]; then
        (cd $B5/osu && tar xzf $OSU_TGZ && cd osu-micro-benchmarks-7.4 &&
         ./configure -q CC=mpicc CXX=mpicxx > /dev/null && make -s -j2 > /dev/null 2>&1) ||
            die "OSU build failed"
    fi
    export FAILSTOP_OMPI_PKGLIBDIR
    FAILSTOP_OMPI_PKGLIBDIR=$(ompi_info --parsable --path pkglibdir | sed -n 's/^path:pkglibdir://p')
    run_as() {     # PML NP PROGRAM ARGS...
        local pml=$1 np=$2
        shift 2
        case $pml in
        failstop) timeout 300 $B5/bin/failstop-run --oversubscribe --bind-to none -np "$np" "$@" ;;
        # Open MPI 5's pml ucx takes itself out without an InfiniBand
        # device unless told any will do
        ucx) timeout 300 mpirun --allow-run-as-root --oversubscribe --bind-to none --mca pml ucx \
                 --mca pml_ucx_tls any --mca pml_ucx_devices any -np "$np" "$@" ;;
        ulfm-ob1) timeout 300 mpirun --allow-run-as-root --oversubscribe --bind-to none \
                      --with-ft ulfm --mca pml ob1 -np "$np" "$@" ;;
        esac 2> /dev/null
    }
    printf 'pass\tbench\tpml\tsize\tvalue\n' > $B5/perf/ompi5_osu.tsv
    printf 'pass\top\tpml\tnp\tmedian_us\tmin_us\n' > $B5/perf/ompi5_ulfm.tsv
    printf 'pass\tpml\tnp\tfirst_ms\tall_ms\n' > $B5/perf/ompi5_kill.tsv
    for ((p = 1; p <= REPEAT; p++)); do
        for b in osu_latency osu_bw; do
            for pml in failstop ucx ulfm-ob1; do
                run_as $pml 2 $OSU/$b -m 1:4194304 | awk -v p=$p -v b=$b -v m=$pml \
                    '/^[0-9]/ { printf "%s\t%s\t%s\t%s\t%s\n", p, b, m, $1, $2 }' \
                    >> $B5/perf/ompi5_osu.tsv
            done
        done
        for np in $NPS; do
            for pml in failstop ulfm-ob1; do
                run_as $pml "$np" $B5/bench/u5_lat 100 7 | awk -v p=$p -v m=$pml \
                    'NF == 4 { printf "%s\t%s\t%s\t%s\t%s\t%s\n", p, $1, m, $2, $3, $4 }' \
                    >> $B5/perf/ompi5_ulfm.tsv
            done
        done
        for np in $NPS; do
            for pml in failstop ulfm-ob1; do
                for ((i = 0; i < ${FS_O5_KILLS:-5}; i++)); do
                    run_as $pml "$np" $B5/bench/u5_kill /tmp | awk -v p=$p -v m=$pml \
                        '$1 == "kill" { printf "%s\t%s\t%s\t%s\t%s\n", p, m, $2, $3, $4 }' \
                        >> $B5/perf/ompi5_kill.tsv
                done
            done
        done
        echo "ompi5.sh: pass $p of $REPEAT done" >&2
    done
    exit 0
fi

# ---- outside: the chroot, then the report ----
[ "$(id -u)" -eq 0 ] || die "needs root (the chroot)"
[ -x "$HERE/$B5/debian13/usr/bin/mpirun" ] || die "no Open MPI 5 chroot: run make test-ompi5 first"
[ -x "$HERE/$B5/bench/u5_lat" ] || die "no $B5/bench/u5_lat: run make test-ompi5 first"
mkdir -p "$HERE/$B5/osu" "$HERE/$B5/perf"
cp "$HERE/../shared/third_party/$OSU_TGZ" "$HERE/$B5/osu/" || die "no OSU tarball in ../shared/third_party"
bash "$HERE/tests/ompi5/chroot.sh" "$HERE/$B5/debian13" bash bench/ompi5.sh --inside || exit 1
OUT=$HERE/docs/perf
mkdir -p "$OUT"
cp "$HERE/$B5/perf/ompi5_osu.tsv" "$HERE/$B5/perf/ompi5_ulfm.tsv" "$HERE/$B5/perf/ompi5_kill.tsv" "$OUT/"
bash "$HERE/bench/ompi5_report.sh" "$OUT"
