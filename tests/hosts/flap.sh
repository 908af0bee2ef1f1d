#!/usr/bin/env bash
# tests/hosts/flap.sh BUILD_DIR: link flaps under a job across simulated
# hosts (tests/hosts/hosts.sh), issue 40.  The last host's (hH's) link goes
# down and up while x_flap (tests/mpi/x_flap.c) exchanges checked messages
# in both directions, point-to-point and collectives, eager and rendezvous
# sizes.  Scenarios (each a job of its own):
#   flap0.1 flap0.3 flap1 flap2   one flap of that many seconds (mix;
#              any flapS in FS_FLAP_SCENARIOS: S seconds)
#   flaps5     five 0.3 s flaps, one every 2 s (mix)
#   wireup     a flap (FS_FLAP_PHASE_S: 2 s) while every rank connects to the others: each is
#              held past MPI_Init's address exchange (pml_failstop_inject
#              RANK:hold=PATH) until the link is down
#   rndv       a flap during 64 MiB rendezvous transfers across hosts
#   coll       a flap during MPI_Allreduce calls
#   fin        a flap during MPI_Finalize (down once every rank is out of
#              the last barrier; each enters MPI_Finalize on seeing it down)
#   For these: nobody suspected (no failstop warning, no record of a
#   failure, an error or a cut-off), every payload checked, every rank OK,
#   failstop-run --strict exits 0, and the flap fell where the scenario
#   says (x_flap's own account: busy, MPI_Init, MPI_Finalize times).
#   hold       hH's link down for 10 s, with hb_timeout_host_ms raised to
#              20 s: the transport's established links hold through an
#              outage of more than twice the default tolerance (its own
#              timeouts are longer: docs/DESIGN.md, "Who declares a process
#              failed"), so that within the tolerance only the detector
#              decides; as above, nobody suspected and exit 0 (3 hosts only)
#   reset      every TCP connection between the job's ranks on h1 and hH
#              destroyed on h1 (ss -K: that side's socket aborts, the other
#              gets a reset; a forged RST or a middlebox does the same)
#              while x_flap reset exchanges point-to-point messages: the
#              broken links' errors are suspicions the detector decides, so
#              nobody is declared failed or in any failed group, no failure
#              record, the broken pairs (exactly h1 x hH) get MPI_ERR_INTERN,
#              every other pair goes on checked, every rank OK, exit 0
#   outage     hH's link down for FS_FLAP_OUTAGE_S (8) s, longer than the
#              tolerance, then up: the others get the class for hH's ranks
#              and finish (x_net, tests/mpi/x_net.c), hH's ranks end (the
#              partition rule, or excluded once the link is back), nobody
#              else is suspected, exit status 0, never a hang.
# At each host count of FS_FLAP_HOSTS ("3 6"; 3 ranks a host at 3 hosts, 2
# at more), every scenario FS_FLAP_REPEAT (3) times, each job under a hard
# limit (FS_FLAP_LIMIT, 90 s).  FS_FLAP_ONLY: a regular expression of
# scenario names.  FS_HOSTS_LAUNCHER=slurm: each job failstop-run inside
# a Slurm allocation of its own (tests/hosts/slurm.sh; ranks started by
# srun).  FS_FLAP_TIMES=FILE appends "scenario hosts rank
# down up first-known all-known" per survivor of an outage (bench).
# Exit status: 0 all passed, 1 something failed, 2 usage/setup error.
set -u -o pipefail

