#!/usr/bin/env bash
# failstop against pml ucx and ob1 with the unmodified OSU Micro-Benchmarks
# 7.4, over shared memory and TCP, configurations interleaved run by run in
# every round (the host is shared and drifts: medians, min and max kept).
#
#   bash bench/osu.sh BUILD_DIR          (make bench-osu)
#
# Point to point (2 ranks, 1 B - 4 MiB): osu_latency, osu_bw, osu_bibw;
# osu_mbw_mr at 4 ranks.  Collectives at 2 and 4 ranks, 8 B - 1 MiB:
# osu_allreduce, osu_bcast, osu_alltoall, osu_barrier, osu_iallreduce (its
# "pure communication" time).  2 ranks get a core each; 4 ranks share the
# 2 cores unbound.  Over shared memory, bandwidths and collectives run their
# large sizes as many times as their small ones (run() says why).  Writes
# docs/perf/osu.tsv (every run), osu_summary.tsv,
# osu.md (tables, ratios, goals) and osu_*.png (gnuplot, if installed).
#
# Environment: FS_OSU_ROUNDS (5), FS_OSU_TRANSPORTS ("shm tcp"; also
# ofi-net, ofi-shm, ofi-sockets, ofi-rxm: failstop's OFI transport over that
# libfabric provider), FS_OSU_BENCHES (all of the above), FS_OSU_CONFIGS
# ("failstop ucx ob1"; "cm" is pml cm + mtl ofi over the same provider),
# FS_OSU_NAME (osu: docs/perf/NAME.*), FS_OSU_REF (ucx: whom failstop is
# judged against besides ob1), FS_OSU_TIMEOUT (s per run, 300),
# FS_OSU_QUICK=1 (1 round, few sizes and iterations: a smoke run),
# FS_OSU_REPORT_ONLY=1 (report from NAME.tsv).  make bench-osu-ofi: the
# OFI comparison (failstop, pml cm, ob1; latency and bandwidth).
set -u -o pipefail

die() { echo "osu.sh: $*" >&2; exit 2; }
[ $# -ge 1 ] || die "usage: $0 BUILD_DIR"
BUILD=$(cd "$1" && pwd) || die "no build directory $1"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$HERE/docs/perf
QUICK=${FS_OSU_QUICK:-0}
[ "$QUICK" = 1 ] && ROUNDS=${FS_OSU_ROUNDS:-1} || ROUNDS=${FS_OSU_ROUNDS:-5}
TRANSPORTS=${FS_OSU_TRANSPORTS:-shm tcp}
BENCHES=${FS_OSU_BENCHES:-osu_latency osu_bw osu_bibw osu_mbw_mr osu_allreduce osu_bcast osu_alltoall osu_barrier osu_iallreduce}
CONFIGS=${FS_OSU_CONFIGS:-failstop ucx ob1}
TMO=${FS_OSU_TIMEOUT:-300}
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "FS_OSU_ROUNDS must be a positive integer"
NAME=${FS_OSU_NAME:-osu}
TSV=$OUT/$NAME.tsv
mkdir -p "$OUT"
. "$HERE/bench/osu_build.sh"
# shellcheck source=transport.sh
. "$HERE/bench/transport.sh"

# bench -> "ranks sizes directory" (osu_report.sh knows which are latencies)
bench_info() {
    case $1 in
    osu_latency|osu_bw|osu_bibw) echo "2 1:4194304 pt2pt/standard" ;;
    osu_mbw_mr) echo "4 1:4194304 pt2pt/standard" ;;
    osu_barrier) echo "2,4 - collective/blocking" ;;
    osu_iallreduce) echo "2,4 8:1048576 collective/non_blocking" ;;
    osu_allreduce|osu_bcast|osu_alltoall) echo "2,4 8:1048576 collective/blocking" ;;
    *) return 1 ;;
    esac
}

