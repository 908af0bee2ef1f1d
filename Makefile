# failstop — plain GNU Makefile.
#
#   make                 build everything into build/
#   make test            install missing packages (as root), build, run every test
#   make demo            install missing packages (as root), build, run the demo
#   make install PREFIX=/some/dir
#   make asan            build into build-asan/ with ASan+UBSan and run unit + MPI tests
#   make tsan            build into build-tsan/ with ThreadSanitizer and run the
#                        MPI_THREAD_MULTIPLE tests (t_threads*, tf_fail_threads;
#                        part of make test, about 1 min)
#   make bench           failure-free benchmark vs pml ucx and ob1 -> docs/PERFORMANCE.md
#   make bench-killtime  kill-to-error times per transport -> docs/perf/killtime.md
#   make bench-killtime-ofi  the same over the OFI transport -> docs/perf/killtime_ofi.md
#   make bench-hbtime-ofi    crash and hang to every survivor knowing, 2-8 ranks, per
#                            libfabric provider -> docs/perf/hbtime_ofi.md
#   make bench-detector  the failure detector at up to 100 000 simulated ranks
#   make bench-agree     MPIX_Comm_agree latency vs ranks -> docs/perf/agree.md
#   make bench-hosts     detection across 3 and 6 simulated hosts -> docs/perf/hosts.md
#   make bench-osu       OSU 7.4 vs pml ucx and ob1, shm and TCP -> docs/perf/osu.md
#   make bench-osu-ofi   OSU over failstop's OFI transport vs pml cm (mtl ofi) and ob1
#   make bench-scale     2-256 ranks on one node vs pml ucx and ob1: PSS, MPI_Init,
#                        first and steady collectives, wall -> docs/perf/scale.md
#   make hosts-test      the MPI suite and fault tests across 3 simulated hosts, link
#                        flaps across 3 and 6 (FS_HOSTS_REPEAT loops: make test 3)
#   make soak            every fault test 20 times in a row per transport and launcher
#                        (soak-mpi: the MPI suite; soak-hosts: across hosts, flaps
#                        included; hours: run before resolving an issue that touched
#                        a fault path)
#   make bench-flap      the longest flap that costs nothing, and the time to exclude a
#                        cut-off host, at 3 and 6 hosts -> docs/perf/flap.md
#   make conformance     MPICH's MPI test suite over failstop and over ob1
#   make test-ompi5      build and test against Open MPI 5 in a Debian 13 chroot
#   make fuzz            libFuzzer on AM headers and detector datagrams (FUZZ_SECONDS each)
#   make validate        failstop-validate's full report on this machine -> build/validate
#                        (every fabric found, 3 runs per scenario, soak, OSU; ~30 min)
#   make validate-hosts  the same across 3 simulated hosts -> build/validate-hosts
#   make validate-screenshot  build/validate/index.html in headless Chromium
#
# Open MPI's devel headers are found through mpicc; override with OMPI_PREFIX=.

SHELL       := /bin/bash
BUILD       ?= build
PREFIX      ?= /usr/local
CC          ?= gcc
MPICC       ?= mpicc
OPT         ?= -O2 -flto=auto -ffat-lto-objects
SANITIZE    ?=

ifdef OMPI_PREFIX
OMPI_INCDIRS := $(OMPI_PREFIX)/include $(OMPI_PREFIX)/include/openmpi
OMPI_LIBDIR  := $(OMPI_PREFIX)/lib
else
OMPI_INCDIRS := $(shell $(MPICC) --showme:incdirs 2>/dev/null)
OMPI_LIBDIR  := $(firstword $(shell $(MPICC) --showme:libdirs 2>/dev/null))
endif
# mpicc lists .../include and .../include/openmpi; the internal headers live
# under the latter, ompi_config.h sits beside them.
OMPI_CFLAGS := $(foreach d,$(OMPI_INCDIRS),-isystem $(d))
# The Open MPI series (4 or 5) decides the runtime libraries and headers;
# the code itself asks mpi.h (src/ompi/compat.h).
# Open MPI's own component directory (Debian 12: .../lib/openmpi3), for
# failstop-rank's component path under a direct launch
OMPI_PKGLIBDIR ?= $(shell ompi_info --parsable --path pkglibdir 2>/dev/null | sed -n 's/^path:pkglibdir://p')
OMPI_MAJOR  ?= $(shell $(MPICC) --showme:version 2>/dev/null | sed -n 's/.*Open MPI \([0-9]*\)\..*/\1/p')
ifeq ($(OMPI_MAJOR),5)
# Open MPI 5's internal headers include PMIx's; Debian 13's libopenmpi-dev
# lacks a few of its own (opal/mca/threads/pthreads, opal/mca/timer/linux),
# taken from the same version's source tree: OMPI_SRCDIR (tests/ompi5/).
OMPI_CFLAGS += $(shell pkg-config --cflags-only-I pmix 2>/dev/null | sed 's/-I/-isystem /g')
OMPI_CFLAGS += $(if $(OMPI_SRCDIR),-isystem $(OMPI_SRCDIR))
OMPI_RTE_LIBS := -lopen-pal $(shell pkg-config --libs pmix 2>/dev/null)
else
OMPI_RTE_LIBS := -lopen-rte -lopen-pal
endif

