/* faulttest.h: helpers for the fault-injection tests (tests/mpi/tf_fail_*.c).
 *
 * Builds on mpitest.h.  A fault test kills one or more ranks at a chosen
 * point and checks what the survivors see.  Conventions (checked by run.sh):
 *   - a rank that dies on purpose calls ft_die(), which leaves the
 *     "injected.<rank>" marker for failstop-run and kills the process with
 *     SIGKILL, as a crash would; ranks killed from outside (failstop-run
 *     --kill, pml_failstop_inject) are recorded by the launcher;
 *   - every survivor prints its "MPITEST OK" line through ft_finish(), which
 *     does not use collectives on communicators with failed processes;
 *   - every wait has a deadline (FT_DEADLINE seconds), so a missing
 *     notification fails the test instead of hanging it.
 */
#ifndef FAULTTEST_H
#define FAULTTEST_H

#include "mpitest.h"
#include "failstop.h"
#include "common/fs_record.h"

#include <signal.h>
#include <unistd.h>

/* Longest a survivor waits to learn of a failure.  UCX reports a killed
 * peer within a few hundred milliseconds; this is a hang guard, not a
 * performance assertion. */
#define FT_DEADLINE 20.0

/* Records that this rank receives sig on purpose (the harness counts it
 * as the planned death), then sends it to itself. */
static inline void ft_raise_recorded(int sig)
{
    char text[16];

    snprintf(text, sizeof text, "%d\n", sig);
    fs_record("injected", mt_rank(), text);
    fflush(stdout);
    fflush(stderr);
    raise(sig);
}

/* Dies on purpose, as a crash would. */
__attribute__((noreturn))
static inline void ft_die(void)
{
    ft_raise_recorded(SIGKILL);
    _exit(137);
}

/* Hangs on purpose (SIGSTOP), as a hung process would; failstop-run's
 * waiter kills it once it stayed stopped for --fence-stopped. */
static inline void ft_stop(void)
{
    ft_raise_recorded(SIGSTOP);
}

/* Asserts that rc reports a failed process (MPIX_ERR_RANK_FAIL_STOP): its
 * class, and the code is the class itself (ULFM programs compare
 * rc == MPIX_ERR_PROC_FAILED). */
static inline void ft_expect_failed(mt_loc at, int rc, const char *what)
{
    mt_expect_class(at, rc, MPIX_ERR_RANK_FAIL_STOP, what);
    mt_expect(at, rc == MPIX_ERR_PROC_FAILED, "%s: code %d is not the class %d itself",
              what, rc, MPIX_ERR_PROC_FAILED);
}

/* Asserts that the failure class has both spellings, a message naming it,
 * and is not one of the predefined classes -- except under Open MPI 5,
 * which has ULFM's classes built in: there it is MPI_ERR_PROC_FAILED. */
static inline void ft_check_class(void)
{
    char s[MPI_MAX_ERROR_STRING];
    int cls = MPIX_ERR_RANK_FAIL_STOP, n = 0, active = 0, flag = 0;
    int *lastused = NULL;

    MT_CHECK(MPIX_Failstop_active(&active));
    mt_expect(MT_HERE, active, "failstop is not the PML in use");
#if defined(OMPI_MAJOR_VERSION) && (OMPI_MAJOR_VERSION >= 5)
    mt_expect(MT_HERE, (cls == MPI_ERR_PROC_FAILED) && (MPIX_ERR_REVOKED == MPI_ERR_REVOKED) &&
              (MPIX_ERR_PROC_FAILED_PENDING == MPI_ERR_PROC_FAILED_PENDING),
              "failure classes %d %d %d are not Open MPI 5's %d %d %d", cls, MPIX_ERR_REVOKED,
              MPIX_ERR_PROC_FAILED_PENDING, MPI_ERR_PROC_FAILED, MPI_ERR_REVOKED,
              MPI_ERR_PROC_FAILED_PENDING);
    MT_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_FT, &lastused, &flag));
    mt_expect(MT_HERE, flag && *lastused == 1, "MPI_FT attribute: flag %d value %d", flag,
              flag ? *lastused : -1);
    (void)s;
    (void)n;
    return;
