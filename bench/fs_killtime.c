/* fs_killtime: how long after a process dies a survivor gets an error.
 *
 *   fs_killtime -s SCENARIO -f SHARED_FILE [-l LEAD_MS] [-j JITTER_MS]
 *               [-i IDLE_MS] [-D S]
 *
 * One mpirun is one trial: one rank (the victim, always the last rank) dies
 * by SIGKILL at a moment agreed in advance; the other ranks measure.
 *
 *   s1   2 ranks.  Rank 0 is blocked in MPI_Recv from the victim when the
 *        victim dies.  Measured: death -> MPI_Recv returns.
 *   s2   2 ranks.  Rank 0 computes (no MPI call at all) from before the
 *        death until IDLE_MS after it, then calls MPI_Recv naming the
 *        victim.  Measured: that call -> its error (and death -> error).
 *   s3   3 ranks.  Rank 0 as in s1; rank 1 (the bystander) never exchanged
 *        a message with the victim and polls MPI_Iprobe naming it.
 *        Measured: death -> the probe fails, for both.
 *   s3n  as s3, but the bystander disables its own UCX keepalive
 *        (UCX_KEEPALIVE_INTERVAL=inf, set before MPI_Init), so on shared
 *        memory it can only learn from failstop's failure notice.
 *
 * Timing.  Every rank runs on one host, so CLOCK_REALTIME (and
 * CLOCK_MONOTONIC, also system-wide on Linux) is one clock for all of them.
 * Rank 0 collects a READY message from every rank, picks the death time
 * T = now + LEAD_MS + a uniformly random 0..JITTER_MS and sends it to every
 * rank by point to point (no collective, so the bystander never talks to
 * the victim).  The random part matters: UCX's keepalive rounds run at a
 * fixed period from the first progress call, and with a fixed lead the
 * death fell at the same phase of that period in every trial (a constant
 * ~50 ms with a 100 ms interval); a real failure comes at any phase.  The victim
 * sleeps until T (clock_nanosleep, TIMER_ABSTIME), then reads both clocks,
 * stores them in SHARED_FILE (a MAP_SHARED mapping every rank has open) and
 * calls raise(SIGKILL) on the next line.  A survivor reads the clocks right
 * after its call returns the error and subtracts the victim's stamp.
 * Error bound: the stamp precedes the signal by one vDSO clock read plus
 * the store and the raise() system call entry (a few microseconds at most,
 * unless the victim is preempted in that window); the survivor's stamp
 * follows the error by the return path of the MPI call (microseconds).  So
 * a measured time exceeds the true signal-to-error time by < ~10 us.  The
 * kernel's teardown of the victim (closing its sockets, reaping) is part of
 * what is measured, deliberately: it is when the death becomes observable.
 * Both clocks are reported; a difference between them would reveal a clock
 * step during the trial.
 *
 * Output: one line per measuring rank,
 *   KT scen=.. role=.. rank=.. np=.. outcome=.. t_us=.. mono_us=.. ...
 * outcome: failstop (the error class is MPIX_ERR_RANK_FAIL_STOP), error
 * (another error class: err= names it), success (the call succeeded),
 * nodetect (s3 only: nothing within the deadline).  Without a failure the
 * program never ends by itself in s1/s2: the harness wraps it in timeout.
 *
 * Plain MPI plus failstop.h.  The MPIX functions are looked up at run time
 * (dlsym) so the program links without -lfailstop (the Makefile's bench
 * rule does not add it) and runs unchanged on pml ucx and ob1, where they
 * are absent and no error is the failure class. */
#define _GNU_SOURCE
#include <mpi.h>

#include "failstop.h"
#include "fs_bench_sym.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define KT_TAG_READY 1
#define KT_TAG_TIME  2
#define KT_TAG_NEVER 99       /* nobody ever sends this tag */
#define KT_MAGIC     0x4b494c4c54494d45ull

typedef struct {
    uint64_t magic;
    int64_t  kill_rt_ns;      /* victim's CLOCK_REALTIME before raise() */
    int64_t  kill_mono_ns;    /* victim's CLOCK_MONOTONIC before raise() */
    int32_t  written;         /* set last (release) */
} kt_shared_t;

