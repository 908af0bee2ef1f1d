#!/usr/bin/env bash
# Installs what failstop needs to build and test on Debian 12 (apt, as root).
# Not root: only reports what is missing.
set -euo pipefail
pkgs=(build-essential pkg-config libopenmpi-dev openmpi-bin libucx-dev ucx-utils
      libcriterion-dev gnuplot-nox netpipe-openmpi hpcc libfabric-dev libibverbs-dev
      procps psmisc gawk autoconf automake libtool python3 iproute2 nftables clang libfuzzer-14-dev libhwloc-dev
      slurmctld slurmd slurm-client slurm-wlm-basic-plugins)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "failstop: missing packages: ${missing[*]} (run as root or: sudo apt-get install ${missing[*]})" >&2
    exit 1
fi
echo "failstop: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