#endif
    /* a class added at run time: past the predefined ones and within
     * MPI_LASTUSEDCODE.  (Open MPI 4.1's MPI_Error_class maps every added
     * class to MPI_ERR_UNKNOWN, so that cannot be asked.) */
    MT_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastused, &flag));
    mt_expect(MT_HERE, flag && cls > MPI_ERR_LASTCODE && cls <= *lastused,
              "failure class %d is not an added class (predefined up to %d, "
              "last used %d)", cls, MPI_ERR_LASTCODE, flag ? *lastused : -1);
    mt_expect(MT_HERE, cls == MPIX_ERR_PROC_FAILED, "two spellings differ");
    MT_CHECK(MPI_Error_string(cls, s, &n));
    mt_expect(MT_HERE, strstr(s, "MPI_ERR_RANK_FAIL_STOP") != NULL,
              "class string '%s' does not name MPI_ERR_RANK_FAIL_STOP", s);
    /* ULFM's attribute: failures are tolerated */
    MT_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &lastused, &flag));
    mt_expect(MT_HERE, flag && *lastused == 1, "MPIX_FT attribute: flag %d value %d", flag,
              flag ? *lastused : -1);
}

/* The ranks in comm's group of group g's members, in g's order (at most
 * 64); returns g's size. */
static inline int ft_group_ranks_in(MPI_Group g, MPI_Comm comm, int *out)
{
    MPI_Group all;
    int n, i, in[64];

    MT_CHECK(MPI_Group_size(g, &n));
    mt_expect(MT_HERE, n <= 64, "group of %d, at most 64", n);
    MT_CHECK(MPI_Comm_group(comm, &all));
    for (i = 0; i < n; i++)
        in[i] = i;
    MT_CHECK(MPI_Group_translate_ranks(g, n, in, all, out));
    MT_CHECK(MPI_Group_free(&all));
    return n;
}

/* The world ranks of comm's members, in comm's order; returns its size. */
static inline int ft_world_ranks_of(MPI_Comm comm, int *out)
{
    MPI_Group g;
    int n;

    MT_CHECK(MPI_Comm_group(comm, &g));
    n = ft_group_ranks_in(g, MPI_COMM_WORLD, out);
    MT_CHECK(MPI_Group_free(&g));
    return n;
}

/* 1 if world rank r of comm is in comm's failed group (comm an intra-
 * communicator; r in comm's numbering). */
static inline int ft_is_known_failed(MPI_Comm comm, int r)
{
    MPI_Group failed, grp;
    int n = 0, i, out = MPI_UNDEFINED, found = 0;

    MT_CHECK(MPIX_Comm_group_failed(comm, &failed));
    MT_CHECK(MPI_Group_size(failed, &n));
    if (n > 0) {
        MT_CHECK(MPI_Comm_group(comm, &grp));
        for (i = 0; i < n && !found; i++) {
            MT_CHECK(MPI_Group_translate_ranks(failed, 1, &i, grp, &out));
            found = out == r;
        }
        MT_CHECK(MPI_Group_free(&grp));
    }
    MT_CHECK(MPI_Group_free(&failed));
    return found;
}

/* Makes progress until this process knows rank r of comm failed: polls a
 * probe naming r (which fails once r is known failed), at most
 * FT_DEADLINE seconds.  Returns the seconds waited. */
static inline double ft_wait_failed(mt_loc at, MPI_Comm comm, int r)
{
    double t0 = mt_now();
    MPI_Status st;
    int flag = 0, rc;

    for (;;) {
        rc = MPI_Iprobe(r, 32767, comm, &flag, &st);
        if (rc != MPI_SUCCESS) {
            ft_expect_failed(at, rc, "probe naming the failed rank");
            mt_expect(at, ft_is_known_failed(comm, r),
                      "probe failed but rank %d is not in the failed group", r);
            return mt_now() - t0;
        }
        if (mt_now() - t0 > FT_DEADLINE)
            mt_fail(at, "rank %d not reported failed after %.0f s", r,
                    FT_DEADLINE);
    }
}

/* MPI_Wait with a deadline: polls MPI_Test for at most FT_DEADLINE seconds
 * (a missing failure notification fails the test, never hangs it), calling
 * each(arg) between polls if not NULL, and returns MPI_Test's code. */
static inline int ft_wait_each(mt_loc at, MPI_Request *req, MPI_Status *st,
                               const char *what, void (*each)(void *), void *arg)
{
    double t0 = mt_now();
    int flag = 0, rc;

    for (;;) {
        rc = MPI_Test(req, &flag, st);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        if (each != NULL)
            each(arg);
        if (mt_now() - t0 > FT_DEADLINE)
            mt_fail(at, "%s: not complete after %.0f s", what, FT_DEADLINE);
    }
}

static inline int ft_wait(mt_loc at, MPI_Request *req, MPI_Status *st,
                          const char *what)
{
    return ft_wait_each(at, req, st, what, NULL, NULL);
}

/* Watchdog for a blocking call that cannot be polled (a collective, a
 * blocking receive): an alarm after FT_DEADLINE seconds turns a hang into a
 * failure naming the call.  One call at a time. */
