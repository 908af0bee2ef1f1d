#!/usr/bin/env bash
# Failure-detection time: from a process's death to a survivor's error.
#
#   bash bench/killtime.sh BUILD_DIR
#
# Runs bench/fs_killtime (see its header for the scenarios and the timing
# method) once per trial -- a trial kills a rank, so it is one mpirun --
# under failstop-run, per transport (shared memory with the default UCX
# configuration; TCP with -x UCX_TLS=tcp) and scenario; then a keepalive
# sweep (--mca pml_failstop_ucx_keepalive_ms) and, for context, the same
# program under stock pml ucx and ob1 with mpirun --enable-recovery.  All
# cells are interleaved round-robin, trial by trial, so drift of the machine
# hits them alike.  Writes OUT/perf/killtime.md (tables), killtime.tsv (one
# row per measurement), killtime_runs.tsv (one row per mpirun) and
# killtime.png (if gnuplot is installed).  Never touches PERFORMANCE.md.
#
# Environment:
#   FS_KT_TRIALS       trials per failstop cell (default 10)
#   FS_KT_TRANSPORTS   "shm", "tcp" (UCX) and failstop's OFI transport over a
#                      libfabric provider: "ofi-net", "ofi-shm", "ofi-sockets",
#                      "ofi-rxm" (tcp;ofi_rxm), "ofi-rxd" (udp;ofi_rxd)
#                      (default "shm tcp"); the keepalive sweep, s3n and the
#                      baselines are UCX's and run for shm and tcp only
#   FS_KT_NAME         file names in OUT/perf (default killtime; make
#                      bench-killtime-ofi: killtime_ofi)
#   FS_KT_SCENARIOS    subset of "s1 s2 s3 s3n" (default all)
#   FS_KT_KEEPALIVE    keepalive values (ms) for the sweep, besides the
#                      default 100 (default "20 50 500 1000"; "" = no sweep)
#   FS_KT_KA_SCENARIOS scenarios of the sweep (default "s1 s2")
#   FS_KT_KA_TRIALS    trials per sweep cell (default FS_KT_TRIALS)
#   FS_KT_BASELINE     stock PMLs to try (default "ucx ob1"; "" = none)
#   FS_KT_BASE_TRIALS  trials per baseline cell (default 3)
#   FS_KT_BASE_SCENARIOS scenarios of the baseline (default "s1 s2 s3")
#   FS_KT_TIMEOUT      seconds per failstop mpirun (default 40)
#   FS_KT_BASE_TIMEOUT seconds per baseline mpirun (default 10): stock
#                      survivors are expected to hang, this is how long
#                      "hang" means
#   FS_KT_LEAD_MS      death time after the start signal (default 50) ...
#   FS_KT_JITTER_MS    ... plus a uniformly random 0..this (default 1000), so
#                      the death falls at any phase of UCX's keepalive rounds
#   FS_KT_IDLE_MS      s2: how long the survivor computes after the death
#                      (default 300)
#   FS_KT_WAIT_IDLE    seconds to wait before a trial for other MPI jobs
#                      (mpirun/orted not ours) to end (default 20; 0 = never)
#   FS_KT_SNAPSHOT     1 (default) = run a private copy of BUILD_DIR's bin/,
#                      lib/ and libexec/ (BUILD_DIR/bench/killtime-snapshot),
#                      so a concurrent rebuild cannot change failstop between
#                      trials; 0 = run BUILD_DIR/bin/failstop-run itself
#   FS_KT_OUT          output directory (default <repo>/docs)
#   FS_KT_REPORT_ONLY  1 = only rewrite killtime.md/.png from the existing
#                      killtime.tsv and killtime_runs.tsv
#   MPICC              compiler for fs_killtime (mpicc)
set -euo pipefail

die() { echo "killtime: $*" >&2; exit 1; }
warn() { echo "killtime: warning: $*" >&2; }