# Sets CMD for one run of (config, transport, ranks); returns 1 for a
# combination that does not exist (pml ucx over OFI, pml cm over UCX's
# transports or over libfabric shm, which mtl ofi refuses: no FI_REMOTE_COMM).
make_cmd() {
    local cfg=$1 tr=$2 np=$3 place
    [ "$np" -le 2 ] && place=(--bind-to core) || place=(--oversubscribe --bind-to none)
    case $cfg in
    failstop) CMD=("$BUILD/bin/failstop-run" "${place[@]}")
              FS_OPTS=() && fs_transport_opts "$tr" && CMD+=("${FS_OPTS[@]}") ;;
    ucx)      [[ $tr == ofi-* ]] && return 1
              CMD=(mpirun --allow-run-as-root --mca pml ucx --mca pml_ucx_tls any
                   --mca pml_ucx_devices any "${place[@]}")
              if [ "$tr" = tcp ]; then CMD+=(-x "UCX_TLS=tcp,self"); fi ;;
    cm)       [[ $tr == ofi-* && $tr != ofi-shm ]] || return 1
              CMD=(mpirun --allow-run-as-root --mca pml cm --mca mtl ofi
                   --mca mtl_ofi_provider_include "$(fs_ofi_provider "$tr")" "${place[@]}") ;;
    ob1)      CMD=(mpirun --allow-run-as-root --mca pml ob1 "${place[@]}")
              case $tr in
              tcp|ofi-net|ofi-sockets|ofi-rxm) CMD+=(--mca btl "tcp,self") ;;
              *) CMD+=(--mca btl "vader,self") ;;
              esac ;;
    *) die "unknown config $cfg" ;;
    esac
}

# One OSU run; appends "round tr bench np size config value" lines.
run() {
    local r=$1 tr=$2 b=$3 np=$4 cfg=$5 sizes dir opts=()
    read -r _ sizes dir <<<"$(bench_info "$b")"
    [ "$sizes" != - ] && opts=(-m "$sizes")
    # Shared memory: messages above 8 KiB as many times as the small ones
    # (OSU's own counts; by default 20 windows and 100 collectives, ~25 ms
    # a size here, where one scheduler tick or a neighbour's burst moves a
    # run by 10-20%: osu_bibw 128 KiB 33-47 GB/s across runs of one PML)
    if [ "$tr" = shm ]; then
        case $b in
        osu_bw|osu_bibw|osu_mbw_mr) opts+=(-i 100 -x 10) ;;
        osu_latency) ;;
        *) opts+=(-i 1000 -x 100) ;;
        esac
    fi
    if [ "$QUICK" = 1 ]; then
        opts=(-i 200 -x 20)
        [ "$sizes" != - ] && opts+=(-m "${sizes%%:*}:65536")
    fi
    make_cmd "$cfg" "$tr" "$np" || return 0
    timeout -k 5 "$TMO" "${CMD[@]}" -np "$np" "$OSU/$dir/$b" "${opts[@]}" 2>/dev/null |
        awk -v p="$r	$tr	$b	$np" -v c="$cfg" '
            /^#/ || NF == 0 { next }
            NF == 1 { print p "\t0\t" c "\t" $1; next }   # osu_barrier
            p ~ /osu_iallreduce/ { print p "\t" $1 "\t" c "\t" $4; next }
            { print p "\t" $1 "\t" c "\t" $2 }' >> "$TSV" ||
        echo "osu.sh: $cfg $tr $b np=$np failed or timed out" >&2
}

collect() {
    local r tr b np cfgs i k n
    osu_build || die "no OSU"
    [ -x "$BUILD/bin/failstop-run" ] || die "build failstop first (make all)"
    printf 'round\ttransport\tbench\tnp\tsize\tconfig\tvalue\n' > "$TSV"
    read -ra cfgs <<<"$CONFIGS"
    n=${#cfgs[@]}
    for r in $(seq 1 "$ROUNDS"); do
        for tr in $TRANSPORTS; do
            for b in $BENCHES; do
                bench_info "$b" >/dev/null || die "unknown benchmark $b"
                for np in $(bench_info "$b" | cut -d' ' -f1 | tr , ' '); do
                    # who runs first rotates round by round
                    for i in $(seq 0 $((n - 1))); do
                        k=$(((i + r) % n))
                        run "$r" "$tr" "$b" "$np" "${cfgs[$k]}"
                    done
                done
            done
        done
        echo "osu.sh: round $r of $ROUNDS done ($(date -u +%H:%M:%S))"
    done
}

[ -n "${FS_OSU_REPORT_ONLY:-}" ] || collect
FS_OSU_NAME=$NAME bash "$HERE/bench/osu_report.sh" "$OUT"