WARN        := -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers
BASE_CFLAGS := $(OPT) -g -std=gnu11 -fPIC -fvisibility=hidden -mcx16 \
               -fno-strict-aliasing $(WARN) $(SANITIZE) -Iinclude -Isrc
# libfabric is not linked: src/transport/ofi_lib.c loads it when the OFI
# transport is chosen (loading it costs 0.2 s per process here)
CORE_LIBS   := -lucp -luct -lucs -ldl -lpthread -lm
# LTO is for the library only: Criterion's test registration does not
# survive it, and test programs gain nothing from it.
PROG_CFLAGS := $(filter-out -flto=auto -ffat-lto-objects,$(BASE_CFLAGS))
OMPI_LIBS   := -L$(OMPI_LIBDIR) -Wl,-rpath,$(OMPI_LIBDIR) -lmpi $(OMPI_RTE_LIBS)

# ---- sources: the core never sees Open MPI headers -------------------------
CORE_SRC := $(wildcard src/common/*.c src/queues/*.c src/endpoint/*.c \
                       src/failure/*.c src/detector/*.c src/proto/*.c src/transport/*.c)
OMPI_SRC := $(filter-out src/ompi/component_shim.c src/ompi/coll_shim.c,$(wildcard src/ompi/*.c))
SHIM_SRC := src/ompi/component_shim.c
CSHIM_SRC := src/ompi/coll_shim.c
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/obj/%.o)
OMPI_OBJ := $(OMPI_SRC:%.c=$(BUILD)/obj/%.o)
SHIM_OBJ := $(SHIM_SRC:%.c=$(BUILD)/obj/%.o)
CSHIM_OBJ := $(CSHIM_SRC:%.c=$(BUILD)/obj/%.o)

CORE_LIB := $(BUILD)/lib/libfailstop_core.a
SO_LIB   := $(BUILD)/lib/libfailstop.so
COMP_SO  := $(BUILD)/lib/openmpi/mca_pml_failstop.so
COLL_SO  := $(BUILD)/lib/openmpi/mca_coll_failstop.so
RUNNER   := $(BUILD)/bin/failstop-run
RANKWRAP := $(BUILD)/libexec/failstop/failstop-rank
REPORTER := $(BUILD)/libexec/failstop/failstop-report
PROBE    := $(BUILD)/libexec/failstop/failstop-probe
TOPO     := $(BUILD)/libexec/failstop/failstop-topo
VALIDATE := $(BUILD)/bin/failstop-validate $(BUILD)/libexec/failstop/failstop-validate-report
PC_FILE  := $(BUILD)/lib/pkgconfig/failstop.pc

UNIT_SRC  := $(wildcard tests/*/test_*.c)
UNIT_BIN  := $(UNIT_SRC:tests/%.c=$(BUILD)/tests/%)
MPI_TSRC  := $(wildcard tests/mpi/*.c)
MPI_TBIN  := $(MPI_TSRC:tests/mpi/%.c=$(BUILD)/tests/mpi/%)
# programs of Open MPI 5's own ULFM API (mpi-ext.h, libmpi only)
ifeq ($(OMPI_MAJOR),5)
U5_BIN    := $(patsubst tests/ompi5/%.c,$(BUILD)/tests/ompi5/%,$(wildcard tests/ompi5/u5_*.c))
endif
BENCH_SRC := $(wildcard bench/*.c)
ifneq ($(OMPI_MAJOR),5)
BENCH_SRC := $(filter-out bench/u5_%.c,$(BENCH_SRC))   # Open MPI 5's ULFM API
endif
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
DEMO_BIN  := $(BUILD)/demo/failstop-demo
HOST_TOOLS := $(BUILD)/tests/hosts/netdelay

.PHONY: soak soak-mpi soak-hosts slurm-test-ompi5 ompi5-slurm bench-flap bench-scale validate validate-test validate-hosts validate-screenshot test-ompi5 ompi5-suite hosts-test-ompi5 ompi5-hosts fuzz fuzz-build fuzz-short all deps test unit-test tools-test mpi-test hosts-test slurm-test external-test conformance demo install asan tsan bench bench-killtime bench-killtime-ofi bench-hbtime-ofi bench-hosts bench-detector bench-agree bench-coll-ab bench-osu bench-osu-ofi ft-mpich ft-ulfm clean
.DEFAULT_GOAL := all

all: $(SO_LIB) $(COMP_SO) $(COLL_SO) $(RUNNER) $(RANKWRAP) $(REPORTER) $(PROBE) $(TOPO) $(VALIDATE) $(PC_FILE) $(UNIT_BIN) \
     $(MPI_TBIN) $(U5_BIN) $(BENCH_BIN) $(DEMO_BIN) $(HOST_TOOLS)

# Installs build and test dependencies with apt when run as root and something
# is missing; otherwise only reports what is missing.
deps:
	@bash .ci/deps.sh

$(BUILD)/obj/src/ompi/%.o: src/ompi/%.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(OMPI_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -MMD -MP -c $< -o $@

$(CORE_LIB): $(CORE_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && gcc-ar rcs $@ $^

$(SO_LIB): $(CORE_OBJ) $(OMPI_OBJ)
	@mkdir -p $(@D)
	$(CC) -shared $(OPT) -g $(SANITIZE) -Wl,--no-undefined -Wl,-soname,libfailstop.so \
	    -o $@ $^ $(OMPI_LIBS) $(CORE_LIBS)

# The component Open MPI dlopens: only the component struct, bound to
# libfailstop.so one directory up (build tree and install tree alike).
$(COMP_SO): $(SHIM_OBJ) $(SO_LIB)
	@mkdir -p $(@D)
	$(CC) -shared $(SANITIZE) -Wl,--no-undefined -o $@ $(SHIM_OBJ) \
	    -L$(BUILD)/lib -Wl,-rpath,'$$ORIGIN/..' -lfailstop $(OMPI_LIBS)

$(COLL_SO): $(CSHIM_OBJ) $(SO_LIB)
	@mkdir -p $(@D)
	$(CC) -shared $(SANITIZE) -Wl,--no-undefined -o $@ $(CSHIM_OBJ) \
	    -L$(BUILD)/lib -Wl,-rpath,'$$ORIGIN/..' -lfailstop $(OMPI_LIBS)

$(RUNNER): src/tools/failstop-run
	@mkdir -p $(@D)
	install -m 0755 $< $@

$(REPORTER): src/tools/failstop-report
	@mkdir -p $(@D)
	install -m 0755 $< $@

$(RANKWRAP): src/tools/failstop-rank.c src/tools/rank_pmix.c src/tools/rank_pmix.h \
		src/common/fs_record.h src/common/fs_time.h
	@mkdir -p $(@D)
	$(CC) $(PROG_CFLAGS) $(if $(OMPI_PKGLIBDIR),-DFS_OMPI_PKGLIBDIR='"$(OMPI_PKGLIBDIR)"') \
	    -o $@ src/tools/failstop-rank.c src/tools/rank_pmix.c

$(PC_FILE): src/tools/failstop.pc.in
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(abspath $(BUILD))|' $< > $@

# ---- tests -----------------------------------------------------------------
$(BUILD)/tests/%: tests/%.c $(CORE_LIB)
	@mkdir -p $(@D)
	$(CC) $(PROG_CFLAGS) -Itests -MMD -MP -MF $@.d -o $@ $< $(CORE_LIB) \
	    -lcriterion $(CORE_LIBS)

# tools of the simulated hosts (no MPI, no failstop)
$(BUILD)/tests/hosts/%: tests/hosts/%.c
	@mkdir -p $(@D)
	$(CC) $(PROG_CFLAGS) -o $@ $<

$(BUILD)/tests/mpi/%: tests/mpi/%.c tests/mpi/mpitest.h tests/mpi/faulttest.h tests/mpi/lifetest.h tests/mpi/agreetest.h tests/mpi/survtest.h \
    include/failstop.h $(SO_LIB)
	@mkdir -p $(@D)
	$(MPICC) $(PROG_CFLAGS) -pthread -Itests/mpi -o $@ $< -L$(BUILD)/lib \
	    -Wl,-rpath,'$$ORIGIN/../../lib' -lfailstop

$(BUILD)/tests/ompi5/%: tests/ompi5/%.c tests/mpi/mpitest.h
	@mkdir -p $(@D)
	$(MPICC) $(PROG_CFLAGS) -Itests/mpi -o $@ $<

$(BUILD)/bench/%: bench/%.c bench/fs_bench_sym.h
	@mkdir -p $(@D)
	$(MPICC) $(PROG_CFLAGS) -o $@ $<

$(TOPO): src/tools/failstop-topo.c
	@mkdir -p $(@D)
	$(CC) $(PROG_CFLAGS) -o $@ $< -lhwloc

$(BUILD)/bin/failstop-validate: src/tools/failstop-validate
	@mkdir -p $(@D)
	install -m 0755 $< $@

$(BUILD)/libexec/failstop/failstop-validate-report: src/tools/failstop-validate-report
	@mkdir -p $(@D)
	install -m 0755 $< $@

$(PROBE): src/tools/failstop-probe.c src/common/fs_record.h src/common/fs_time.h include/failstop.h $(SO_LIB)
	@mkdir -p $(@D)
	$(MPICC) $(PROG_CFLAGS) -pthread -o $@ $< -L$(BUILD)/lib -Wl,-rpath,'$$ORIGIN/../../lib' -lfailstop

$(DEMO_BIN): src/tools/failstop-demo.c include/failstop.h $(SO_LIB)
	@mkdir -p $(@D)
	$(MPICC) $(PROG_CFLAGS) -o $@ $< -L$(BUILD)/lib -Wl,-rpath,'$$ORIGIN/../lib' -lfailstop

unit-test: $(UNIT_BIN)
	@bash tests/run-unit.sh $(BUILD)
	@bash tests/failure/agree_mutate.sh $(BUILD)

# The include rules between src/ directories (no cycle); failstop-run/
# failstop-rank without MPI: stopped-rank fencing, the exit held after a
# death inside MPI_Init (about 13 s)
tools-test: all
	@bash tests/tools/include_graph.sh
	@bash tests/tools/needed_libs.sh $(BUILD)
	@bash tests/tools/test_fence.sh $(BUILD)
	@bash tests/tools/test_init_hold.sh $(BUILD)
	@bash tests/tools/test_run_args.sh $(BUILD)
	@bash tests/tools/test_report.sh $(BUILD)

# REPEAT: runs in a row of each fault test over UCX shared memory at its
# first rank count, and of the lifecycle matrix (tf_life_*) over UCX TCP too
# (make test: 20); the other fault tests over UCX TCP TCP_REPEAT times, and
# with TCP_FIRST_NP=1 every test there at its first rank count only.
# Over failstop's OFI transport (libfabric shm and net) every test runs at
# its first rank count, the lifecycle matrix's SIGKILL tests OFI_LIFE_REPEAT
# times in a row and the other fault tests (with the matrix's SIGSTOP tests,
# 4-5 s a run spent waiting for the detector) OFI_REPEAT times; the fault
# tests once over sockets and tcp;ofi_rxm.  What make test sets, and why
# (CI's 45 minutes): TESTING.md.
REPEAT ?= 1
TCP_REPEAT ?= $(REPEAT)
TCP_FIRST_NP ?= 0
OFI_REPEAT ?= 1
OFI_LIFE_REPEAT ?= 1
OFI_RUN := FS_TEST_FIRST_NP=1 bash tests/mpi/run.sh $(BUILD)
mpi-test: all
	@FS_TEST_CONFIGS=shm FS_TEST_REPEAT=$(REPEAT) bash tests/mpi/run.sh $(BUILD)
	@FS_TEST_CONFIGS=tcp FS_TEST_REPEAT=$(REPEAT) FS_TEST_FILTER='^tf_life_' \
	    bash tests/mpi/run.sh $(BUILD)
	@FS_TEST_CONFIGS=tcp FS_TEST_REPEAT=$(TCP_REPEAT) FS_TEST_EXCLUDE='^tf_life_' \
	    FS_TEST_FIRST_NP=$(TCP_FIRST_NP) bash tests/mpi/run.sh $(BUILD)
	@FS_TEST_CONFIGS="ofi-shm ofi-net" FS_TEST_REPEAT=$(OFI_LIFE_REPEAT) \
	    FS_TEST_FILTER='^tf_life_[a-z]*$$' $(OFI_RUN)
	@FS_TEST_CONFIGS="ofi-shm ofi-net" FS_TEST_REPEAT=$(OFI_REPEAT) \
	    FS_TEST_EXCLUDE='^tf_life_[a-z]*$$' $(OFI_RUN)
	@FS_TEST_CONFIGS="ofi-sockets ofi-rxm" FS_TEST_FAULT_ONLY=1 $(OFI_RUN)
	@bash tests/mpi/exit_status.sh $(BUILD)
	@bash tests/mpi/hb_foreign.sh $(BUILD)
	@bash tests/mpi/hb_netns.sh $(BUILD)

external-test: all
	@bash tests/external/run.sh $(BUILD)

# three simulated hosts (network namespaces, Open MPI's rsh launcher): the
# failure-free suite once, fault tests across hosts FS_HOSTS_REPEAT times
hosts-test: all
	@FS_HOSTS_REPEAT=$${FS_HOSTS_REPEAT:-10} bash tests/hosts/run.sh $(BUILD)

# the same hosts under Slurm (tests/hosts/slurm-run.sh: slurmctld and a
# slurmd per host; every job failstop-run inside an allocation, ranks
# started by srun): fault tests, net.sh's kill, crash and partition, flaps
# (make test: five of flap.sh's scenarios, for CI's time; make soak: all)
FLAP_ALL := flap0.1 flap0.3 flap1 flap2 flaps5 wireup rndv coll fin hold reset outage
slurm-test: all
	@FS_HOSTS_REPEAT=$${FS_HOSTS_REPEAT:-3} bash tests/hosts/slurm-run.sh $(BUILD)

# Every fault test 20 times in a row, per transport and launcher: the MPI
# suite's fault tests over UCX shared memory and TCP and the OFI providers
# (mpi-test with every loop at 20), then everything across hosts (the
# fault tests, net.sh, flap.sh at 3 and 6 hosts; then under Slurm).  CI runs the same loops
# fewer times (make test).
soak: soak-mpi soak-hosts
soak-mpi: all
	@$(MAKE) --no-print-directory mpi-test REPEAT=20 TCP_REPEAT=20 OFI_REPEAT=20 OFI_LIFE_REPEAT=20
soak-hosts: all
	@$(MAKE) --no-print-directory hosts-test FS_HOSTS_REPEAT=20
	@FS_SLURM_FLAP_SCENARIOS="$(FLAP_ALL)" $(MAKE) --no-print-directory slurm-test FS_HOSTS_REPEAT=20

# MPICH's MPI test suite (../shared/third_party/), built into $(BUILD)/conformance,
# each test over failstop and over ob1; fails if one passes over ob1 only
conformance: all
	@bash tests/conformance/build.sh $(BUILD)
	@bash tests/conformance/run.sh $(BUILD)

# Open MPI 5 (issue 15): this tree built against Debian 13's Open MPI 5.0.7
# and UCX 1.18 in a chroot made on first use under build-ompi5/ (about a
# minute; tests/ompi5/chroot.sh), then the unit tests and the MPI suite over
# UCX shared memory and TCP there, each test at its first rank count, fault
# tests REPEAT times in a row (20 unless given; .ci/run: 2), then the
# Slurm tests (Slurm 24.11, srun: a node crash survived) SLURM_REPEAT times
# each (REPEAT unless given; .ci/run: 1, for CI's time: 4.6 min a loop).
# Needs root.
OMPI5_ROOT := build-ompi5/debian13
# inside the chroot: failstop-run's Open MPI 5 component directory, asked once
OMPI5_PKGLIBDIR_ENV = FAILSTOP_OMPI_PKGLIBDIR=$$(ompi_info --parsable --path pkglibdir | sed -n 's/^path:pkglibdir://p')
OMPI5_MAKE := $(MAKE) --no-print-directory BUILD=build-ompi5 OMPI_SRCDIR=/opt/ompi-src/current
test-ompi5: REPEAT = 20
test-ompi5: SLURM_REPEAT = $(REPEAT)
test-ompi5:
	@bash tests/ompi5/chroot.sh $(OMPI5_ROOT) $(OMPI5_MAKE) ompi5-suite REPEAT=$(REPEAT)
	@bash tests/ompi5/chroot.sh $(OMPI5_ROOT) $(OMPI5_MAKE) ompi5-slurm FS_HOSTS_REPEAT=$(SLURM_REPEAT)

# the across-hosts tests (hosts-test: simulated hosts, PRRTE's ssh launcher
# entering them) under Open MPI 5, in the same chroot
hosts-test-ompi5:
	@bash tests/ompi5/chroot.sh $(OMPI5_ROOT) $(OMPI5_MAKE) ompi5-hosts

# inside the chroot only
ompi5-hosts:
	@[ "$(OMPI_MAJOR)" = 5 ] || { echo "ompi5-hosts runs inside the Open MPI 5 chroot: make hosts-test-ompi5" >&2; exit 2; }
	@$(MAKE) --no-print-directory -j2 all
	@$(OMPI5_PKGLIBDIR_ENV) \
	    FS_HOSTS_REPEAT=$${FS_HOSTS_REPEAT:-10} bash tests/hosts/run.sh $(BUILD)

# the Slurm tests (slurm-test) under Open MPI 5 and Slurm 24.11, in the same
# chroot (in test-ompi5)
slurm-test-ompi5:
	@bash tests/ompi5/chroot.sh $(OMPI5_ROOT) $(OMPI5_MAKE) ompi5-slurm

# inside the chroot only
ompi5-slurm:
	@[ "$(OMPI_MAJOR)" = 5 ] || { echo "ompi5-slurm runs inside the Open MPI 5 chroot: make slurm-test-ompi5" >&2; exit 2; }
	@$(MAKE) --no-print-directory -j2 all
	@$(OMPI5_PKGLIBDIR_ENV) \
	    FS_HOSTS_REPEAT=$${FS_HOSTS_REPEAT:-3} bash tests/hosts/slurm-run.sh $(BUILD)

# inside the chroot only
ompi5-suite:
	@[ "$(OMPI_MAJOR)" = 5 ] || { echo "ompi5-suite runs inside the Open MPI 5 chroot: make test-ompi5" >&2; exit 2; }
	@$(MAKE) --no-print-directory -j2 all
	@bash tests/run-unit.sh $(BUILD)
	@# prterun will not start where a dead prterun of the same pid left its
	@# session directory (PMIX_ERR_EXISTS, PRRTE's session_dir.c): clear those
	@for d in /tmp/prterun.*; do [ -d "$$d" ] || continue; \
	    kill -0 "$$(echo "$$d" | awk -F. '{ print $$(NF - 1) }')" 2>/dev/null || rm -rf "$$d"; done
	@$(OMPI5_PKGLIBDIR_ENV) \
	    FS_TEST_CONFIGS="shm tcp" FS_TEST_FIRST_NP=1 FS_TEST_REPEAT=$(REPEAT) \
	    bash tests/mpi/run.sh $(BUILD)
	@$(OMPI5_PKGLIBDIR_ENV) \
	    bash tests/ompi5/ulfm.sh $(BUILD) $(REPEAT)

test: deps
	@$(MAKE) --no-print-directory -j2 all
	@$(MAKE) --no-print-directory unit-test
	@$(MAKE) --no-print-directory tools-test
	@$(MAKE) --no-print-directory validate-test
	@$(MAKE) --no-print-directory mpi-test REPEAT=10 TCP_REPEAT=5 TCP_FIRST_NP=1 OFI_LIFE_REPEAT=5
	@$(MAKE) --no-print-directory hosts-test FS_HOSTS_REPEAT=3
	@$(MAKE) --no-print-directory slurm-test FS_HOSTS_REPEAT=3
	@$(MAKE) --no-print-directory tsan
	@$(MAKE) --no-print-directory external-test
	@$(MAKE) --no-print-directory fuzz-short
	@$(MAKE) --no-print-directory conformance

demo: deps
	@$(MAKE) --no-print-directory -j2 all
	@bash src/tools/demo.sh $(BUILD)

asan:
	@$(MAKE) --no-print-directory BUILD=build-asan OPT=-O1 \
	    SANITIZE="-fsanitize=address,undefined -fno-omit-frame-pointer" all
	@bash tests/run-unit.sh build-asan
	@FS_ASAN=1 bash tests/mpi/run.sh build-asan

# ---- fuzzing: clang + libFuzzer, ASan and UBSan, into build-fuzz/ ----------
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN     := $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/fuzz/%)
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_SECONDS ?= 300

fuzz-build:
	@$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang OPT=-O1 \
	    SANITIZE="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" build-fuzz/lib/libfailstop_core.a
	@$(MAKE) --no-print-directory $(FUZZ_BIN)

build-fuzz/fuzz/%: tests/fuzz/%.c build-fuzz/lib/libfailstop_core.a tests/proto/fake_tl.h
	@mkdir -p $(@D)
	clang -O1 -g -std=gnu11 $(WARN) -fsanitize=fuzzer $(FUZZ_SAN) -Iinclude -Isrc \
	    -o $@ $< build-fuzz/lib/libfailstop_core.a $(CORE_LIBS)

# a short run of each target (make test), then the long one
fuzz-short: deps fuzz-build
	@bash tests/fuzz/run.sh build-fuzz 15

fuzz: deps fuzz-build
	@bash tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

# ThreadSanitizer over the multithreaded MPI tests.  The test programs are
# linked with -fsanitize=thread, so the TSan runtime is loaded before Open MPI,
# UCX and PMIx (not instrumented) and before the component Open MPI dlopens.
# -Wno-tsan: Open MPI's inline atomics use atomic_thread_fence, which TSan
# does not model (failstop's own code uses none; what the fences hide is
# handled in tests/tsan.supp and src/common/fs_tsan.h).  The ranks run with
# UCX's memory hooks off (run.sh FS_TSAN=1), which crash TSan.
# Not the Criterion unit tests: Criterion cannot start under TSan (its
# inheritable arena is mapped where TSan keeps its shadow memory,
# Snaipe/Criterion#274), and no unit test starts a thread.
TSAN_TESTS ?= ^(t_threads|t_threads_stress|tf_fail_threads|tf_fail_waitall_mt)$$
tsan:
	@$(MAKE) --no-print-directory BUILD=build-tsan OPT=-O1 \
	    SANITIZE="-fsanitize=thread -Wno-tsan" all
	@FS_TSAN=1 FS_TEST_FILTER='$(TSAN_TESTS)' bash tests/mpi/run.sh build-tsan

bench: all
	@bash bench/run.sh $(BUILD)

bench-killtime: all
	@bash bench/killtime.sh $(BUILD)

# the same over failstop's OFI transport, one column per libfabric provider
bench-killtime-ofi: all
	@FS_KT_NAME=killtime_ofi FS_KT_TRANSPORTS="ofi-net ofi-shm ofi-sockets ofi-rxm" \
	    FS_KT_SCENARIOS="s1 s2 s3" FS_KT_KEEPALIVE="" FS_KT_BASELINE="" \
	    bash bench/killtime.sh $(BUILD)

# kill, node crash and partition across 3 and 6 simulated hosts -> docs/perf/hosts.md
bench-flap: all
	@bash bench/flap.sh $(BUILD)

# many ranks on one node (2-256) vs pml ucx and ob1: memory, MPI_Init,
# first and steady collectives, wall -> docs/perf/scale.md
bench-scale: all
	@bash bench/scale.sh $(BUILD)

bench-hosts: all
	@bash bench/hosts.sh $(BUILD)

# the detector at 1000, 10000 and 100000 simulated ranks (about 5 GB, 1 min)
# agreement, validate and shrink latency vs ranks (star, binomial, with a
# failed member) -> docs/perf/agree.md
bench-agree: all
	@bash bench/agree.sh $(BUILD)

# MPICH's test/mpi/ft over failstop (sources from a checkout: FS_MPICH_REPO;
# not in `make test`, CI has no copy of them)
ft-mpich: all
	@bash tests/ftsuites/mpich_ft.sh $(BUILD)

# ULFM's api, tutorial and stress tests (ICLDisco/ulfm-testing) over failstop (FS_ULFM_REPO)
ft-ulfm: all
	@bash tests/ftsuites/ulfm_api.sh $(BUILD)
	@bash tests/ftsuites/ulfm_more.sh $(BUILD)

# failure-free OSU collectives, failstop at BASE (default 3bd95f3) vs now
# -> docs/perf/coll_ab.md
bench-osu: all
	@bash bench/osu.sh $(BUILD)

# failstop-validate: a short run and its report checked against the runs
# (make test, ~25 s); the full report; across 3 simulated hosts
validate-test: all
	@bash tests/tools/test_validate.sh $(BUILD) ucx:shm
validate: all
	@BUILD=$(BUILD) HERE=$(CURDIR) bash -c '. bench/osu_build.sh && osu_build' && \
	    $(BUILD)/bin/failstop-validate --reps 3 --soak 1 --osu $(abspath $(BUILD))/osu/osu-micro-benchmarks-7.4/c/mpi --osu-max 1048576 \
	    --out $(BUILD)/validate
# the full report's page in headless Chromium (package chromium; by hand)
validate-screenshot:
	@bash tests/tools/screenshot.sh $(BUILD)/validate
validate-hosts: all
	@bash tests/hosts/validate.sh $(BUILD) $(abspath $(BUILD))/validate-hosts --reps 3 --soak 1

# failstop's OFI transport against Open MPI's own OFI path (pml cm + mtl
# ofi, same provider) and ob1 -> docs/perf/osu_ofi.md
bench-hbtime-ofi: all
	@FS_HB_NAME=hbtime_ofi FS_HB_TRANSPORTS="ofi-net ofi-shm ofi-sockets ofi-rxm" \
	    FS_HB_NPS="2 4 8" bash bench/hbtime.sh $(BUILD)

bench-osu-ofi: all
	@FS_OSU_NAME=osu_ofi FS_OSU_REF=cm FS_OSU_TRANSPORTS="ofi-net ofi-shm" \
	    FS_OSU_CONFIGS="failstop cm ob1" FS_OSU_BENCHES="osu_latency osu_bw osu_bibw" \
	    bash bench/osu.sh $(BUILD)

bench-coll-ab: all
	@bash bench/osu_coll_ab.sh $(BUILD) $(BASE)

bench-detector: all
	@FS_DET_SCALE_N="1000 10000 100000" $(BUILD)/tests/failure/test_detector_scale \
	    --filter 'det_scale/report' --jobs 1

install: all
	install -d $(PREFIX)/bin $(PREFIX)/include $(PREFIX)/lib/openmpi \
	    $(PREFIX)/lib/pkgconfig $(PREFIX)/libexec/failstop
	install -m 0755 $(RUNNER) $(PREFIX)/bin/failstop-run
	install -m 0755 $(RANKWRAP) $(PREFIX)/libexec/failstop/failstop-rank
	install -m 0755 $(REPORTER) $(PREFIX)/libexec/failstop/failstop-report
	install -m 0755 $(PROBE) $(TOPO) $(BUILD)/libexec/failstop/failstop-validate-report \
	    $(PREFIX)/libexec/failstop/
	install -m 0755 $(BUILD)/bin/failstop-validate $(PREFIX)/bin/failstop-validate
	install -m 0644 include/failstop.h $(PREFIX)/include/failstop.h
	install -m 0755 $(SO_LIB) $(PREFIX)/lib/libfailstop.so
	install -m 0755 $(COMP_SO) $(PREFIX)/lib/openmpi/mca_pml_failstop.so
	install -m 0755 $(COLL_SO) $(PREFIX)/lib/openmpi/mca_coll_failstop.so
	sed -e 's|@PREFIX@|$(abspath $(PREFIX))|' src/tools/failstop.pc.in \
	    > $(PREFIX)/lib/pkgconfig/failstop.pc

# build-ompi5 holds the Debian 13 chroot too (its mounts live only in
# tests/ompi5/chroot.sh's own mount namespace, never here)
clean:
	rm -rf build build-asan build-fuzz build-tsan build-ompi5

-include $(CORE_OBJ:.o=.d) $(OMPI_OBJ:.o=.d) $(SHIM_OBJ:.o=.d) $(CSHIM_OBJ:.o=.d) $(UNIT_BIN:=.d)
