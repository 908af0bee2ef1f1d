#!/usr/bin/env bash
# tests/hosts/net.sh BUILD_DIR: the network misbehaves under a job on
# FS_NET_HOSTS (3) simulated hosts (tests/hosts/hosts.sh), two ranks each,
# mpirun on h1; x_net (tests/mpi/x_net.c) exchanges checked messages
# between every pair of ranks while this script acts on the last host's
# (h3's) link or processes (link flaps: tests/hosts/flap.sh):
#   loss       5% of h3's packets dropped each way (nftables;
#              FS_NET_LOSS_PCT): the same
#   delay      h3's frames 20 ms +- 10 ms late each way (FS_NET_DELAY_MS,
#              FS_NET_JITTER_MS): netdelay, a relay between h3's port and
#              the switch (this kernel has no netem)
#   startcut   h3 and h2 cannot reach each other when the job starts
#              (each one's connects to the other fail at once: host
#              unreachable) until FS_NET_CUT_S (1) s after the first
#              rank reached MPI_Init's connection setup: nobody suspected,
#              nothing fails
#   kill       SIGKILL to h3's first rank: the others get the class for it
#   crash      h3 dies as a node does (link down, every process killed at
#              once, Open MPI's daemon too): the others get the class for
#              h3's ranks, finalize, and failstop-run ends the job (mpirun
#              4.1 would wait for the lost ranks for ever), exit status 0
#   daemon     SIGKILL to Open MPI's daemon (orted) on h3, its ranks alive:
#              they lose their runtime and end themselves (runtime_lost.R
#              on h3); the others as for a crash
#   (FS_HOSTS_LAUNCHER=slurm: each job failstop-run inside an allocation of
#   its own, ranks started by srun, tests/hosts/slurm.sh; kill, crash and
#   partition only, as above; a crash takes slurmd with it)
#   (under Open MPI 5 and mpirun crash and daemon end the whole job: PRRTE 3.0 ends it
#   on losing a daemon; the test then checks that it ends, promptly, and
#   says why)
#   partition  h3's link goes down for good, its processes alive: the
#              others as for a crash; h3's ranks find themselves cut off
#              and end themselves (exit 1 and the cutoff.R record, on
#              h3), before Open MPI's daemon would fence them
# Every scenario FS_NET_REPEAT times (default 10; startcut half as often,
# FS_NET_STARTCUT_REPEAT), each run under a hard
# limit (FS_NET_LIMIT seconds, default 90).  FS_NET_ONLY: a regular
# expression of scenario names to run.  FS_NET_DEBUG: timings and process
# lists in the output.
# FS_NET_TIMES=FILE appends "scenario hosts rank action-time first-error
# first-known all-known" per survivor (wall clock; bench/hosts.sh);
# FS_NET_ENDS=FILE "scenario hosts action-time last-survivor-end job-end"
# per run (bench/slurm.sh).
# Exit status: 0 all passed, 1 something failed, 2 usage/setup error.
set -u -o pipefail

