#!/usr/bin/env bash
# tests/ompi5/chroot.sh ROOT COMMAND [ARGS...]
#
# Runs COMMAND inside a Debian 13 (trixie) chroot at ROOT: Open MPI 5.0.7,
# UCX 1.18, libfabric 2.1, PMIx 5 (issue 15).  The chroot is made on first
# use (debootstrap, about 30 s, then apt, about 30 s) and reused while its
# package list is unchanged.  Debian 13's libopenmpi-dev lacks a few of Open
# MPI's own internal headers (opal/mca/threads/pthreads, opal/mca/timer/
# linux); they come from the same version's source package, unpacked at
# ROOT/opt/ompi-src (the Makefile's OMPI_SRCDIR).
#
# The chroot sees /proc, /sys, /dev (with /dev/shm and /dev/pts) and this
# source tree at its own path, all bound in a mount namespace of this
# script's own (unshare): the kernel removes them when the command ends,
# however it ends, and no other process sees them (rm -rf of ROOT from
# outside cannot reach through a bind).  Needs root.
# Exit status: the command's; 2 on a setup error.
set -euo pipefail

die() { echo "ompi5/chroot.sh: $*" >&2; exit 2; }
[ $# -ge 2 ] || die "usage: $0 ROOT COMMAND [ARGS...]"
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mounts)"
root=$(mkdir -p "$1" && cd "$1" && pwd)
shift
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

PKGS="libopenmpi-dev openmpi-bin libucx-dev ucx-utils libfabric-dev libpmix-dev
pkgconf gcc g++ file make libcriterion-dev python3 procps psmisc iproute2 nftables gdb bc dpkg-dev libhwloc-dev
slurmctld slurmd slurm-client slurm-wlm-basic-plugins util-linux"
stamp="$root/.failstop-ready"

# The namespace part: bind, chroot, run.  Everything mounted here goes with
# the namespace when the command ends.
if [ "${FS_OMPI5_IN_NS:-0}" = 1 ]; then
    # the chroot's / a mount point of its own: ip netns (tests/hosts) makes
    # it a slave mount, which a plain directory cannot be
    mount --bind "$root" "$root"
    for d in proc sys dev; do
        mkdir -p "$root/$d"
        mount --rbind "/$d" "$root/$d"
    done
    mkdir -p "$root$src"
    mount --bind "$src" "$root$src"
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    cd "$root$src"
    exec chroot "$root" /usr/bin/env -C "$src" "$@"
fi

command -v unshare >/dev/null || die "unshare (util-linux) is not installed"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$PKGS" ]; then
    if [ ! -x "$root/usr/bin/apt-get" ]; then
        command -v debootstrap >/dev/null || {
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null ||
                die "cannot install debootstrap"; }
        echo "ompi5/chroot.sh: making a Debian 13 chroot at $root"
        debootstrap --variant=minbase trixie "$root" http://deb.debian.org/debian \
            > "$root.debootstrap.log" 2>&1 || die "debootstrap failed: $root.debootstrap.log"
    fi
    echo "deb-src http://deb.debian.org/debian trixie main" > "$root/etc/apt/sources.list.d/src.list"
    # shellcheck disable=SC2086
    FS_OMPI5_IN_NS=1 unshare --mount --propagation private "$0" "$root" /bin/sh -c "
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq && apt-get install -y -qq --no-install-recommends $(echo $PKGS) &&
        mkdir -p /opt/ompi-src && cd /opt/ompi-src &&
        apt-get source --download-only -qq openmpi && ver=\$(ls openmpi_*.orig.tar.*) &&
        tar -xf \$ver --wildcards '*/opal/mca/threads/pthreads/*.h' '*/opal/mca/timer/linux/*.h' &&
        ln -sfn \$(ls -d openmpi-*/ | head -1) current" > "$root.apt.log" 2>&1 ||
        die "installing packages in the chroot failed: $root.apt.log"
    echo "$PKGS" > "$stamp"
fi
FS_OMPI5_IN_NS=1 exec unshare --mount --propagation private "$0" "$root" "$@"