typedef struct ft_watchdog {
    char   msg[256];
    size_t len;
} ft_watchdog_t;

static inline ft_watchdog_t *ft_watchdog(void)
{
    static ft_watchdog_t wd;
    return &wd;
}

static inline void ft_watchdog_fire(int sig)
{
    ssize_t n;
    (void)sig;
    n = write(2, ft_watchdog()->msg, ft_watchdog()->len);
    (void)n;
    _exit(1);
}

static inline void ft_watchdog_arm(mt_loc at, const char *what)
{
    ft_watchdog_t *wd = ft_watchdog();
    int n = snprintf(wd->msg, sizeof wd->msg, "MPITEST FAIL %s rank %d/%d at "
                     "%s:%d: %s: no return after %.0f s (hang)\n",
                     mt_st()->name, mt_rank(), mt_size(), at.file, at.line,
                     what, FT_DEADLINE);
    wd->len = (n > 0 && (size_t)n < sizeof wd->msg) ? (size_t)n
                                                     : sizeof wd->msg - 1;
    signal(SIGALRM, ft_watchdog_fire);
    alarm((unsigned)FT_DEADLINE);
}

static inline void ft_watchdog_disarm(void)
{
    alarm(0);
}

/* 1 if process pid (on this node) exists and is stopped: /proc state T. */
static inline int ft_is_stopped(int pid)
{
    char path[64], buf[512], *p;
    FILE *f;
    size_t len;

    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    p = strrchr(buf, ')');      /* the command name may contain spaces */
    return (p != NULL) && (p[1] == ' ') && (p[2] == 'T' || p[2] == 't');
}

/* One of failstop's counters (MPIX_Failstop_counter). */
static inline unsigned long long ft_counter(const char *name)
{
    unsigned long long x = 0;

    MT_CHECK(MPIX_Failstop_counter(name, &x));
    return x;
}

/* Size of comm's failed group. */
static inline int ft_failed_count(MPI_Comm comm)
{
    MPI_Group failed;
    int n = 0;

    MT_CHECK(MPIX_Comm_group_failed(comm, &failed));
    MT_CHECK(MPI_Group_size(failed, &n));
    MT_CHECK(MPI_Group_free(&failed));
    return n;
}

/* Exchanges one checked message with every other rank in live (ranks of
 * MPI_COMM_WORLD, n of them): survivors keep talking after a failure. */
static inline void ft_survivors_exchange(const int *live, int n, int tag)
{
    int me = mt_rank(), i, got;
    MPI_Request *rq = mt_malloc(sizeof(*rq) * 2 * (size_t)n);
    int *in = mt_malloc(sizeof(int) * (size_t)n);
    int k = 0;

    for (i = 0; i < n; i++) {
        if (live[i] == me)
            continue;
        MT_CHECK(MPI_Irecv(&in[i], 1, MPI_INT, live[i], tag, MPI_COMM_WORLD,
                           &rq[k++]));
        MT_CHECK(MPI_Isend(&me, 1, MPI_INT, live[i], tag, MPI_COMM_WORLD,
                           &rq[k++]));
    }
    MT_CHECK(MPI_Waitall(k, rq, MPI_STATUSES_IGNORE));
    for (i = 0; i < n; i++) {
        got = in[i];
        mt_expect(MT_HERE, live[i] == me || got == live[i],
                  "survivor exchange: got %d from rank %d", got, live[i]);
    }
    free(in);
    free(rq);
}

/* Asserts that rc reports a failed process or, for a process that announced
 * its departure (MPI_Finalize) before it died, the "left" outcome: class
 * MPI_ERR_OTHER, "already called MPI_Finalize" (docs/SEMANTICS.md). */
static inline void ft_expect_failed_or_left(mt_loc at, int rc, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;

    if (rc != MPI_SUCCESS && mt_errclass(rc) == MPI_ERR_OTHER &&
        MPI_Error_string(rc, s, &n) == MPI_SUCCESS && strstr(s, "MPI_Finalize") != NULL)
        return;
    ft_expect_failed(at, rc, what);
}

/* The lifecycle tests' victim records its pid (FAILSTOP_STATUS_DIR/
 * testpid.<rank>), so that survivors can look at it without contacting it. */
static inline void ft_publish_pid(void)
{
    const char *dir = getenv("FAILSTOP_STATUS_DIR");
    char path[4096];
    FILE *f;

    mt_expect(MT_HERE, dir != NULL && *dir != '\0', "no FAILSTOP_STATUS_DIR");
    snprintf(path, sizeof path, "%s/testpid.%d", dir, mt_rank());
    f = fopen(path, "w");
    mt_expect(MT_HERE, f != NULL, "cannot write %s", path);
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
}