die() { echo "net.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
BUILD=$(cd "$1" && pwd) || die "no build directory $1"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN="$BUILD/bin/failstop-run"
PROG="$BUILD/tests/mpi/x_net"
DELAY="$BUILD/tests/hosts/netdelay"
[ -x "$RUN" ] && [ -x "$PROG" ] && [ -x "$DELAY" ] || die "build first ($RUN, $PROG, $DELAY)"
REPEAT=${FS_NET_REPEAT:-10}
# Open MPI 5's runtime (PRRTE) installs prterun beside mpirun
PRRTE=0
mpirun_dir=$(dirname "$(readlink -f "$(command -v mpirun)")")
[ -x "$mpirun_dir/prterun" ] && PRRTE=1
ONLY=${FS_NET_ONLY:-.}
# under Slurm (FS_HOSTS_LAUNCHER=slurm): the failures (there is no Open MPI
# daemon to kill); the network's misbehaviour is the same under any launcher
[ "${FS_HOSTS_LAUNCHER:-mpirun}" = slurm ] && ONLY=${FS_NET_ONLY:-^(kill|crash|partition)$}
# shellcheck source=slurm.sh
. "$HERE/slurm.sh"
H=${FS_NET_HOSTS:-3}          # hosts, two ranks each; hH is the one that misbehaves
V1=$((2 * H - 2)) V2=$((2 * H - 1))   # its ranks
cluster_up "$H" 2 || die "cannot create the simulated hosts (root and iproute2 needed; FS_HOSTS_LAUNCHER=slurm: Slurm's daemons)"
# under Slurm there is no Open MPI daemon (srun starts the ranks), and a
# lost node ends no job: PRRTE's rule does not apply
[ -n "$SLURM_DIR" ] && PRRTE=0
T=hosts; [ -n "$SLURM_DIR" ] && T=slurm    # the PASS/FAIL lines' prefix
export FS_NET_DIR="$HOSTS_DIR"
ST=/tmp/fs-net-status.$$     # the same path on h1 (shared) and on hH (its own)

now() { date +%s.%N; }

# hH's frames late by $1 +- $2 ms each way: its port leaves the bridge and a
# relay (netdelay) joins it to a new port, through a veth pair q/r
delay_pid=""
delay_on() {
    local sw="${HOSTS_TAG}sw"
    ip netns exec "$sw" ip link set "p$H" nomaster &&
        ip netns exec "$sw" ip link add "q$H" type veth peer name "r$H" &&
        ip netns exec "$sw" ip link set "r$H" master br0 &&
        ip netns exec "$sw" ip link set "r$H" up &&
        ip netns exec "$sw" ip link set "q$H" up || return 1
    ip netns exec "$sw" "$DELAY" "p$H" "q$H" "$1" "$2" > "$HOSTS_DIR/netdelay.out" 2>&1 &
    delay_pid=$!
}
delay_off() {
    local sw="${HOSTS_TAG}sw"
    [ -n "$delay_pid" ] || return 0
    kill -TERM "$delay_pid" 2>/dev/null
    wait "$delay_pid" 2>/dev/null
    delay_pid=""
    ip netns exec "$sw" ip link del "q$H" 2>/dev/null
    ip netns exec "$sw" ip link set "p$H" master br0
}

# drop PCT% of h3's IP packets in each direction (nftables, in h3)
loss_on() {
    ip netns exec "$(hosts_ns "$H")" nft -f - <<NFT
table inet fsloss {
    chain in { type filter hook input priority 0; iifname "eth0" numgen random mod 100 < $1 drop; }
    chain out { type filter hook output priority 0; oifname "eth0" numgen random mod 100 < $1 drop; }
}
NFT
}
loss_off() { ip netns exec "$(hosts_ns "$H")" nft delete table inet fsloss 2>/dev/null; }

# hH and h$1 cannot reach each other: every packet between them is answered
# "host unreachable" (a connect fails at once, as right after a link came
# back); the other hosts, and Open MPI's daemons (which talk to mpirun on
# h1 only), are untouched
cut_on() {
    ip netns exec "$(hosts_ns "$H")" nft -f - <<NFT
table inet fscut {
    chain in { type filter hook input priority 0; ip saddr 10.77.0.$1 reject with icmp type host-unreachable; }
    chain out { type filter hook output priority 0; ip daddr 10.77.0.$1 reject with icmp type host-unreachable; }
}
NFT
}
cut_off() { ip netns exec "$(hosts_ns "$H")" nft delete table inet fscut 2>/dev/null; }

# the x_net process of world rank $1 on hH (looked for during 3 s)
rank_pid() {
    local p i
    for ((i = 0; i < 30; i++)); do
        for p in $(hosts_pids "$H"); do
            [ "$(cat "/proc/$p/comm" 2>/dev/null)" = x_net ] &&
                [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ] &&
                tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null |
                    grep -qx "OMPI_COMM_WORLD_RANK=$1" && { echo "$p"; return 0; }
        done
        sleep 0.1
    done
    return 1
}

# Open MPI's daemon on hH (4.1: orted; 5: PRRTE's prted)
daemon_pid() {
    local p
    for p in $(hosts_pids "$H"); do
        case $(cat "/proc/$p/comm" 2>/dev/null) in
        orted|prted) echo "$p"; return 0 ;;
        esac
    done
    return 1
}

# act SCENARIO: what happens to h3, once the ranks exchange messages
act() {
    case $1 in
    startcut) ;;        # before the run (run)
    loss) loss_on "${FS_NET_LOSS_PCT:-5}" || { echo "FAIL $T-net loss: cannot drop packets (nftables)"; return 1; } ;;
    delay) delay_on "${FS_NET_DELAY_MS:-20}" "${FS_NET_JITTER_MS:-10}" ||
               { echo "FAIL $T-net delay: cannot set up the relay"; return 1; } ;;
    kill|daemon) kill -KILL "$victim" ;;
    crash) hosts_crash "$H" ;;
    partition) hosts_link "$H" down ;;
    esac
}

# after a run: h3 back to normal (new hosts are not needed: the link, the
# relay and the filter are all that changed; a crash killed nothing of the
# switch)
heal() {
    loss_off
    cut_off
    delay_off
    cluster_restore "$H" ||
        echo "NOTE $T-net: h$H and the other hosts still cannot reach each other after 5 s"
}