[ $# -eq 1 ] || die "usage: bash bench/killtime.sh BUILD_DIR"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=transport.sh
. "$ROOT/bench/transport.sh"
mkdir -p "$1/bench"
BUILD=$(cd "$1" && pwd)
BIN=$BUILD/bench/fs_killtime
RUNNER=$BUILD/bin/failstop-run
TRIALS=${FS_KT_TRIALS:-10}
read -ra TRANSPORTS <<<"${FS_KT_TRANSPORTS-shm tcp}"
read -ra SCENARIOS <<<"${FS_KT_SCENARIOS-s1 s2 s3 s3n}"
read -ra KAS <<<"${FS_KT_KEEPALIVE-20 50 500 1000}"
read -ra KA_SCENARIOS <<<"${FS_KT_KA_SCENARIOS-s1 s2}"
KA_TRIALS=${FS_KT_KA_TRIALS:-$TRIALS}
read -ra BASES <<<"${FS_KT_BASELINE-ucx ob1}"
BASE_TRIALS=${FS_KT_BASE_TRIALS:-3}
read -ra BASE_SCENARIOS <<<"${FS_KT_BASE_SCENARIOS-s1 s2 s3}"
TMO=${FS_KT_TIMEOUT:-40}
BASE_TMO=${FS_KT_BASE_TIMEOUT:-10}
LEAD=${FS_KT_LEAD_MS:-50}
JITTER=${FS_KT_JITTER_MS:-1000}
IDLE=${FS_KT_IDLE_MS:-300}
WAIT_IDLE=${FS_KT_WAIT_IDLE:-20}
SNAPSHOT=${FS_KT_SNAPSHOT:-1}
OUT=${FS_KT_OUT:-$ROOT/docs}
PERF=$OUT/perf
LOGS=$BUILD/bench/killtime-logs
NAME=${FS_KT_NAME:-killtime}
TSV=$PERF/$NAME.tsv
RUNS=$PERF/${NAME}_runs.tsv
MD=$PERF/$NAME.md
PNG=$PERF/$NAME.png
CUR=""

for v in TRIALS KA_TRIALS BASE_TRIALS TMO BASE_TMO LEAD; do
    [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')"
done
for v in IDLE WAIT_IDLE JITTER; do
    [[ "${!v}" =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer (got '${!v}')"
done
for t in "${TRANSPORTS[@]}"; do fs_transport_known "$t" || die "unknown transport '$t'"; done
for s in "${SCENARIOS[@]}" "${KA_SCENARIOS[@]}" "${BASE_SCENARIOS[@]}"; do
    [[ $s =~ ^(s1|s2|s3|s3n)$ ]] || die "unknown scenario '$s'"
done
for k in "${KAS[@]}"; do [[ $k =~ ^[1-9][0-9]*$ ]] || die "bad keepalive value '$k'"; done
for b in "${BASES[@]}"; do [[ $b =~ ^(ucx|ob1)$ ]] || die "unknown baseline '$b'"; done

# ---- build ------------------------------------------------------------------

# failstop itself: make all, retried because others may be editing src/.
build_failstop() {
    local i
    [ -x "$RUNNER" ] && [ -e "$BUILD/lib/openmpi/mca_pml_failstop.so" ] &&
        [ -x "$BUILD/libexec/failstop/failstop-rank" ] && return 0
    for i in 1 2 3 4 5; do
        echo "killtime: building failstop in $BUILD (attempt $i)" >&2
        make -C "$ROOT" BUILD="$BUILD" -j4 all >&2 && return 0
        sleep 30
    done
    die "cannot build failstop"
}

# A private copy of the runner, rank waiter and libraries: others may
# rebuild BUILD_DIR while this runs.  failstop-run finds the component
# relative to itself, so the copy is self-contained.
snapshot() {
    local snap=$BUILD/bench/killtime-snapshot
    [ "$SNAPSHOT" = 1 ] || return 0
    local i f
    for i in 1 2 3 4 5; do
        rm -rf "$snap"
        mkdir -p "$snap"
        cp -a "$BUILD/bin" "$BUILD/lib" "$BUILD/libexec" "$snap/"
        # a copy taken in the middle of someone's link would not load
        f=$(mktemp /dev/shm/fs_killtime.XXXXXX)
        if timeout -k 5 30 "$snap/bin/failstop-run" --oversubscribe --bind-to none -np 2 "$BIN" \
            -s s1 -f "$f" -l 20 -j 0 2>/dev/null | grep -q 'outcome=failstop'; then
            rm -f "$f"
            RUNNER=$snap/bin/failstop-run
            return 0
        fi
        rm -f "$f"
        warn "snapshot of $BUILD does not pass a trial run (rebuild in progress?); retrying in 30 s"
        sleep 30
    done
    die "no working failstop build to snapshot"
}

# fs_killtime with the Makefile's program flags (its bench rule), if stale.
build_bin() {
    local src=$ROOT/bench/fs_killtime.c
    [ -x "$BIN" ] && [ "$BIN" -nt "$src" ] && [ "$BIN" -nt "$ROOT/include/failstop.h" ] && return 0
    echo "killtime: building $BIN" >&2
    "${MPICC:-mpicc}" -O2 -g -std=gnu11 -fPIC -fvisibility=hidden -mcx16 \
        -fno-strict-aliasing -Wall -Wextra -Werror -Wshadow \
        -Wno-missing-field-initializers -I"$ROOT/include" -o "$BIN" "$src"
}

# ---- one run ----------------------------------------------------------------

# Cells: "config transport scenario keepalive trials" (keepalive "-" = default).
# UCX's keepalive, s3n (a bystander without it) and the stock PMLs are
# for the UCX transports only.
define_cells() {
    local t s k b
    CELLS=()
    for t in "${TRANSPORTS[@]}"; do
        for s in "${SCENARIOS[@]}"; do
            [[ $t == ofi-* && $s == s3n ]] || CELLS+=("failstop $t $s - $TRIALS")
        done
    done
    for k in "${KAS[@]}"; do
        for t in "${TRANSPORTS[@]}"; do
            [[ $t == ofi-* ]] && continue
            for s in "${KA_SCENARIOS[@]}"; do CELLS+=("failstop $t $s $k $KA_TRIALS"); done
        done
    done
    for b in "${BASES[@]}"; do
        for t in "${TRANSPORTS[@]}"; do
            [[ $t == ofi-* ]] && continue
            for s in "${BASE_SCENARIOS[@]}"; do CELLS+=("$b $t $s - $BASE_TRIALS"); done
        done
    done
}

# Sets CMD for one run.
make_cmd() {
    local cfg=$1 tr=$2 scen=$3 ka=$4 shared=$5 sdir=$6 np=2 tmo=$TMO
    [[ $scen == s3* ]] && np=3
    case $cfg in
    failstop)
        CMD=("$RUNNER" --status-dir "$sdir" --oversubscribe --bind-to none)
        FS_OPTS=() && fs_transport_opts "$tr" && CMD+=("${FS_OPTS[@]}")
        [ "$ka" != - ] && CMD+=(--mca pml_failstop_ucx_keepalive_ms "$ka") ;;
    ucx)
        tmo=$BASE_TMO
        CMD=(mpirun --allow-run-as-root --enable-recovery --mca pml ucx --mca pml_ucx_tls any
             --mca pml_ucx_devices any --oversubscribe --bind-to none)
        [ "$tr" = tcp ] && CMD+=(-x "UCX_TLS=tcp,self") ;;
    ob1)
        tmo=$BASE_TMO
        CMD=(mpirun --allow-run-as-root --enable-recovery --mca pml ob1 --oversubscribe
             --bind-to none)
        [ "$tr" = tcp ] && CMD+=(--mca btl "tcp,self") || CMD+=(--mca btl "vader,self") ;;
    esac
    CMD=(timeout -k 5 "$tmo" "${CMD[@]}" -np "$np" "$BIN" -s "$scen" -f "$shared"
         -l "$LEAD" -j "$JITTER" -i "$IDLE")
}

# Kills whatever is left in a run's session (see bench/run.sh).
sweep() {
    local sid=$1 pids
    mapfile -t pids < <(ps -eo pid=,sid=,stat= | awk -v s="$sid" '$2 == s && $3 !~ /^Z/ { print $1 }')
    [ ${#pids[@]} -eq 0 ] && return 0
    warn "killing leftover processes of session $sid: ${pids[*]}"
    kill -KILL "${pids[@]}" 2>/dev/null || true
}

on_signal() {
    [ -n "$CUR" ] && { kill -TERM -- "-$CUR" 2>/dev/null || true; sleep 1; sweep "$CUR"; }
    die "interrupted"
}

# Other people's MPI jobs on a 2-core machine distort millisecond timings:
# wait (bounded) until none runs.  Prints 1 if one was still running.
others_running() {
    ps -eo comm= | grep -qxE 'mpirun|orterun|orted|prterun'
}
wait_quiet() {
    local t=0
    while [ "$WAIT_IDLE" -gt 0 ] && others_running && [ $t -lt $((WAIT_IDLE * 5)) ]; do
        sleep 0.2
        t=$((t + 1))
    done
    others_running && echo 1 || echo 0
}

# Victim's time stamp (CLOCK_REALTIME ns) from the shared file, or "-".
kill_stamp() {
    local f=$1 magic
    [ -s "$f" ] || { echo -; return; }
    magic=$(od -An -t x8 -N 8 "$f" | tr -d ' ')
    [ "$magic" = 4b494c4c54494d45 ] || { echo -; return; }
    od -An -t d8 -j 8 -N 8 "$f" | tr -d ' '
}

run_one() {
    local trial=$1 cfg=$2 tr=$3 scen=$4 ka=$5 log rc=0 t0 secs status load busy
    local shared sdir victim reap=- kst
    log=$LOGS/t${trial}_${cfg}_${tr}_${scen}_ka${ka}
    shared=$(mktemp /dev/shm/fs_killtime.XXXXXX)
    sdir=$(mktemp -d "${TMPDIR:-/tmp}/fs_killtime.XXXXXX")
    make_cmd "$cfg" "$tr" "$scen" "$ka" "$shared" "$sdir"
    busy=$(wait_quiet)
    load=$(cut -d' ' -f1 /proc/loadavg)
    printf '%s\n' "${CMD[*]}" >"$log.cmd"
    t0=$(date +%s.%N)
    setsid --wait "${CMD[@]}" </dev/null >"$log.out" 2>"$log.err" &
    CUR=$!
    wait "$CUR" || rc=$?
    sweep "$CUR"
    CUR=""
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    case $rc in
    0) status=ok ;;
    124 | 137) status=timeout ;;
    *) status="exit-$rc" ;;
    esac
    if [ "$status" = ok ] && ! grep -q '^KT ' "$log.out"; then status=no-output; fi
    # kernel teardown + reaping: the rank waiter's record of the victim's end
    victim=1
    [[ $scen == s3* ]] && victim=2
    kst=$(kill_stamp "$shared")
    if [ "$kst" != - ] && [ -f "$sdir/rank.$victim" ]; then
        reap=$(awk -v k="$kst" '{ printf "%.1f", ($3 - k / 1e9) * 1e6 }' "$sdir/rank.$victim")
    fi
    rm -rf "$shared" "$sdir"
    awk -v tr="$trial" -v c="$cfg" -v t="$tr" -v k="$ka" -v st="$status" -v rp="$reap" '
    $1 == "KT" {
        for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = substr($i, length(kv[1]) + 2) }
        printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", tr, c, t, v["scen"], k,
            v["role"], v["outcome"], v["t_us"], v["call_us"], v["mono_us"], v["blocked_us"],
            v["notices_received"], rp, st, v["err"]
    }' "$log.out" >>"$TSV"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$trial" "$cfg" "$tr" "$scen" "$ka" \
        "$status" "$secs" "$load" "$busy" "$reap" "$log" >>"$RUNS"
    echo "killtime: trial $trial $cfg $tr $scen ka=$ka: $status ${secs}s$( \
        awk '$1 == "KT" { for (i = 2; i <= NF; i++) if ($i ~ /^(role|outcome|t_us|call_us)=/) printf " %s", $i; printf ";" }' "$log.out")" >&2
}

