#!/usr/bin/env bash
# tests/conformance/build.sh BUILD_DIR: builds MPICH's MPI test suite from
# ../shared/third_party/ (or $FS_CONF_TARBALL) into BUILD_DIR/conformance/,
# against the system Open MPI.  Nothing is written into the source tree.
#
# The suite is unmodified.  Two build-system facts need handling:
#   - the tarball leaves out test/mpi/ft/, which configure.ac still lists, so
#     autogen gets an empty ft/Makefile.am in the scratch copy (the ft tests
#     are configured out with --disable-ft-tests anyway);
#   - some programs use MPI-4 features Open MPI 4.1 lacks (MPI_Session, ...)
#     and do not compile: make -k builds the rest, and the runner reports the
#     missing ones as "not built" for every PML alike.
# A stamp file makes a second call a no-op.
set -euo pipefail

die() { echo "conformance/build.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
build=$(mkdir -p "$1" && cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
tarball=${FS_CONF_TARBALL:-$(ls "$top"/../shared/third_party/mpich-testsuite-*.tar.gz 2>/dev/null | head -1)}
[ -n "$tarball" ] && [ -f "$tarball" ] ||
    die "MPICH test suite tarball not found (../shared/third_party/mpich-testsuite-*.tar.gz; or set FS_CONF_TARBALL)"
# the directories the conformance run covers (C programs only)
dirs=${FS_CONF_DIRS:-"attr coll comm datatype errhan group init pt2pt"}

root="$build/conformance"
stamp="$root/built.stamp"
want="$(basename "$tarball") $dirs"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then exit 0; fi

for tool in autoconf automake libtoolize mpicc make; do
    command -v "$tool" >/dev/null || die "$tool not found (make deps installs it)"
done

rm -rf "$root"
mkdir -p "$root/src" "$root/obj"
log="$root/build.log"
echo "conformance: building MPICH's test suite ($(basename "$tarball")) in $root (log: $log)"
tar -xzf "$tarball" -C "$root/src"
mpi="$root/src/test/mpi"
[ -d "$mpi" ] || die "unexpected tarball layout: no test/mpi"
mkdir -p "$mpi/ft"
[ -f "$mpi/ft/Makefile.am" ] || echo "# ft/ is not shipped in this tarball" > "$mpi/ft/Makefile.am"

(cd "$mpi" && MPICH_CONFDB="$root/src/confdb" ./autogen.sh) >> "$log" 2>&1 ||
    { tail -20 "$log"; die "autogen failed"; }
(cd "$root/obj" && "$mpi/configure" CC=mpicc --enable-strictmpi --enable-fortran=no \
    --disable-cxx --disable-spawn --disable-io --disable-rma --disable-threads \
    --disable-perftest --disable-ft-tests) >> "$log" 2>&1 ||
    { tail -20 "$log"; die "configure failed"; }
make -C "$root/obj/util" -j2 >> "$log" 2>&1 || { tail -20 "$log"; die "util build failed"; }
[ -d "$root/obj/dtpools" ] && { make -C "$root/obj/dtpools" -j2 >> "$log" 2>&1 ||
    { tail -20 "$log"; die "dtpools build failed"; }; }
for d in $dirs; do
    # -k: programs that need MPI-4 do not compile against Open MPI 4.1
    make -C "$root/obj/$d" -k -j2 >> "$log" 2>&1 || true
done
echo "$want" > "$stamp"
echo "conformance: built"