/* The pid rank r published (ft_publish_pid), waiting for it at most
 * FT_DEADLINE seconds. */
static inline int ft_peer_pid(int r)
{
    const char *dir = getenv("FAILSTOP_STATUS_DIR");
    char path[4096];
    double t0 = mt_now();
    int pid = 0;
    FILE *f;

    snprintf(path, sizeof path, "%s/testpid.%d", dir ? dir : ".", r);
    while (pid <= 0) {
        f = fopen(path, "r");
        if (f != NULL) {
            if (fscanf(f, "%d", &pid) != 1)
                pid = 0;
            fclose(f);
        }
        if (pid <= 0 && mt_now() - t0 > FT_DEADLINE)
            mt_fail(MT_HERE, "rank %d published no pid in %s", r, path);
        if (pid <= 0)
            mt_sleep_ms(10);
    }
    return pid;
}

/* Tag of ft_barrier_then_die's confirmations; no test uses it otherwise. */
#define FT_TAG_LEFT_BARRIER 32100

/* A barrier on MPI_COMM_WORLD that process v survives until every other
 * process has left it, then v dies.  A process still inside the barrier
 * when v's death becomes known would get the failure from it (the
 * communicator is then collectively inactive): leaving a barrier only says
 * that everyone entered it. */
static inline void ft_barrier_then_die(int v)
{
    int i, x = 0, n = mt_size();

    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank() == v) {
        for (i = 0; i < n - 1; i++)
            MT_CHECK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE,
                              FT_TAG_LEFT_BARRIER, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE));
        ft_die();
    }
    MT_CHECK(MPI_Send(&x, 1, MPI_INT, v, FT_TAG_LEFT_BARRIER, MPI_COMM_WORLD));
}

/* Survivors' first operations with process v, dead (or hung) before anyone
 * contacted it: a 100 kB send (rank 0), a receive (rank 1), a synchronous
 * send (the others) and then a broadcast rooted at v all end with the
 * failure class, never MPI_ERR_INTERN, within the watchdog's deadline; the
 * survivors then keep talking among themselves. */
static inline void ft_dead_peer_first_ops(int v, int tag)
{
    static char buf[100000];
    int me = mt_rank(), n = mt_size(), i, nlive = 0, live[64];

    mt_expect(MT_HERE, n <= 64, "at most 64 ranks");
    ft_watchdog_arm(MT_HERE, "first operation with a process dead before first contact");
    if (me == 0) {
        ft_expect_failed(MT_HERE, MPI_Send(buf, sizeof buf, MPI_CHAR, v, tag,
                                           MPI_COMM_WORLD),
                         "100 kB send to a process dead before first contact");
    } else if (me == 1) {
        ft_expect_failed(MT_HERE, MPI_Recv(buf, sizeof buf, MPI_CHAR, v, tag,
                                           MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                         "receive from a process dead before first contact");
    } else {
        ft_expect_failed(MT_HERE, MPI_Ssend(buf, 1, MPI_CHAR, v, tag, MPI_COMM_WORLD),
                         "synchronous send to a process dead before first contact");
    }
    ft_expect_failed(MT_HERE, MPI_Bcast(buf, 10, MPI_CHAR, v, MPI_COMM_WORLD),
                     "broadcast rooted at a process dead before first contact");
    ft_watchdog_disarm();
    for (i = 0; i < n; i++)
        if (i != v)
            live[nlive++] = i;
    ft_survivors_exchange(live, nlive, tag + 1);
}

/* A survivor's check that its failed group is exactly {v}; then the
 * survivors exchange messages, and nobody else is reported failed. */
static inline void ft_only_failed_then_exchange(int v, int tag)
{
    int n = mt_size(), i, nlive = 0, live[64];

    mt_expect(MT_HERE, n <= 64, "at most 64 ranks");
    mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 1 &&
              ft_is_known_failed(MPI_COMM_WORLD, v),
              "failed group is not exactly {%d}", v);
    for (i = 0; i < n; i++)
        if (i != v)
            live[nlive++] = i;
    ft_survivors_exchange(live, nlive, tag);
    mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 1,
              "another process was reported failed");
}

/* Survivors' end: finalize (which must complete after a failure) and
 * print the OK line.  No collective on MPI_COMM_WORLD: it has a failed
 * member and is collectively inactive. */
static inline int ft_finish(void)
{
    return mt_finalize_ok();
}

#endif /* FAULTTEST_H */
