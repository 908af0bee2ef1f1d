#!/usr/bin/env bash
# tests/hosts/hosts.sh: simulated hosts on this machine, for tests that need
# several nodes (issue 11).  Source it, then:
#   hosts_up N     creates hosts h1..hN: each a network namespace with its
#                  own UTS (hostname hI) and IPC namespaces, held by a
#                  sleeping process, joined by a veth pair to a bridge in a
#                  switch namespace (10.77.0.I/24, MTU 1500); writes
#                  $HOSTS_DIR/hostfile and $HOSTS_DIR/agent (Open MPI's
#                  plm_rsh_agent: enters the named host and runs the command;
#                  --root: in the root of its holder, so that inside a
#                  chroot (make test-ompi5) the hosts run the chroot's files)
#   hosts_launch_env   exports the launcher settings naming them (ORTE, PRRTE)
#   hosts_run I CMD...   runs CMD inside host hI
#   hosts_link I up|down   brings hI's link up or down (from the switch side)
#   hosts_crash I  hI dies as a node does; hosts_restore I: back to normal
#   hosts_down     removes everything (also on any exit of the caller:
#                  hosts_up installs an EXIT trap that calls it)
# Nothing is created in the root namespace but the namespaces' names
# (ip netns) and HOSTS_DIR (under /run: every host sees it, for the
# launcher).  Needs root, iproute2 and util-linux (unshare, nsenter).
HOSTS_DIR=""
HOSTS_N=0
HOSTS_TAG="fs$$"
# process names (a regular expression) that hosts_restore leaves running: a
# cluster's own daemons (tests/hosts/slurm.sh)
HOSTS_KEEP=""

hosts_ns() { echo "${HOSTS_TAG}h$1"; }

hosts_down() {
    trap - EXIT
    local i pid
    [ -n "$HOSTS_DIR" ] || return 0
    for ((i = 1; i <= HOSTS_N; i++)); do
        pid=$(cat "$HOSTS_DIR/h$i.pid" 2>/dev/null) && kill -KILL "$pid" 2>/dev/null
        ip netns del "$(hosts_ns "$i")" 2>/dev/null
    done
    ip netns del "${HOSTS_TAG}sw" 2>/dev/null
    # Open MPI's shared-memory segments are named after the host
    rm -f /dev/shm/vader_segment.h[0-9]*.*
    rm -rf "$HOSTS_DIR"
    HOSTS_DIR="" HOSTS_N=0
}

# hI's holder: a process in its network, UTS, IPC and mount namespaces.
# Hosts other than h1 (where mpirun runs, as the user's login node) get
# their own /tmp and /var/tmp, as separate machines have: what a process
# writes there (failstop-run's status directory) is not seen elsewhere.
hosts_holder() {
    local i=$1 ns priv=""
    ns=$(hosts_ns "$i")
    [ "$i" -gt 1 ] && priv="mount -t tmpfs tmpfs /tmp && mount -t tmpfs tmpfs /var/tmp &&"
    ip netns exec "$ns" unshare --uts --ipc --mount --propagation private --fork --kill-child \
        sh -c "hostname h$i && $priv echo \$\$ > '$HOSTS_DIR/h$i.pid' && exec sleep 100000" \
        2>/dev/null &
    # not this shell's job: its end (hosts_down kills it) is not reported
    disown
    while [ ! -s "$HOSTS_DIR/h$i.pid" ]; do sleep 0.02; done
}

hosts_up() {
    local n=$1 i ns sw
    # not under /tmp or /var/tmp, which the hosts do not share
    HOSTS_DIR=$(mktemp -d /run/fs-hosts.XXXXXX) || return 1
    HOSTS_N=$n
    trap 'hosts_down' EXIT
    sw="${HOSTS_TAG}sw"
    ip netns add "$sw" || return 1
    ip netns exec "$sw" ip link add br0 type bridge
    ip netns exec "$sw" ip link set br0 up
    : > "$HOSTS_DIR/hostfile"
    for ((i = 1; i <= n; i++)); do
        ns=$(hosts_ns "$i")
        ip netns add "$ns" || return 1
        ip link add "${HOSTS_TAG}e$i" netns "$ns" type veth peer name "p$i" netns "$sw" ||
            return 1
        ip netns exec "$ns" ip link set "${HOSTS_TAG}e$i" name eth0
        ip netns exec "$ns" ip addr add "10.77.0.$i/24" dev eth0
        ip netns exec "$ns" ip link set eth0 up
        ip netns exec "$ns" ip link set lo up
        ip netns exec "$sw" ip link set "p$i" master br0
        ip netns exec "$sw" ip link set "p$i" up
        hosts_holder "$i"
        echo "h$i slots=2" >> "$HOSTS_DIR/hostfile"
        echo "10.77.0.$i h$i" >> "$HOSTS_DIR/hosts"
    done
    # Open MPI's rsh launcher: AGENT [options] HOST COMMAND...
    cat > "$HOSTS_DIR/agent" <<AGENT
#!/usr/bin/env bash
while [ "\${1#-}" != "\$1" ]; do shift; done
host=\$1; shift
pid=\$(cat "$HOSTS_DIR/\$host.pid") || { echo "agent: no host \$host" >&2; exit 255; }
exec nsenter -t "\$pid" --net --uts --ipc --mount --root --wd -- /bin/sh -c "\$*"
AGENT
    chmod +x "$HOSTS_DIR/agent"
}

