#!/usr/bin/env bash
# tests/hosts/slurm.sh: a Slurm cluster on the simulated hosts of
# tests/hosts/hosts.sh (issue 41), and the choice of launcher for the tests
# across hosts.  Source it (it sources hosts.sh), then:
#   slurm_up N     hosts h1..hN (hosts_up), slurmctld on h1, one slurmd per
#                  host (NodeName hI, 8 CPUs each whatever the machine has:
#                  SlurmdParameters=config_overrides), partition "sim" of
#                  all; waits until every node is idle.  Writes
#                  $SLURM_DIR/slurm.conf and exports SLURM_CONF.
#   slurm_run I CMD...  CMD inside hI with the cluster's configuration
#   slurm_node_state hI   the node's state as slurmctld sees it
#   slurm_down     stops the daemons and removes the hosts (hosts_down; also
#                  on any exit of the caller)
# Nothing outside namespaces and $HOSTS_DIR: Slurm's state, spool and logs
# are under $SLURM_DIR, the daemons' ports are the hosts' own.  The choices
# a real site would make differently, for a cluster of one machine's
# namespaces: AuthType=auth/none and CredType=cred/none (no munge: one
# user, one machine), ProctrackType=proctrack/linuxproc and
# TaskPlugin=task/none (no cgroup hierarchy per host), SlurmdTimeout 30 s.
SLURM_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=hosts.sh
. "$SLURM_HERE/hosts.sh"
SLURM_DIR=""
CLUSTER_JOB=()

slurm_conf() {
    local n=$1
    cat <<CONF
ClusterName=failstop
SlurmctldHost=h1(10.77.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$SLURM_DIR/ctld
SlurmdSpoolDir=$SLURM_DIR/spool/%n
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd.%n.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmdLogFile=$SLURM_DIR/slurmd.%n.log
SlurmdTimeout=30
SlurmctldTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=30
MessageTimeout=5
NodeName=h[1-$n] NodeAddr=10.77.0.[1-$n] CPUs=8 RealMemory=1000 State=UNKNOWN
PartitionName=sim Nodes=h[1-$n] Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
}

slurm_run() {
    local i=$1
    shift
    hosts_run "$i" env SLURM_CONF="$SLURM_DIR/slurm.conf" "$@"
}

slurm_node_state() {
    slurm_run 1 sinfo -h -N -n "$1" -o %T 2>/dev/null | head -n 1
}

slurm_down() {
    local i
    trap - EXIT
    if [ -n "$SLURM_DIR" ]; then
        # every process of the hosts: the daemons, and a step's slurmstepd
        # (daemonized, outside the holders' trees) that outlived its job
        for ((i = 1; i <= HOSTS_N; i++)); do
            # shellcheck disable=SC2046
            kill -KILL $(hosts_pids "$i") 2>/dev/null
        done
    fi
    hosts_down
    SLURM_DIR=""
}

# slurmd reads the cgroup hierarchy even with proctrack/linuxproc (and
# refuses a mix of v1 and v2 it does not recognise); ip netns exec remounted
# /sys for the host and hid it: the machine's hierarchies are mounted there
# again, as they are (the same hierarchies, not new ones).
slurm_cgroups() {
    local fs mnt type opts script=""
    while read -r fs mnt type opts _; do
        case $type in
        tmpfs) [ "$mnt" = /sys/fs/cgroup ] && script="mount -t tmpfs -o mode=755 tmpfs $mnt" ;;
        cgroup|cgroup2)
            case $mnt in /sys/fs/cgroup*) ;; *) continue ;; esac
            [ -n "$script" ] || script="true"
            opts=$(echo "$opts" | tr , '\n' | grep -v '^\(rw\|relatime\|seclabel\)$' | paste -sd,)
            script="$script && mkdir -p $mnt && mount -t $type ${opts:+-o $opts} $fs $mnt" ;;
        esac
    done < /proc/self/mounts
    [ -n "$script" ] || return 0
    hosts_run "$1" sh -c "$script"
}

