#!/usr/bin/env bash
# The dependency rules of the source tree (docs/DESIGN.md, "Layers"), checked
# over #include lines:
#   - the graph of src/ directories (a includes b's header: a -> b) has no
#     cycle;
#   - fabric headers (ucp/, uct/, ucs/, rdma/) only in src/transport/;
#   - Open MPI's internal headers (ompi/, opal/, orte/) only in src/ompi/
#     (mpi.h is fine: tools/ has MPI programs).
# Prints the graph; exits 1 with the offending lines otherwise.
#   bash tests/tools/include_graph.sh [SRC_DIR]
set -uo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)/src}
cd "$src" || exit 2
dirs=$(find . -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)
fail=0

edges=$(for d in $dirs; do
            grep -ho '^#include "[a-z_]*/' "$d"/*.[ch] 2>/dev/null |
                sed 's|^#include "||; s|/$||' | sort -u |
                while read -r to; do
                    if [ "$to" != "$d" ] && [ -d "$to" ]; then echo "$d $to"; fi
                done
        done)
echo "include graph of $src (a -> b: a includes b):"
echo "$edges" | sed 's/ / -> /; s/^/  /'
if ! loop=$( (echo "$edges"; for d in $dirs; do echo "$d $d"; done) | tsort 2>&1 >/dev/null); then
    echo "FAIL: the include graph has a cycle:"
    echo "$loop" | sed 's/^/  /'
    fail=1
fi

bad=$(grep -n -E '^#include <(ucp|uct|ucs|rdma)/' --include='*.[ch]' -r . | grep -v '^\./transport/')
if [ -n "$bad" ]; then
    echo "FAIL: fabric headers outside src/transport:"; echo "$bad" | sed 's/^/  /'; fail=1
fi
bad=$(grep -n -E '^#include ["<](ompi|opal|orte)/' --include='*.[ch]' -r . | grep -v '^\./ompi/')
if [ -n "$bad" ]; then
    echo "FAIL: Open MPI headers outside src/ompi:"; echo "$bad" | sed 's/^/  /'; fail=1
fi
[ $fail -eq 0 ] && echo "PASS include graph: no cycle, fabric and Open MPI headers in their layers"
exit $fail