hosts_run() {
    local i=$1 pid
    shift
    pid=$(cat "$HOSTS_DIR/h$i.pid")
    nsenter -t "$pid" --net --uts --ipc --mount --root --wd -- "$@"
}

# The launcher's settings, for Open MPI 4.1 (ORTE) and 5 (PRRTE) alike:
# the hostfile, the agent, and no tree spawn (every daemon is started from
# h1, so a host's loss takes no other host's daemon with it).
hosts_launch_env() {
    export OMPI_MCA_orte_default_hostfile="$HOSTS_DIR/hostfile"
    export OMPI_MCA_plm_rsh_agent="$HOSTS_DIR/agent"
    export PRTE_MCA_prte_default_hostfile="$HOSTS_DIR/hostfile"
    export PRTE_MCA_plm_ssh_agent="$HOSTS_DIR/agent"
    export PRTE_MCA_plm_ssh_no_tree_spawn=1
}

hosts_link() {
    ip netns exec "${HOSTS_TAG}sw" ip link set "p$1" "$2"
}

# Processes inside hI (same network namespace as its holder), the holder
# and its parent excluded; all hosts share this machine's PID namespace.
# (ip netns pids: one pass over /proc in C.  The shell loop it replaces
# forked a readlink per process, 3.6 s a pass with 6 hosts' jobs running,
# which let net.sh's kill miss its victim at 6 hosts: the rank's 4 s of
# traffic ended before the search did.)
hosts_pids() {
    local holder parent
    holder=$(cat "$HOSTS_DIR/h$1.pid")
    # the holder's parent (unshare --kill-child) is in the host too
    parent=$(awk '/^PPid:/ {print $2}' "/proc/$holder/status")
    ip netns pids "$(hosts_ns "$1")" 2>/dev/null |
        awk -v h="$holder" -v p="$parent" '$1 != h && $1 != p'
}

# hosts_job_pids I: hosts_pids I but the daemons named in HOSTS_KEEP
hosts_job_pids() {
    local p
    for p in $(hosts_pids "$1"); do
        [ -n "$HOSTS_KEEP" ] && [[ $(cat "/proc/$p/comm" 2>/dev/null) =~ $HOSTS_KEEP ]] &&
            continue
        echo "$p"
    done
}

# hosts_reboot I: what a reboot clears after hosts_crash: the session
# directories and shared-memory segments its killed processes left.
hosts_reboot() {
    hosts_run "$1" sh -c 'rm -rf /tmp/ompi.* /tmp/pmix* /var/tmp/ompi.*' 2>/dev/null
    rm -f /dev/shm/vader_segment.h"$1".*
}

# hosts_crash I: hI dies as a node does: its link goes down and every
# process in it is killed at once (SIGKILL), Open MPI's daemon included.
hosts_crash() {
    hosts_link "$1" down
    # shellcheck disable=SC2046
    kill -KILL $(hosts_pids "$1") 2>/dev/null
    return 0
}

# hosts_restore I: hI back to normal after a crash or a cut: its link up,
# what is left of its processes killed (gone before the next job looks for
# its victims there: a 12-rank kill once found a process of the job before,
# which then vanished), what a reboot clears, and then every host reaching
# hI and hI every host (a closed port answers "refused" once neighbours are
# resolved again).  Checking h1 only once let a job start 1.5 s after a
# crash's link came back with h3 -> h2 still failing: UCX's TCP connects
# from h3 to h2 failed at once and failstop took them for h2's ranks'
# death.  Returns 1 if they cannot reach each other after 5 s.
hosts_restore() {
    local p i
    hosts_link "$1" up
    for p in $(hosts_job_pids "$1"); do
        kill -KILL "$p" 2>/dev/null
    done
    for ((i = 0; i < 50; i++)); do
        [ -z "$(hosts_job_pids "$1")" ] && break
        sleep 0.1
    done
    hosts_reboot "$1"
    # (not through a pipe into grep: under pipefail a failed connect made
    # every try fail)
    for ((i = 0; i < 50; i++)); do
        hosts_reach_all "$1" && return 0
        sleep 0.1
    done
    return 1
}

# hosts_reach_all I: hI and every other host reach each other
hosts_reach_all() {
    local j
    for ((j = 1; j <= HOSTS_N; j++)); do
        [ "$j" -eq "$1" ] && continue
        hosts_refuses "$1" "$j" && hosts_refuses "$j" "$1" || return 1
    done
}

# hosts_refuses I J: a connection from hI to a closed port of hJ is refused
# (hJ is reachable)
hosts_refuses() {
    local out
    out=$(hosts_run "$1" bash -c "exec 3<>/dev/tcp/10.77.0.$2/9" 2>&1)
    [[ $out == *refused* ]]
}