typedef struct {
    int64_t rt;
    int64_t mono;
} kt_stamp_t;

static struct {
    const char *scen;
    const char *file;
    int lead_ms;
    int jitter_ms;
    int idle_ms;
    double deadline_s;
} opt = {NULL, NULL, 50, 1000, 300, 20.0};

static kt_shared_t *kt_sh;
static int me, np;

/* ---- failstop extension API, found at run time ------------------------- */

static typeof(&MPIX_Failstop_error_class) kt_fs_class;
static typeof(&MPIX_Failstop_counter) kt_fs_counter;
static typeof(&MPIX_Failstop_active) kt_fs_active;

static void kt_find_failstop(void)
{
    kt_fs_class   = (typeof(kt_fs_class))fs_bench_sym("MPIX_Failstop_error_class");
    kt_fs_counter = (typeof(kt_fs_counter))fs_bench_sym("MPIX_Failstop_counter");
    kt_fs_active  = (typeof(kt_fs_active))fs_bench_sym("MPIX_Failstop_active");
}

static int kt_failstop_active(void)
{
    int active = 0;

    return (kt_fs_active != NULL) && (kt_fs_active(&active) == MPI_SUCCESS) && active;
}

static long long kt_counter(const char *name)
{
    unsigned long long v = 0;

    if ((kt_fs_counter == NULL) || (kt_fs_counter(name, &v) != MPI_SUCCESS)) {
        return -1;
    }
    return (long long)v;
}

/* ---- helpers ------------------------------------------------------------ */

static void kt_die_usage(const char *msg)
{
    fprintf(stderr, "fs_killtime: %s\nusage: fs_killtime -s s1|s2|s3|s3n -f FILE "
            "[-l LEAD_MS] [-i IDLE_MS] [-D DEADLINE_S]\n", msg);
    exit(2);
}

static int64_t kt_ns(clockid_t c)
{
    struct timespec ts;

    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static kt_stamp_t kt_now(void)
{
    kt_stamp_t s;

    s.rt   = kt_ns(CLOCK_REALTIME);
    s.mono = kt_ns(CLOCK_MONOTONIC);
    return s;
}

static void kt_check(int rc, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;

    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, s, &n);
        fprintf(stderr, "fs_killtime rank %d: %s failed before the kill: %s\n", me, what, s);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

static void kt_parse(int argc, char **argv)
{
    int c;

    while ((c = getopt(argc, argv, "s:f:l:j:i:D:")) != -1) {
        switch (c) {
        case 's': opt.scen = optarg; break;
        case 'f': opt.file = optarg; break;
        case 'l': opt.lead_ms = atoi(optarg); break;
        case 'j': opt.jitter_ms = atoi(optarg); break;
        case 'i': opt.idle_ms = atoi(optarg); break;
        case 'D': opt.deadline_s = atof(optarg); break;
        default: kt_die_usage("bad option");
        }
    }
    if ((opt.scen == NULL) || (opt.file == NULL)) {
        kt_die_usage("-s and -f are required");
    }
    if (strcmp(opt.scen, "s1") && strcmp(opt.scen, "s2") && strcmp(opt.scen, "s3") &&
        strcmp(opt.scen, "s3n")) {
        kt_die_usage("unknown scenario");
    }
    if ((opt.lead_ms < 1) || (opt.jitter_ms < 0) || (opt.idle_ms < 0) ||
        (opt.deadline_s <= 0)) {
        kt_die_usage("bad number");
    }
}

/* Every rank maps the same page; only the victim writes it, survivors read
 * it after the victim is dead. */
static void kt_map(void)
{
    int fd = open(opt.file, O_RDWR | O_CREAT, 0600);

    if ((fd < 0) || (ftruncate(fd, sysconf(_SC_PAGESIZE)) != 0)) {
        fprintf(stderr, "fs_killtime: %s: %s\n", opt.file, strerror(errno));
        exit(2);
    }
    kt_sh = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_SHARED,
                 fd, 0);
    close(fd);
    if (kt_sh == MAP_FAILED) {
        fprintf(stderr, "fs_killtime: mmap %s: %s\n", opt.file, strerror(errno));
        exit(2);
    }
}