slurm_up() {
    local n=$1 i t
    hosts_up "$n" || return 1
    trap 'slurm_down' EXIT
    SLURM_DIR="$HOSTS_DIR/slurm"
    mkdir -p "$SLURM_DIR/ctld" || return 1
    for ((i = 1; i <= n; i++)); do mkdir -p "$SLURM_DIR/spool/h$i"; done
    slurm_conf "$n" > "$SLURM_DIR/slurm.conf"
    export SLURM_CONF="$SLURM_DIR/slurm.conf"
    for ((i = 1; i <= n; i++)); do slurm_cgroups "$i"; done
    slurm_run 1 slurmctld -i || return 1
    for ((i = 1; i <= n; i++)); do
        slurm_run "$i" slurmd -N "h$i" || return 1
    done
    for ((t = 0; t < 200; t++)); do
        [ "$(slurm_run 1 sinfo -h -o %T 2>/dev/null | sort -u)" = idle ] && return 0
        sleep 0.1
    done
    echo "slurm.sh: the nodes did not become idle in 20 s:" >&2
    slurm_run 1 sinfo -N >&2
    return 1
}

# Whether hI's slurmd runs
slurm_slurmd_alive() {
    local pid
    pid=$(cat "$SLURM_DIR/slurmd.h$1.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null
}

slurm_restore() {
    local i=$1 t rc=0
    # the job's processes go, Slurm's stay (a step's slurmstepd ends itself)
    HOSTS_KEEP='^(slurmd|slurmctld|slurmstepd)$'
    hosts_restore "$i" || rc=1
    if ! slurm_slurmd_alive "$i"; then
        slurm_run "$i" slurmd -N "h$i" || return 1
    fi
    # every node idle (not idle*: not responding), no job left, and hI's
    # slurmd taking connections (started again, it may not be yet while
    # slurmctld still shows the node idle from before)
    for ((t = 0; t < 300; t++)); do
        [ "$(slurm_run 1 sinfo -h -o %T 2>/dev/null | sort -u)" = idle ] &&
            [ -z "$(slurm_run 1 squeue -h -o %i 2>/dev/null)" ] &&
            [ -n "$(hosts_run "$i" ss -Hltn 'sport = :6818' 2>/dev/null)" ] && return $rc
        sleep 0.1
    done
    echo "slurm.sh: the nodes are not all idle 30 s after h$i came back:" >&2
    slurm_run 1 sinfo -N >&2
    slurm_run 1 squeue >&2
    return 1
}

cluster_up() {
    local n=$1 per=$2
    if [ "${FS_HOSTS_LAUNCHER:-mpirun}" = slurm ]; then
        slurm_up "$n" || return 1
        # -m block: ranks 0..PER-1 on h1 and so on, as mpirun's slots
        CLUSTER_JOB=(salloc --quiet -N "$n" -n $((n * per)) --ntasks-per-node="$per" -m block -k)
    else
        hosts_up "$n" || return 1
        sed -i "s/slots=[0-9]*/slots=$per/" "$HOSTS_DIR/hostfile"
        hosts_launch_env
        CLUSTER_JOB=()
    fi
}

# cluster_left I NAMES: how many processes of the job are left on hI, NAMES
# a regular expression of the programs' names.  Under mpirun a waiter
# (failstop-rank running one of them) counts too; under Slurm the waiter of
# a rank that died holds its PMIx connection until Slurm ends the step on
# that node (rank_pmix.h), which a partitioned node learns only once it is
# reachable again: only the programs count.
cluster_left() {
    local p
    for p in $(hosts_pids "$1"); do
        if [ -n "$SLURM_DIR" ]; then
            [[ $(cat "/proc/$p/comm" 2>/dev/null) =~ ^($2)$ ]] && echo "$p"
        else
            tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -qE "$2" && echo "$p"
        fi
    done | wc -l
}

cluster_restore() {
    if [ -n "$SLURM_DIR" ]; then slurm_restore "$1"; else hosts_restore "$1"; fi
}

cluster_down() {
    if [ -n "$SLURM_DIR" ]; then slurm_down; else hosts_down; fi
}
