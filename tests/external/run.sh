#!/usr/bin/env bash
# Real MPI clients nobody here wrote, run through failstop: NetPIPE
# (netpipe-openmpi) and the HPC Challenge suite (hpcc), both Debian packages
# built against the system Open MPI.  Each run is bounded by a timeout and
# judged by the program's own verification.
set -uo pipefail
build=${1:-build}
src=$(cd "$(dirname "$0")/../.." && pwd)
run="$src/$build/bin/failstop-run"
work=$(mktemp -d /tmp/failstop-external.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0

result() {  # name rc seconds log
    if [ "$2" -eq 0 ]; then echo "PASS external $1 ${3}s"; else
        echo "FAIL external $1 (rc $2) ${3}s"; tail -30 "$4"; fail=1; fi
}

netpipe() {  # name transport-opts...
    local name=$1; shift
    local log="$work/$name.log" t0=$SECONDS rc=0
    # integrity mode: NetPIPE checks every byte of every message size
    # -o: NetPIPE writes np.out into the current directory otherwise
    timeout -k 5 180 "$run" --strict "$@" -np 2 NPopenmpi -i -u 1048576 \
        -o "$work/$name.np.out" > "$log" 2>&1 || rc=$?
    [ $rc -eq 0 ] && ! grep -q "Integrity check passed" "$log" && rc=101
    grep -qi "integrity check failed" "$log" && rc=102
    result "$name-integrity" $rc $((SECONDS - t0)) "$log"
}

netpipe_perf() {
    local log="$work/np-perf.log" out="$work/np.out" t0=$SECONDS rc=0
    timeout -k 5 180 "$run" --strict -np 2 NPopenmpi -p 0 -u 4194304 -o "$out" \
        > "$log" 2>&1 || rc=$?
    # the sweep must reach 4 MiB with a positive throughput at every size
    [ $rc -eq 0 ] && ! awk '$2 <= 0 {bad=1} $1 >= 4194304 {top=1} END {exit bad || !top}' "$out" && rc=103
    result netpipe-perf-4MiB $rc $((SECONDS - t0)) "$log"
}

hpcc() {
    local dir="$work/hpcc" t0=$SECONDS rc=0
    mkdir -p "$dir"
    cp /usr/share/doc/hpcc/examples/_hpccinf.txt "$dir/hpccinf.txt"
    (cd "$dir" && timeout -k 5 400 "$run" --strict --oversubscribe -np 4 hpcc) \
        > "$dir/run.log" 2>&1 || rc=$?
    # HPCC's own verdict: HPL/PTRANS residuals, RandomAccess and FFT checks
    if [ $rc -eq 0 ]; then
        grep -q '^Success=1' "$dir/hpccoutf.txt" || rc=104
        grep -q '^MPIRandomAccess_Errors=0$' "$dir/hpccoutf.txt" || rc=105
        grep -q 'failed residual checks' "$dir/hpccoutf.txt" &&
            ! grep -q '0 tests completed and failed residual checks' "$dir/hpccoutf.txt" && rc=106
    fi
    result hpcc-4ranks $rc $((SECONDS - t0)) "$dir/hpccoutf.txt"
}

netpipe netpipe-shm
netpipe netpipe-tcp -x UCX_TLS=tcp
# failstop's OFI transport: its own rendezvous above 4 KiB (shm) and 16 KiB
# (net), fragments reassembled in the receive buffer
netpipe netpipe-ofi-shm --mca pml_failstop_transport ofi --mca pml_failstop_ofi_provider shm
netpipe netpipe-ofi-net --mca pml_failstop_transport ofi --mca pml_failstop_ofi_provider net
netpipe_perf
hpcc
exit $fail