/* The failstop-run convention (tests/mpi/faulttest.h): a rank that dies on
 * purpose leaves injected.<rank>.  Written before the death time, so no
 * file I/O sits between the time stamp and the signal. */
static void kt_mark_injected(void)
{
    const char *dir = getenv("FAILSTOP_STATUS_DIR");
    char path[4096];
    FILE *f;

    if ((dir == NULL) || (*dir == '\0')) {
        return;
    }
    snprintf(path, sizeof path, "%s/injected.%d", dir, me);
    f = fopen(path, "w");
    if (f != NULL) {
        fprintf(f, "%d\n", SIGKILL);
        fclose(f);
    }
}

__attribute__((noreturn)) static void kt_victim(int64_t t_die_rt)
{
    struct timespec ts = {(time_t)(t_die_rt / 1000000000LL), (long)(t_die_rt % 1000000000LL)};
    kt_stamp_t s;

    kt_mark_injected();
    fflush(stdout);
    fflush(stderr);
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
    s = kt_now();
    kt_sh->kill_rt_ns   = s.rt;
    kt_sh->kill_mono_ns = s.mono;
    kt_sh->magic        = KT_MAGIC;
    __atomic_store_n(&kt_sh->written, 1, __ATOMIC_RELEASE);
    raise(SIGKILL);
    _exit(137);
}

/* Prints the measurement of one survivor.  call is when the MPI call that
 * reported the failure (or the probe loop) started; err when it returned. */
static void kt_report(const char *role, int rc, kt_stamp_t call, kt_stamp_t err,
                      long long polls)
{
    char s[MPI_MAX_ERROR_STRING] = "-";
    const char *outcome;
    int cls = -1, n = 0, i, fs_cls = (kt_fs_class != NULL) ? kt_fs_class() : -1;
    double t_us = -1, mono_us = -1, blocked_us = -1;

    if (rc == MPI_SUCCESS) {
        outcome = "success";
    } else if (rc == -1) {
        outcome = "nodetect";
    } else {
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, s, &n);
        for (i = 0; s[i] != '\0'; ++i) {
            if (s[i] == ' ' || s[i] == '\t' || s[i] == '"') {
                s[i] = '_';
            }
        }
        outcome = (cls == fs_cls) ? "failstop" : "error";
    }
    if (__atomic_load_n(&kt_sh->written, __ATOMIC_ACQUIRE) && kt_sh->magic == KT_MAGIC) {
        t_us       = (double)(err.rt - kt_sh->kill_rt_ns) * 1e-3;
        mono_us    = (double)(err.mono - kt_sh->kill_mono_ns) * 1e-3;
        blocked_us = (double)(kt_sh->kill_rt_ns - call.rt) * 1e-3;
    }
    printf("KT scen=%s role=%s rank=%d np=%d outcome=%s t_us=%.1f mono_us=%.1f "
           "call_us=%.1f blocked_us=%.1f polls=%lld class=%d err=%s failstop=%d "
           "notices_received=%lld peers_failed=%lld\n",
           opt.scen, role, me, np, outcome, t_us, mono_us,
           (double)(err.mono - call.mono) * 1e-3, blocked_us, polls, cls, s,
           kt_failstop_active(), kt_counter("notices_received"), kt_counter("peers_failed"));
    fflush(stdout);
}

/* Blocked in MPI_Recv from the victim when it dies. */
static void kt_detector(int victim)
{
    kt_stamp_t call, err;
    MPI_Status st;
    int x = 0, rc;

    call = kt_now();
    rc   = MPI_Recv(&x, 1, MPI_INT, victim, KT_TAG_NEVER, MPI_COMM_WORLD, &st);
    err  = kt_now();
    kt_report("detector", rc, call, err, 0);
}

/* Computes, without any MPI call, until idle_ms after the death time; then
 * the first MPI call names the victim. */