# ---- report -------------------------------------------------------------------

# Median/min/max/n of the metric of one (config, transport, scenario,
# keepalive, role) over measurements with outcome failstop.  The metric is
# death -> error (t_us) except s2, where it is call -> error (call_us).
stats() {
    awk -F'\t' -v c="$1" -v t="$2" -v s="$3" -v k="$4" -v r="$5" '
    !/^#/ && $2 == c && $3 == t && $4 == s && $5 == k && $6 == r {
        all++
        if ($7 != "failstop") { bad++; next }
        a[++n] = (s == "s2" ? $9 : $8) / 1000
    }
    END {
        if (!n) { printf "- - - 0 %d\n", all; exit }
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && a[j - 1] > a[j]; j--) { x = a[j]; a[j] = a[j - 1]; a[j - 1] = x }
        printf "%s %s %s %d %d\n", (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2), a[1], a[n], n, all
    }' "$TSV"
}

fmt_ms() {
    awk -v x="$1" 'BEGIN { if (x == "-") print "—"; else if (x < 1) printf "%.3f", x;
                           else if (x < 10) printf "%.2f", x; else printf "%.1f", x }'
}

# "median [min–max] (n)" cell, with failures noted.
cell() {
    local med lo hi n all
    read -r med lo hi n all <<<"$(stats "$@")"
    if [ "$all" = 0 ]; then echo "not run"; return; fi
    if [ "$n" = 0 ]; then echo "**no detection** (0/$all)"; return; fi
    printf '%s [%s–%s]' "$(fmt_ms "$med")" "$(fmt_ms "$lo")" "$(fmt_ms "$hi")"
    [ "$n" != "$all" ] && printf ' (**%d/%d**)' "$n" "$all"
    [ "$n" = "$all" ] && [ "$n" != "$TRIALS" ] && printf ' (n=%d)' "$n"
    echo
}

