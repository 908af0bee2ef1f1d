#!/usr/bin/env bash
# tests/tools/needed_libs.sh BUILD: libfailstop.so (which every process of a
# failstop job loads, and every process Open MPI opens failstop's components
# in) must not link libfabric: Debian's pulls in libpsm_infinipath and
# libpsm2, whose constructors cost 0.2 s per process on a machine without
# their hardware.  The OFI transport loads it when chosen (ofi_lib.c).
set -u
build=${1:-build}
lib="$build/lib/libfailstop.so"
[ -f "$lib" ] || { echo "FAIL needed_libs: $lib missing"; exit 1; }
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
bad=$(echo "$needed" | grep -E '^lib(fabric|psm|psm2|psm_infinipath|efa|ibverbs)[.-]' || true)
if [ -n "$bad" ]; then
    echo "FAIL needed_libs: $lib links $(echo $bad) (load them when their transport is chosen)"
    exit 1
fi
echo "PASS needed_libs: $lib links $(echo "$needed" | wc -l) libraries, no fabric library"