# run SCENARIO SECONDS CUT: one job; prints PASS/FAIL; returns 0 if passed
run() {
    local sc=$1 secs=$2 cut=$3 out=$HOSTS_DIR/out rc t_act ok why="" i left rec victim= t0=$SECONDS
    rm -rf "$ST" "$HOSTS_DIR/ready"
    mkdir -p "$ST"
    hosts_run "$H" rm -rf "$ST"
    hosts_run "$H" mkdir -p "$ST"
    if [ "$sc" = startcut ]; then
        cut_on $((H - 1)) || { echo "FAIL $T-net startcut: cannot cut h$H from h$((H - 1)) (nftables)"; return 1; }
    fi
    hosts_run 1 timeout -k 5 "${FS_NET_LIMIT:-90}" "${CLUSTER_JOB[@]}" "$RUN" --verbose --status-dir "$ST" -np $((2 * H)) "$PROG" "$secs" "$cut" \
        > "$out" 2>&1 < /dev/null &
    local job=$!
    if [ "$sc" = startcut ]; then
        # the first rank (on h1) is past MPI_Init's address exchange
        for ((i = 0; i < 300; i++)); do
            [ -e "$ST/up.0" ] && break
            sleep 0.05
        done
        [ -e "$ST/up.0" ] || why="rank 0 never reached MPI_Init's connection setup"
        sleep "${FS_NET_CUT_S:-1}"
        cut_off
    fi
    for ((i = 0; i < 300; i++)); do
        [ -e "$HOSTS_DIR/ready" ] && break
        sleep 0.05
    done
    sleep 0.3          # the exchange under way
    [ "$sc" = kill ] && { victim=$(rank_pid "$V1") || why="rank $V1 not found on h$H"; }
    [ "$sc" = daemon ] && { victim=$(daemon_pid) || why="no Open MPI daemon on h$H"; }
    t_act=$(now)
    local t_ready=$SECONDS
    act "$sc" || why="the scenario could not be set up"
    wait "$job"
    rc=$?
    local t_end node_state=""
    t_end=$(now)
    # under Slurm the job must not have waited for Slurm to declare the lost
    # node down (srun alone does: failstop-run ends it)
    [ -n "$SLURM_DIR" ] && node_state=$(slurm_node_state "h$H")
    [ -n "${FS_NET_DEBUG:-}" ] && echo "timing: start->ready $((t_ready - t0)) s, ready->end $((SECONDS - t_ready)) s" >&2
    [ -n "${FS_NET_DEBUG:-}" ] && { sleep 1; echo "after $sc:"; ps -eo pid,ppid,stat,etime,args | grep -E "orted|prted|mpirun|prterun" | grep -v grep | cut -c1-100; }
    if [ "$rc" -eq 124 ]; then
        # the job's processes as the time limit found them (timeout has
        # ended failstop-run only)
        { echo "--- processes at the time limit"
          ps -eo pid,ppid,stat,etime,args | grep -E "mpirun|prterun|orted|prted|x_net|failstop|awk" |
              grep -v grep; } >> "$out"
    fi
    ok=$(grep -c "^MPITEST OK x_net" "$out")
    if [ "$cut" = - ]; then
        [ "$ok" -eq $((2 * H)) ] || why="$why; $ok of $((2 * H)) ranks OK"
        grep -q "suspected\|declared this process" "$out" && why="$why; a process was suspected"
    elif [ "$sc" = kill ]; then
        [ "$ok" -eq $((2 * H - 1)) ] || why="$why; $ok of $((2 * H - 1)) survivors OK"
    elif [ "$PRRTE" = 1 ] && { [ "$sc" = crash ] || [ "$sc" = daemon ]; }; then
        # PRRTE 3.0 (Open MPI 5) ends the whole job when it loses a daemon
        # (errmgr_dvm.c: "cannot recover"; its fault-tolerant detector
        # component is not built in Debian 13): what failstop owes then is
        # an end, prompt, not a hang, and its report naming the cause
        [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || why="$why; exit status $rc, not the runtime's end"
        grep -q "lost communication with a remote daemon" "$out" ||
            why="$why; PRRTE did not report the lost daemon"
        rc=0
    else
        [ "$ok" -eq $((2 * H - 2)) ] || why="$why; $ok of $((2 * H - 2)) survivors OK"
        # hH's ranks ended themselves (exit 1) and left the record saying why
        local mark="" what=""
        [ "$sc" = partition ] && mark=cutoff what="ended by the partition rule (cut at $t_act)"
        [ "$sc" = daemon ] && mark=runtime_lost what="ended on losing its daemon"
        for i in $V1 $V2; do
            [ -n "$mark" ] || break
            rec=$(hosts_run "$H" cat "$ST/rank.$i" 2>/dev/null | head -n 1)
            { [[ $rec == "exit 1 "* ]] && hosts_run "$H" test -e "$ST/$mark.$i"; } ||
                why="$why; rank $i on h$H: '$rec', not $what"
        done
        grep -q "ranks (rank@host) $V1@h$H $V2@h$H never ended" "$out" ||
            why="$why; failstop-run did not end the job naming h$H's ranks"
        [[ $node_state == down* ]] &&
            why="$why; the job ended only once Slurm had declared h$H down ($node_state)"
    fi
    # under Slurm no step is ever cancelled or interrupted: a dead rank's
    # waiter holds its PMIx connection (else Slurm kills every task), and
    # srun returns by itself once failstop-run has released the holders
    # (SIGUSR2), or is killed by it after a lost node
    local stop_re="CANCELLED|sending Ctrl-C|forcing job termination|interrupt \(one more"
    [ -n "$SLURM_DIR" ] && grep -Eq "$stop_re" "$out" &&
        why="$why; the step was ended from outside: $(grep -Em1 "$stop_re" "$out")"
    [ "$rc" -eq 0 ] || why="$why; exit status $rc"
    left=$(cluster_left "$H" x_net)
    [ "$left" -eq 0 ] || why="$why; $left x_net processes left on h$H"
    if [ -n "${FS_NET_TIMES:-}" ]; then
        grep "^X_NET" "$out" | while read -r _ _ r _ _ _ fe _ fk _ ak; do
            echo "$sc $H $r $t_act $fe $fk $ak"
        done >> "$FS_NET_TIMES"
    fi
    if [ -n "${FS_NET_ENDS:-}" ]; then
        # the last survivor's end (its waiter's record, h1's status
        # directory: the others' come through the launcher) and the job's
        echo "$sc $H $t_act $(cat "$ST"/rank.* 2>/dev/null | awk '$1 == "exit" && $2 == 0 && $3 > m { m = $3 } END { printf "%.6f", m }') $t_end" >> "$FS_NET_ENDS"
    fi
    [ -n "${FS_NET_DEBUG:-}" ] && { echo "action at $t_act"; hosts_run "$H" sh -c "ls -l $ST; head $ST/*; du -sh /tmp; ls /tmp"; } >> "$out" 2>&1
    local t_heal=$SECONDS
    heal
    [ -n "${FS_NET_DEBUG:-}" ] && echo "timing: heal $((SECONDS - t_heal)) s" >&2
    # h3's port is off the bridge: every frame of the job to or from h3 went
    # through the relay, late
    if [ "$sc" = delay ] && ! grep -Eq -- "->q$H [1-9][0-9]* relayed .*->p$H [1-9][0-9]* relayed" "$HOSTS_DIR/netdelay.out"; then
        why="$why; the relay relayed nothing ($(cat "$HOSTS_DIR/netdelay.out"))"
    fi
    if [ -z "$why" ]; then
        if [ "$PRRTE" = 1 ] && { [ "$sc" = crash ] || [ "$sc" = daemon ]; }; then
            echo "PASS $T-net $sc (PRRTE ended the job on losing h$H's daemon, $((SECONDS - t0)) s)"
            return 0
        fi
        echo "PASS $T-net $sc ($(grep -o 'rounds [0-9]*' "$out" | head -n 1), $((SECONDS - t0)) s)"
        return 0
    fi
    local keep="${TMPDIR:-/tmp}/fs-net-fail.$sc.$H.$k.log"
    echo "FAIL $T-net $sc: ${why#; } (output: $keep)"
    cp "$out" "$keep"
    grep -v "Connection refused\|Connection timed out\|Connection reset" "$out" > "$out.f"
    head -n 15 "$out.f"
    echo "    ..."
    tail -n 30 "$out.f"
    return 1
}

fail=0
for ((k = 1; k <= REPEAT; k++)); do
    for sc in loss delay startcut kill daemon crash partition; do
        [[ $sc =~ $ONLY ]] || continue
        # its cut spans the whole connection setup, every run alike: half
        # the runs (CI's time)
        [ "$sc" = startcut ] && [ "$k" -gt "${FS_NET_STARTCUT_REPEAT:-$(((REPEAT + 1) / 2))}" ] && continue
        case $sc in
        loss|delay|startcut) run "$sc" 4 - || fail=1 ;;
        # seconds of traffic: past the detection (a crashed or cut-off
        # host is known everywhere 2.8-2.9 s after, at 3 and 6 hosts:
        # PERFORMANCE.md) and, for a partition, the cut-off side ending
        # itself by the partition rule right after that
        kill) run "$sc" 4 "r$V1" || fail=1 ;;
        crash|daemon) run "$sc" 5 "h$H" || fail=1 ;;
        partition) run "$sc" $((2 * H + 2)) "h$H" || fail=1 ;;
        esac
    done
done
rm -rf "$ST"
exit $fail