# Trials of a failstop cell that produced no measurement (timeouts etc.).
lost_runs() {
    awk -F'\t' '!/^#/ && $2 == "failstop" && $6 != "ok"' "$RUNS"
}

scen_label() {
    case $1/$2 in
    s1/detector) echo "s1 blocked in MPI_Recv from the victim: death → error" ;;
    s2/idle) echo "s2 idle ${IDLE} ms past the death, then MPI_Recv: call → error" ;;
    s3/detector) echo "s3 (3 ranks) rank blocked in MPI_Recv: death → error" ;;
    s3/bystander) echo "s3 bystander (never talked to the victim) polling MPI_Iprobe: death → error" ;;
    s3n/detector) echo "s3n (3 ranks) rank blocked in MPI_Recv: death → error" ;;
    s3n/bystander) echo "s3n bystander without its own keepalive: death → error" ;;
    *) echo "$1 $2" ;;
    esac
}

main_table() {
    local s r t row
    echo "| scenario (ms, median [min–max] over $TRIALS trials) |$(for t in "${TRANSPORTS[@]}"; do
        case $t in
        shm) printf ' shared memory (UCX default) |' ;;
        tcp) printf ' TCP (`UCX_TLS=tcp`) |' ;;
        *) printf ' OFI `%s` |' "$(fs_ofi_provider "$t")" ;;
        esac; done)"
    echo "|---|$(for t in "${TRANSPORTS[@]}"; do printf -- '---:|'; done)"
    for s in "${SCENARIOS[@]}"; do
        for r in detector idle bystander; do
            case $s/$r in s1/detector | s2/idle | s3/detector | s3/bystander | s3n/detector | s3n/bystander) ;; *) continue ;; esac
            row="| $(scen_label "$s" "$r") |"
            for t in "${TRANSPORTS[@]}"; do row+=" $(cell failstop "$t" "$s" - "$r") |"; done
            echo "$row"
        done
    done
}

