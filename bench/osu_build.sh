# Sourced by the OSU benchmark scripts: builds the unmodified OSU
# Micro-Benchmarks 7.4 from ../shared/third_party into BUILD/osu once (never
# into the tree) and sets OSU to its c/mpi directory.  Needs BUILD and HERE.
osu_build() {
    local tp=$HERE/../shared/third_party/osu-micro-benchmarks-7.4.tar.gz
    local top=$BUILD/osu/osu-micro-benchmarks-7.4
    OSU=$top/c/mpi
    [ -x "$OSU/collective/non_blocking/osu_iallreduce" ] && return 0
    [ -f "$tp" ] || { echo "no $tp" >&2; return 1; }
    echo "building OSU 7.4 into $BUILD/osu"
    mkdir -p "$BUILD/osu" && tar xzf "$tp" -C "$BUILD/osu" &&
        (cd "$top" && ./configure -q CC=mpicc CXX=mpicxx >/dev/null &&
         make -s -j2 >/dev/null 2>&1) || { echo "OSU build failed" >&2; return 1; }
}