static void kt_idle(int victim, int64_t t_die_rt)
{
    int64_t until = t_die_rt + (int64_t)opt.idle_ms * 1000000LL;
    volatile double acc = 1.0;
    kt_stamp_t call, err;
    MPI_Status st;
    int x = 0, rc, i;

    while (kt_ns(CLOCK_REALTIME) < until) {
        for (i = 0; i < 1000; ++i) {
            acc = acc * 1.0000001 + 1e-9;
        }
    }
    call = kt_now();
    rc   = MPI_Recv(&x, 1, MPI_INT, victim, KT_TAG_NEVER, MPI_COMM_WORLD, &st);
    err  = kt_now();
    kt_report("idle", rc, call, err, 0);
}

/* Never talked to the victim: polls a probe naming it until the probe
 * fails (failstop: once the victim is known failed). */
static void kt_bystander(int victim)
{
    kt_stamp_t call, err;
    MPI_Status st;
    long long polls = 0;
    int64_t deadline;
    int flag = 0, rc;

    call     = kt_now();
    deadline = call.mono + (int64_t)(opt.deadline_s * 1e9);
    for (;;) {
        rc = MPI_Iprobe(victim, KT_TAG_NEVER, MPI_COMM_WORLD, &flag, &st);
        ++polls;
        if ((rc != MPI_SUCCESS) || flag) {
            break;
        }
        if ((polls & 255) == 0 && kt_ns(CLOCK_MONOTONIC) > deadline) {
            rc = -1;
            break;
        }
    }
    err = kt_now();
    kt_report("bystander", rc, call, err, polls);
}

int main(int argc, char **argv)
{
    const char *r_env = getenv("OMPI_COMM_WORLD_RANK");
    int want_np, victim, i, three;
    int64_t t_die = 0;
    MPI_Request *rq;

    kt_parse(argc, argv);
    three   = (opt.scen[1] == '3');
    want_np = three ? 3 : 2;
    /* s3n: the bystander (rank 1) gets no keepalive of its own */
    if (!strcmp(opt.scen, "s3n") && (r_env != NULL) && (atoi(r_env) == 1)) {
        setenv("UCX_KEEPALIVE_INTERVAL", "inf", 1);
    }
    kt_map();
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    kt_find_failstop();
    if (np != want_np) {
        if (me == 0) {
            fprintf(stderr, "fs_killtime: scenario %s needs %d ranks, got %d\n", opt.scen,
                    want_np, np);
        }
        MPI_Finalize();
        return 2;
    }
    victim = np - 1;

    /* agree on the death time, point to point with rank 0 only */
    if (me == 0) {
        rq = calloc((size_t)np, sizeof(*rq));
        for (i = 1; i < np; ++i) {
            int dummy;
            kt_check(MPI_Recv(&dummy, 1, MPI_INT, i, KT_TAG_READY, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE), "ready");
        }
        srandom((unsigned)(kt_ns(CLOCK_MONOTONIC) ^ ((int64_t)getpid() << 16)));
        t_die = kt_ns(CLOCK_REALTIME) + (int64_t)opt.lead_ms * 1000000LL;
        if (opt.jitter_ms > 0) {
            t_die += (int64_t)(random() % ((long)opt.jitter_ms * 1000L)) * 1000LL;
        }
        for (i = 1; i < np; ++i) {
            kt_check(MPI_Isend(&t_die, 1, MPI_INT64_T, i, KT_TAG_TIME, MPI_COMM_WORLD,
                               &rq[i]), "send time");
        }
        kt_check(MPI_Waitall(np - 1, rq + 1, MPI_STATUSES_IGNORE), "send time");
        free(rq);
    } else {
        kt_check(MPI_Send(&me, 1, MPI_INT, 0, KT_TAG_READY, MPI_COMM_WORLD), "ready");
        kt_check(MPI_Recv(&t_die, 1, MPI_INT64_T, 0, KT_TAG_TIME, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE), "time");
    }

    if (me == victim) {
        kt_victim(t_die);
    } else if (me == 0 && !strcmp(opt.scen, "s2")) {
        kt_idle(victim, t_die);
    } else if (me == 0) {
        kt_detector(victim);
    } else {
        kt_bystander(victim);
    }
    MPI_Finalize();
    return 0;
}