# s2 from the death as well, and the victim's kernel teardown + reaping.
extra_table() {
    local t med lo hi n all
    echo "| quantity (ms) |$(for t in "${TRANSPORTS[@]}"; do printf ' %s |' "$t"; done)"
    echo "|---|$(for t in "${TRANSPORTS[@]}"; do printf -- '---:|'; done)"
    reap_row "victim dead and reaped, 2-rank runs (s1, s2): signal → its waiter's \`waitpid\` returns" 's1|s2'
    reap_row "same, 3-rank runs (s3, s3n): two survivors poll on 2 cores" 's3|s3n'
    printf '| s3 bystander minus s3 detector, same trial (negative: the bystander found out first) |'
    for t in "${TRANSPORTS[@]}"; do printf ' %s |' "$(pair_diff "$t" s3)"; done
    echo
    printf '| s3n bystander minus s3n detector, same trial (the notice'"'"'s delay on shm) |'
    for t in "${TRANSPORTS[@]}"; do printf ' %s |' "$(pair_diff "$t" s3n)"; done
    echo
    printf '| s3/s3n bystander trials in which a failure notice had arrived by the error |'
    for t in "${TRANSPORTS[@]}"; do
        printf ' %s |' "$(awk -F'\t' -v t="$t" '!/^#/ && $2 == "failstop" && $3 == t && $5 == "-" &&
            $4 ~ /^s3/ && $6 == "bystander" && $7 == "failstop" { n++; if ($12 > 0) y++ }
            END { printf "%s: %d of %d", "s3+s3n", y, n }' "$TSV")"
    done
    echo
    printf '| largest \|CLOCK_REALTIME − CLOCK_MONOTONIC\| difference of a measurement (µs; a clock step would show here) |'
    for t in "${TRANSPORTS[@]}"; do
        printf ' %s |' "$(awk -F'\t' -v t="$t" '!/^#/ && $3 == t && $7 == "failstop" {
            d = $8 - $10; if (d < 0) d = -d; if (d > m) m = d } END { printf "%.1f", m }' "$TSV")"
    done
    echo
}

# Kernel teardown of the victim (all failstop runs; it does not depend on
# the keepalive).
reap_row() {
    local t med lo hi n
    printf '| %s |' "$1"
    for t in "${TRANSPORTS[@]}"; do
        read -r med lo hi n <<<"$(awk -F'\t' -v t="$t" -v re="^($2)\$" '
            !/^#/ && $2 == "failstop" && $3 == t && $4 ~ re && $10 != "-" { a[++n] = $10 / 1000 }
            END { if (!n) { print "- - - 0"; exit }
                  for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { x = a[j]; a[j] = a[j-1]; a[j-1] = x }
                  print (n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2), a[1], a[n], n }' "$RUNS")"
        printf ' %s [%s–%s] (n=%s) |' "$(fmt_ms "$med")" "$(fmt_ms "$lo")" "$(fmt_ms "$hi")" "$n"
    done
    echo
}