die() { echo "flap.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
BUILD=$(cd "$1" && pwd) || die "no build directory $1"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN="$BUILD/bin/failstop-run"
PROG="$BUILD/tests/mpi/x_flap"
XNET="$BUILD/tests/mpi/x_net"
[ -x "$RUN" ] && [ -x "$PROG" ] && [ -x "$XNET" ] || die "build first ($RUN, $PROG, $XNET)"
case $BUILD/ in
/tmp/*|/var/tmp/*) die "the build ($BUILD) is under /tmp or /var/tmp, which the simulated hosts do not share" ;;
esac
REPEAT=${FS_FLAP_REPEAT:-3}
ONLY=${FS_FLAP_ONLY:-.}
LIMIT=${FS_FLAP_LIMIT:-90}
OUTAGE=${FS_FLAP_OUTAGE_S:-8}
PHASE_S=${FS_FLAP_PHASE_S:-2}   # the flap of wireup, rndv, coll and fin
SCENARIOS=${FS_FLAP_SCENARIOS:-flap0.1 flap0.3 flap1 flap2 flaps5 wireup rndv coll fin hold reset outage}
# shellcheck source=slurm.sh
. "$HERE/slurm.sh"

now() { date +%s.%N; }

# link_flap SECONDS: hH's link down (its time in $HOSTS_DIR/down, which
# x_flap reads at its end), then up again
link_flap() {
    local t
    t=$(now)
    hosts_link "$H" down
    [ -e "$HOSTS_DIR/down" ] || echo "$t" > "$HOSTS_DIR/down"
    sleep "$1"
    hosts_link "$H" up
    now > "$HOSTS_DIR/up"
}

# wait_for FILE [TRIES]: up to TRIES x 50 ms (default 15 s)
wait_for() {
    local i
    for ((i = 0; i < ${2:-300}; i++)); do
        [ -e "$1" ] && return 0
        sleep 0.05
    done
    return 1
}

# every rank is past MPI_Init's address exchange (records come to h1's
# status directory through failstop-run's filter)
wait_all_up() {
    local i r
    for ((i = 0; i < 300; i++)); do
        for ((r = 0; r < NP; r++)); do
            [ -e "$ST/up.$r" ] || break
        done
        [ "$r" -eq "$NP" ] && return 0
        sleep 0.05
    done
    return 1
}

# reset_links: destroys, on h1, every established TCP connection of the
# job's ranks (x_flap's sockets: not the runtime's) to hH
reset_links() {
    local ports p n=0
    ports=$(hosts_run 1 ss -Htnp state established dst "10.77.0.$H" |
            awk '/"x_flap"/ { sub(/.*:/, "", $3); print $3 }')
    for p in $ports; do
        hosts_run 1 ss -HK state established dst "10.77.0.$H" sport = ":$p" > /dev/null &&
            n=$((n + 1))
    done
    now > "$HOSTS_DIR/down"
    [ "$n" -gt 0 ] || { echo "no connection of the job from h1 to h$H to reset"; return 1; }
}

# act SCENARIO: what happens to hH's link while the job runs
act() {
    local i
    case $1 in
    wireup)
        wait_all_up || { echo "not every rank reached MPI_Init's connection setup"; return 1; }
        hosts_link "$H" down
        now > "$HOSTS_DIR/down"
        : > "$HOSTS_DIR/go"
        sleep "$PHASE_S"
        hosts_link "$H" up
        now > "$HOSTS_DIR/up"
        return 0 ;;
    fin)
        # every rank is out of the last barrier (its own cue) and waits for
        # the link to go down before it calls MPI_Finalize
        wait_for "$HOSTS_DIR/ready" || { echo "no ready cue from x_flap"; return 1; }
        for ((i = 0; i < NP; i++)); do
            wait_for "$HOSTS_DIR/finalize.$i" 600 ||
                { echo "no finalize cue from rank $i"; return 1; }
        done
        link_flap "$PHASE_S"
        return 0 ;;
    esac
    wait_for "$HOSTS_DIR/ready" || { echo "no ready cue from the program"; return 1; }
    # rndv's cue comes with a 64 MiB transfer in flight (0.4 s or more)
    [ "$1" = rndv ] || sleep 0.5
    case $1 in
    hold) link_flap 10 ;;
    reset) reset_links ;;
    flap*s5) for ((i = 0; i < 5; i++)); do
                 [ "$i" -gt 0 ] && sleep 1.7
                 link_flap 0.3
             done ;;
    flap*) link_flap "${1#flap}" ;;
    rndv|coll) link_flap "$PHASE_S" ;;
    outage) link_flap "$OUTAGE" ;;
    esac
}

# failures recorded anywhere (h1's status directory, and hH's own, where
# its ranks write what cannot reach failstop-run once cut off)
failure_records() {
    { ls "$ST"; hosts_run "$H" ls "$ST" 2>/dev/null; } |
        grep -E '^(learned-|declared\.|cutoff\.|errored\.|runtime_lost\.)' | sort -u | tr '\n' ' '
}

# check_flap OUT SCENARIO: x_flap's own account of where the flap fell
check_phase() {
    local out=$1 sc=$2 down up busy=0 r lines
    down=$(cat "$HOSTS_DIR/down" 2>/dev/null) || { echo "; the link never went down"; return; }
    up=$(cat "$HOSTS_DIR/up" 2>/dev/null) || up=$down
    lines=$(grep -c "^X_FLAP" "$out")
    [ "$lines" -eq "$NP" ] || echo "; $lines of $NP X_FLAP lines"
    case $sc in
    rndv|coll)
        busy=$(grep -c "^X_FLAP .* busy 1$" "$out")
        [ "$busy" -gt 0 ] || echo "; no rank had its $sc operation in flight when the link went down" ;;
    wireup)
        # every rank was still in MPI_Init (connecting) when the link went down
        r=$(awk -v d="$down" '/^X_FLAP/ && $8 < d { n++ } END { print n + 0 }' "$out")
        [ "$r" -eq 0 ] || echo "; $r rank(s) left MPI_Init before the link went down" ;;
    fin)
        # every rank entered MPI_Finalize while the link was down
        r=$(awk -v d="$down" -v u="$up" '/^X_FLAP/ && ($10 < d || $10 > u) { n++ } END { print n + 0 }' "$out")
        [ "$r" -eq 0 ] || echo "; $r rank(s) entered MPI_Finalize outside the flap" ;;
    esac
}

# check_reset OUT: the links between h1 and hH broke, nobody was blamed
check_reset() {
    local out=$1 r want got recs lines
    lines=$(grep -c "^X_FLAP_RESET" "$out")
    [ "$lines" -eq "$NP" ] || echo "; $lines of $NP X_FLAP_RESET lines"
    # ranks are mapped by slot: h1 holds 0..PER-1, hH the last PER
    for ((r = 0; r < NP; r++)); do
        want=0
        { [ "$r" -lt "$PER" ] || [ "$r" -ge $((NP - PER)) ]; } && want=$PER
        got=$(awk -v r="$r" '$1 == "X_FLAP_RESET" && $3 == r { print $5 }' "$out")
        [ "${got:-x}" = "$want" ] || echo "; rank $r: ${got:-no} broken link(s), not $want"
        # a rank whose links broke had its detector ask the peers' hosts
        got=$(awk -v r="$r" '$1 == "X_FLAP_RESET" && $3 == r { print $7 }' "$out")
        if [ "$want" -gt 0 ]; then
            [ "${got:-0}" -ge 1 ] || echo "; rank $r: its detector asked nobody's host"
        fi
    done
    # failstop said only that links broke locally, blaming nobody
    grep '\[failstop:[0-9]*\]' "$out" | grep -v "broke locally: .*not blaming the peer" |
        grep -v "reported as local errors" | head -n 1 | sed 's/^/; failstop spoke: /'
    recs=$(failure_records | tr ' ' '\n' | grep -v '^errored\.' | tr '\n' ' ')
    [ -z "${recs// /}" ] || echo "; failure records: $recs"
}

# run SCENARIO: one job; prints PASS/FAIL; returns 0 if passed
run() {
    local sc=$1 out=$HOSTS_DIR/out rc why="" ok t0=$SECONDS left secs=5 mode=mix inject="" r
    local prog=("$PROG") strict=1 opts=()
    rm -rf "$ST" "$HOSTS_DIR"/{ready,finalize.*,down,up,go}
    mkdir -p "$ST"
    hosts_run "$H" rm -rf "$ST"
    hosts_run "$H" mkdir -p "$ST"
    # traffic goes on until the detector would have decided on the
    # silence (hb_timeout_host_ms after the flap's start) and beyond
    case $sc in
    flaps5) secs=12 ;;
    flap*) secs=$(awk -v f="${sc#flap}" 'BEGIN { printf "%d", f + 5.99 }') ;;
    hold) secs=16 opts=(--mca pml_failstop_hb_timeout_host_ms 20000) ;;
    wireup) secs=4
            for ((r = 0; r < NP; r++)); do inject+="${inject:+,}$r:hold=$HOSTS_DIR/go"; done ;;
    rndv) mode=rndv secs=5 ;;
    coll) mode=coll secs=5 ;;
    fin) mode=fin secs=2 ;;
    reset) mode=reset secs=2 ;;
    outage) secs=$((OUTAGE + 2)) strict= ;;
    esac
    if [ "$sc" = outage ]; then
        prog=("$XNET" "$secs" "h$H")
    else
        prog+=("$mode" "$secs")
    fi
    # --strict: every rank exits 0 (not for outage, whose cut-off ranks end)
    hosts_run 1 timeout -k 5 "$LIMIT" "${CLUSTER_JOB[@]}" "$RUN" ${strict:+--strict} --verbose --status-dir "$ST" \
        ${inject:+--mca pml_failstop_inject "$inject"} "${opts[@]}" -np "$NP" "${prog[@]}" \
        > "$out" 2>&1 < /dev/null &
    local job=$!
    act "$sc" > "$HOSTS_DIR/act.out" 2>&1 || why="$(cat "$HOSTS_DIR/act.out")"
    wait "$job"
    rc=$?
    if [ "$rc" -eq 124 ]; then
        { echo "--- processes at the time limit"
          ps -eo pid,ppid,stat,etime,args | grep -E "mpirun|orted|x_flap|x_net|failstop" |
              grep -v grep; } >> "$out"
    fi
    ok=$(grep -c "^MPITEST OK" "$out")
    if [ "$sc" = outage ]; then
        local want=$((NP - PER)) rec
        [ "$ok" -eq "$want" ] || why="$why; $ok of $want survivors OK"
        for ((r = NP - PER; r < NP; r++)); do
            rec=$(cat "$ST/rank.$r" 2>/dev/null || hosts_run "$H" cat "$ST/rank.$r" 2>/dev/null)
            [[ $rec == "exit 1 "* ]] || why="$why; rank $r on h$H: '${rec%%$'\n'*}', not an end by exclusion"
        done
        # the survivors' failed groups are exactly hH's ranks (x_net), and
        # no survivor learned that another survivor failed (hH's cut-off
        # ranks believe the others failed: learned-V.R, R on hH)
        for f in "$ST"/learned-*; do
            [ -e "$f" ] || continue
            f=${f##*/learned-}
            [ "${f%%.*}" -ge $((NP - PER)) ] || [ "${f##*.}" -ge $((NP - PER)) ] ||
                why="$why; rank ${f##*.} learned that rank ${f%%.*} failed, both not on h$H"
        done
    elif [ "$sc" = reset ]; then
        [ "$ok" -eq "$NP" ] || why="$why; $ok of $NP ranks OK"
        why="$why$(check_reset "$out")"
    else
        [ "$ok" -eq "$NP" ] || why="$why; $ok of $NP ranks OK"
        # failstop says nothing in a run where nothing fails (its warnings
        # name suspicions, failures, exclusions, a cut-off side)
        grep -q '\[failstop:[0-9]*\]' "$out" &&
            why="$why; failstop spoke: $(grep -m1 '\[failstop:[0-9]*\]' "$out")"
        local recs
        recs=$(failure_records)
        [ -z "$recs" ] || why="$why; failure records: $recs"
        why="$why$(check_phase "$out" "$sc")"
    fi
    [ "$rc" -eq 0 ] || why="$why; exit status $rc"
    left=$(cluster_left "$H" 'x_flap|x_net')
    [ "$left" -eq 0 ] || why="$why; $left processes of the job left on h$H"
    if [ -n "${FS_FLAP_TIMES:-}" ] && [ "$sc" = outage ]; then
        grep "^X_NET" "$out" | while read -r _ _ rr _ _ _ _ _ fk _ ak; do
            echo "$sc $HN $rr $(cat "$HOSTS_DIR/down") $(cat "$HOSTS_DIR/up") $fk $ak"
        done >> "$FS_FLAP_TIMES"
    fi
    cluster_restore "$H" ||
        echo "NOTE flap: h$H and the other hosts still cannot reach each other after 5 s"
    if [ -z "$why" ]; then
        echo "PASS $T-flap $sc ($HN hosts, $NP ranks, $((SECONDS - t0)) s)"
        return 0
    fi
    local keep="${TMPDIR:-/tmp}/fs-flap-fail.$sc.$HN.$k.log"
    echo "FAIL $T-flap $sc ($HN hosts, $NP ranks): ${why#; } (output: $keep)"
    cp "$out" "$keep"
    grep -v "Connection refused\|Connection timed out\|Connection reset" "$out" | tail -n 25
    return 1
}

fail=0
for HN in ${FS_FLAP_HOSTS:-3 6}; do
    H=$HN
    PER=2
    [ "$HN" -le 3 ] && PER=3
    NP=$((HN * PER))
    cluster_up "$HN" "$PER" ||
        die "cannot create the simulated hosts (root and iproute2 needed; FS_HOSTS_LAUNCHER=slurm: Slurm's daemons)"
    T=hosts; [ -n "$SLURM_DIR" ] && T=slurm    # the PASS/FAIL lines' prefix
    export FS_NET_DIR="$HOSTS_DIR"
    ST=/tmp/fs-flap-status.$$     # the same path on h1 (shared) and on hH (its own)
    for ((k = 1; k <= REPEAT; k++)); do
        for sc in $SCENARIOS; do
            [[ $sc =~ $ONLY ]] || continue
            [ "$sc" = hold ] && [ "$HN" -gt 3 ] && continue
            run "$sc" || fail=1
        done
    done
    hosts_run "$H" rm -rf "$ST"
    rm -rf "$ST"
    cluster_down
done
exit $fail