# Median [min–max] of bystander − detector within the same trial (ms).
pair_diff() {
    awk -F'\t' -v t="$1" -v s="$2" '
    !/^#/ && $2 == "failstop" && $3 == t && $4 == s && $5 == "-" && $7 == "failstop" { v[$1 "/" $6] = $8 / 1000; tr[$1] = 1 }
    END {
        for (k in tr) if ((k "/bystander") in v && (k "/detector") in v) a[++n] = v[k "/bystander"] - v[k "/detector"]
        if (!n) { print "—"; exit }
        for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { x = a[j]; a[j] = a[j-1]; a[j-1] = x }
        printf "%+.3f [%+.3f – %+.3f] (n=%d)\n", (n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2), a[1], a[n], n
    }' "$TSV"
}

ka_table() {
    local k t s r row
    [ ${#KAS[@]} -gt 0 ] || return 0
    echo "| \`pml_failstop_ucx_keepalive_ms\` |$(for s in "${KA_SCENARIOS[@]}"; do for t in "${TRANSPORTS[@]}"; do
        printf ' %s %s |' "$t" "$([ "$s" = s2 ] && echo 's2 (call → error)' || echo "$s (death → error)")"; done; done)"
    echo "|---|$(for s in "${KA_SCENARIOS[@]}"; do for t in "${TRANSPORTS[@]}"; do printf -- '---:|'; done; done)"
    for k in $(printf '%s\n' "${KAS[@]}" 100 | sort -n | uniq); do
        row="| $k$(if [ "$k" = 100 ]; then echo ' (default)'; fi) |"
        for s in "${KA_SCENARIOS[@]}"; do
            r=detector
            [ "$s" = s2 ] && r=idle
            [[ $s == s3* ]] && r=bystander
            for t in "${TRANSPORTS[@]}"; do
                if [ "$k" = 100 ]; then row+=" $(cell failstop "$t" "$s" - "$r") |"
                else row+=" $(cell failstop "$t" "$s" "$k" "$r") |"; fi
            done
        done
        echo "$row"
    done
}

# What the stock PMLs did: survivors' outcomes and how the runs ended.
base_table() {
    local b t s
    [ ${#BASES[@]} -gt 0 ] || return 0
    echo "| PML | transport | scenario | runs | how the runs ended | what the survivors got |"
    echo "|---|---|---|---:|---|---|"
    for b in "${BASES[@]}"; do
        for t in "${TRANSPORTS[@]}"; do
            for s in "${BASE_SCENARIOS[@]}"; do
                awk -F'\t' -v b="$b" -v t="$t" -v s="$s" -v tmo="$BASE_TMO" -v tsv="$TSV" '
                BEGIN {
                    while ((getline l < tsv) > 0) {
                        split(l, f, "\t")
                        if (f[2] == b && f[3] == t && f[4] == s)
                            got[f[6] ": " f[7] (f[7] == "error" ? " " f[15] : "") (f[8] > 0 ? sprintf(" after %.1f ms", f[8] / 1000) : "")]++
                    }
                }
                !/^#/ && $2 == b && $3 == t && $4 == s {
                    n++; st[$6 == "timeout" ? "hang, killed by the " tmo " s timeout" : $6]++
                }
                END {
                    if (!n) exit
                    e = ""; for (k in st) e = e (e == "" ? "" : "; ") k " " st[k] "/" n
                    g = ""; for (k in got) g = g (g == "" ? "" : "; ") k " (" got[k] ")"
                    printf "| %s | %s | %s | %d | %s | %s |\n", (b == "ucx" ? "pml ucx" : "ob1"), t, s, n, e,
                        (g == "" ? "nothing: no MPI call returned" : g)
                }' "$RUNS"
            done
        done
    done
}

plot() {
    local dat med labels order="" t
    command -v gnuplot >/dev/null || { warn "gnuplot missing, no plot"; return 0; }
    dat=$(mktemp) med=$(mktemp)
    for t in "${TRANSPORTS[@]}"; do
        order+="$t/s1/detector $t/s2/idle $t/s3/detector $t/s3/bystander $t/s3n/detector $t/s3n/bystander "
    done
    # one x position per (transport, scenario, role) of the default config
    awk -F'\t' -v dat="$dat" -v med="$med" -v order="$order" '
    BEGIN { m = split(order, o, " ") }
    !/^#/ && $2 == "failstop" && $5 == "-" && $7 == "failstop" {
        k = $3 "/" $4 "/" $6
        val[k, ++cnt[k]] = ($4 == "s2" ? $9 : $8) / 1000
    }
    END {
        srand(1)
        for (q = 1; q <= m; q++) {
            k = o[q]
            if (!(k in cnt)) continue
            split(k, p, "/")
            x = ++n
            lab = lab (n > 1 ? ", " : "") sprintf("\"%s\\n%s %s\" %d", p[1], p[2],
                (p[3] == "detector" ? "recv" : p[3]), x)
            c = cnt[k]
            for (i = 1; i <= c; i++) {
                a[i] = val[k, i]
                printf "%f\t%f\t%d\n", x + (rand() - 0.5) * 0.35, a[i], (p[1] ~ /shm$/) >> dat
            }
            for (i = 2; i <= c; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { z = a[j]; a[j] = a[j-1]; a[j-1] = z }
            printf "%f\t%f\n", x - 0.25, (c % 2 ? a[(c+1)/2] : (a[c/2] + a[c/2+1]) / 2) >> med
        }
        print lab
    }' "$TSV" >"$dat.labels"
    labels=$(cat "$dat.labels")
    if [ ! -s "$dat" ]; then rm -f "$dat" "$dat.labels" "$med"; return 0; fi
    gnuplot <<EOF || warn "gnuplot failed"
set terminal pngcairo size 1000,560 font ",10" noenhanced
set output '$PNG'
set datafile separator "\t"
set logscale y
set ylabel "ms (log scale): death -> error; s2: MPI_Recv call -> error"
set xtics ($labels) font ",9"
set xrange [0.4:*]
set bmargin 4
set grid ytics
set key top left
set title "failstop: time until a survivor's error, one point per trial (bar: median)"
plot '$dat' using 1:(\$3 == 1 ? \$2 : 1/0) with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'shared memory', \
     '$dat' using 1:(\$3 == 0 ? \$2 : 1/0) with points pt 5 ps 0.8 lc rgb '#d62728' title 'TCP', \
     '$med' using 1:2:(0.5):(0) with vectors nohead lw 3 lc rgb 'black' title 'median'
EOF
    rm -f "$dat" "$dat.labels" "$med"
}

report() {
    local envs lost
    envs=$(env | grep -E '^(UCX_|OMPI_MCA_)' | sort | tr '\n' ' ' || true)
    {
        echo "# Failure-detection time (generated by \`bench/killtime.sh\`, FS_KT_NAME=$NAME)"
        echo
        echo "Generated on $START_DATE in $(($(date +%s) - START)) s; do not edit, rerun"
        echo "\`bash bench/killtime.sh BUILD_DIR\`."
        echo
        echo "| | |"
        echo "|---|---|"
        echo "| CPU | $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) cores (nproc) |"
        echo "| kernel | $(uname -sr) |"
        echo "| failstop | \`libfailstop.so\` built $LIBDATE, sha256 $LIBSUM…; git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(if [ -n "$(git -C "$ROOT" status --porcelain -- src include 2>/dev/null)" ]; then echo ' (src/include modified)'; fi) |"
        echo "| Open MPI / UCX | $(ompi_info --version 2>/dev/null | head -1) / $(ucx_info -v 2>/dev/null | head -1 | sed 's/^# *//') |"
        echo "| load average | $LOAD_START at start, $(cut -d' ' -f1-3 /proc/loadavg) at end |"
        echo "| other MPI jobs running at a trial's start | $(awk -F'\t' '!/^#/ && $9 == 1' "$RUNS" | wc -l) of $(grep -vc '^#' "$RUNS") runs (waited up to ${WAIT_IDLE} s for them first) |"
        echo "| UCX_*/OMPI_MCA_* in environment | ${envs:-none} |"
        echo "| parameters | $TRIALS trials per cell, death ${LEAD} ms + uniform 0–${JITTER} ms after the start signal, s2 idle ${IDLE} ms, timeout ${TMO} s (baseline ${BASE_TMO} s) |"
        echo
        cat <<'EOF'
**Method.** One trial is one `failstop-run --oversubscribe --bind-to none`
(2 ranks; 3 for s3/s3n) of `bench/fs_killtime`: a killed rank cannot be
reused, and on 2 cores more ranks per run would oversubscribe polling
survivors and let earlier failures' notices disturb later ones.  The
victim sleeps until a death time agreed by point-to-point messages (random
within a 1 s window: UCX keepalive rounds run at a fixed period, and a
fixed death time would always hit the same phase of it), reads
CLOCK_REALTIME (and CLOCK_MONOTONIC) into a shared mapping and calls
`raise(SIGKILL)` on the next line; a survivor reads the clocks right after
its MPI call returns.  The stamp precedes the signal by the store and the
system-call entry, and the survivor's stamp follows the error by the MPI
return path: a measurement overstates the signal-to-error time by well
under 10 µs.  The kernel's teardown of the victim is included on purpose.
TCP = `-x UCX_TLS=tcp`; shared memory = failstop's default UCX
configuration (sysv/posix with `MM_ERROR_HANDLING=y`, keepalive 100 ms);
OFI = failstop's libfabric transport over the named provider
(`pml_failstop_transport=ofi`).  Every rank runs on one host, so failstop's
detector also watches its observed process exit (`src/detector/pidwatch.c`).
Only outcomes with the error class `MPIX_ERR_RANK_FAIL_STOP` count; any
other outcome is shown as a count of bad trials.

EOF
        echo "## Time until a survivor's error"
        echo
        main_table
        echo
        extra_table
        echo
        [ -f "$PNG" ] && { echo "![$NAME]($NAME.png)"; echo; }
        if [ ${#KAS[@]} -gt 0 ]; then
            echo "## Keepalive interval"
            echo
            echo "Same cells with \`--mca pml_failstop_ucx_keepalive_ms K\` (UCX_KEEPALIVE_INTERVAL);"
            echo "$KA_TRIALS trials each, ms, median [min–max]."
            echo
            ka_table
            echo
        fi
        if [ ${#BASES[@]} -gt 0 ]; then
            echo "## Baseline: stock Open MPI PMLs with \`mpirun --enable-recovery\`"
            echo
            echo "Same program and scenarios, \`--mca pml ucx\` (TCP: \`-x UCX_TLS=tcp,self\`) and"
            echo "\`--mca pml ob1 --mca btl vader,self\` (TCP: \`tcp,self\`); $BASE_TRIALS trials each."
            echo
            base_table
            echo
        fi
        lost=$(lost_runs)
        echo "## Failstop runs that did not end normally"
        echo
        if [ -z "$lost" ]; then
            echo "None."
        else
            echo "| trial | transport | scenario | keepalive | status | log |"
            echo "|---:|---|---|---|---|---|"
            printf '%s\n' "$lost" | awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | `%s.{out,err}` |\n", $1, $3, $4, $5, $6, $11 }'
        fi
        echo
        echo "Raw data: [$NAME.tsv]($NAME.tsv) (one row per measurement; \`t_us\` death → error,"
        echo "\`call_us\` call → error, \`reap_us\` death → victim reaped), [${NAME}_runs.tsv](${NAME}_runs.tsv)"
        echo "(one row per mpirun)."
    } >"$MD"
}

# ---- main ---------------------------------------------------------------------

main() {
    local max=0 c cfg tr scen ka n trial
    trap on_signal INT TERM
    if [ "${FS_KT_REPORT_ONLY:-0}" = 1 ]; then
        [ -f "$TSV" ] && [ -f "$RUNS" ] || die "no $TSV / $RUNS to report on"
        START=$(date +%s)
        START_DATE="$(date -u -r "$RUNS" '+%Y-%m-%d %H:%M UTC') (report regenerated)"
        LOAD_START="(not recorded)"
        LIBSUM="?" LIBDATE="?"
        plot
        report
        echo "killtime: report in $MD" >&2
        return 0
    fi
    command -v mpirun >/dev/null || die "mpirun not found"
    build_failstop
    build_bin
    snapshot
    LIBSUM=$(sha256sum "$(dirname "$RUNNER")/../lib/libfailstop.so" | cut -c1-16)
    LIBDATE=$(date -u -r "$(dirname "$RUNNER")/../lib/libfailstop.so" '+%Y-%m-%d %H:%M UTC')
    define_cells
    rm -rf "$LOGS"
    mkdir -p "$LOGS" "$PERF"
    START=$(date +%s)
    START_DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
    LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
    printf '# trial\tconfig\ttransport\tscenario\tkeepalive\trole\toutcome\tt_us\tcall_us\tmono_us\tblocked_us\tnotices_received\treap_us\tstatus\terr\n' >"$TSV"
    printf '# trial\tconfig\ttransport\tscenario\tkeepalive\tstatus\tseconds\tload1\tother_mpi\treap_us\tlog\n' >"$RUNS"
    for c in "${CELLS[@]}"; do
        n=${c##* }
        if [ "$n" -gt "$max" ]; then max=$n; fi
    done
    for ((trial = 1; trial <= max; trial++)); do
        for c in "${CELLS[@]}"; do
            read -r cfg tr scen ka n <<<"$c"
            [ "$trial" -le "$n" ] || continue
            run_one "$trial" "$cfg" "$tr" "$scen" "$ka"
        done
    done
    plot
    report
    echo "killtime: done in $(($(date +%s) - START)) s; report in $MD" >&2
}

main
