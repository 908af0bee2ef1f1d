/* failstop-rank: runs one MPI rank under failstop-run.
 *
 * With --enable-recovery mpirun's exit code means nothing, so failstop-run
 * starts every rank through this waiter, which records how the rank ended in
 * $FAILSTOP_STATUS_DIR/rank.<N> (and that it started, with the job's size,
 * in started.<N>): a first line "exit <code> <time>" or
 * "signal <number> <time>", followed by " injected" when the waiter sent a
 * planned signal (below).  It forwards termination signals to the rank, and
 * the rank dies with it (PR_SET_PDEATHSIG) if the waiter itself is killed.
 *
 * $FAILSTOP_KILL ("RANK@SECONDS[:SIGNAL],...", from failstop-run --kill)
 * makes the waiter of RANK send SIGNAL (default SIGKILL) to its rank after
 * SECONDS: the process killed is the MPI process itself, as a crash would.
 * A rank may have several entries (e.g. STOP, then CONT); they are sent in
 * time order.
 *
 * Fencing: mpirun (4.1, --enable-recovery) ends the job only when every
 * process has terminated, so a rank that stays stopped (SIGSTOP, SIGTSTP...)
 * would keep the job alive forever after the survivors excluded it.  When
 * the rank has been stopped for $FAILSTOP_FENCE_STOPPED_MS milliseconds
 * (default 3000, 0 = never), the waiter kills it with SIGKILL; the record
 * then says "signal 9 ..." and has a second line
 * "fenced after stopped <ms> ms stop-signal <n>".  When the rank stops, the
 * waiter also writes $FAILSTOP_STATUS_DIR/stopped.<N> ("<stop signal>
 * <time>", the time the waiter saw the stop) for tests.  If the waiter itself
 * stalls while counting (the whole job stopped and resumed, an overloaded
 * machine), the count restarts rather than killing at once.
 *
 * The waiter sleeps in sigtimedwait() on SIGCHLD: blocked while the rank runs
 * (until the next planned signal, if any); while the rank is stopped it wakes
 * every FS_RANK_TICK_MS to notice its own stalls.
 *
 * A rank that ended inside MPI_Init after the address exchange (its up.<N>
 * record, no ready.<N>) leaves the others in the runtime's closing fence of
 * MPI_Init.  The local PMIx server releases that fence without the dead
 * process only if it sees the process's connection drop before the runtime,
 * told of the death by this waiter's exit, deregisters the process: PMIx
 * 5.0.7's deregistration (remove_client) closes the socket without counting
 * the process out of pending collectives, and the fence then waits for it
 * for ever (caught 1 run in 20-40 under load, tf_life_wireup_stop).  So the
 * waiter records the end at once but exits only when every other rank has
 * left MPI_Init or ended (their records), or after FS_RANK_INIT_HOLD_MS.
 *
 * Direct launch (srun --mpi=pmix, issue 41): there is no mpirun to name the
 * rank, so the rank and the job's size come from PMIx's or Slurm's variables
 * (PMIX_RANK, SLURM_PROCID; SLURM_STEP_NUM_TASKS, SLURM_NTASKS) and are
 * passed on as OMPI_COMM_WORLD_RANK and _SIZE, as mpirun would.  And where
 * nobody chose a PML (OMPI_MCA_pml unset: a user's own srun line), the
 * waiter selects failstop for its rank: OMPI_MCA_pml=failstop, the
 * component directory beside it (PREFIX/lib/openmpi, then Open MPI's own)
 * and OMPI_MCA_async_mpi_finalize=1, the settings failstop-run gives. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/fs_record.h"
#include "common/fs_time.h"
#include "tools/rank_pmix.h"

#define FS_RANK_MAX_KILLS        32
#define FS_RANK_FENCE_DEFAULT_MS 3000
/* Wake-up period while the rank is stopped and a fence limit is set. */
#define FS_RANK_TICK_MS          100
/* Looking for the rank's PMIx connection (rank_pmix.h): every 20 ms for the
 * first FS_RANK_PMIX_FAST_S seconds (MPI_Init), then every second. */
#define FS_RANK_PMIX_TICK_MS     20
#define FS_RANK_PMIX_SLOW_MS     1000
#define FS_RANK_PMIX_FAST_S      10
/* A wake-up this much later than planned means the waiter itself stalled. */
#define FS_RANK_STALL_MS         500
/* Longest hold of the exit after a death inside MPI_Init (above); below
 * failstop-run's 5 s, after which it ends a job still held there. */
#define FS_RANK_INIT_HOLD_MS     4000
#define FS_RANK_INIT_POLL_MS     5
/* "Never", in seconds (no libm: the Makefile links this without -lm). */
#define FS_RANK_NEVER            1e30
/* Open MPI's own component directory (the Makefile: where it was built
 * against), after failstop's in a direct launch's component path. */
#ifndef FS_OMPI_PKGLIBDIR
#define FS_OMPI_PKGLIBDIR "SYS_DEFAULT"
#endif

typedef struct {
    double at;   /* seconds after the rank started */
    int    sig;
} fs_rank_kill_t;

typedef struct {
    int  killed;     /* a planned signal was sent */
    int  fenced;     /* killed with SIGKILL after being stopped too long */
    long stopped_ms; /* how long it had been stopped when fenced */
    int  stop_sig;   /* the signal that stopped it (last stop seen) */
} fs_rank_outcome_t;

static volatile pid_t fs_rank_child = -1;

/* errno kept: the interrupted code may be about to read its own */
static void fs_rank_forward(int sig)
{
    int saved = errno;

    if (fs_rank_child > 0) {
        kill(fs_rank_child, sig);
    }
    errno = saved;
}

/* The first of the variables NAMES (NULL-ended) that is set and not empty. */
static const char *fs_rank_env_first(const char *const *names)
{
    const char *v;

    for (; *names != NULL; names++) {
        v = getenv(*names);
        if ((v != NULL) && (*v != '\0')) {
            return v;
        }
    }
    return NULL;
}

/* The rank's identity under any launcher, passed on in mpirun's names
 * (programs and failstop's records read those); -1 if nobody says. */
static int fs_rank_identity(void)
{
    static const char *const ranks[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                                        "SLURM_PROCID", NULL};
    static const char *const sizes[] = {"OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS",
                                        "SLURM_NTASKS", NULL};
    const char *rank = fs_rank_env_first(ranks);
    const char *size = fs_rank_env_first(sizes);

    if (rank == NULL) {
        return -1;
    }
    setenv("OMPI_COMM_WORLD_RANK", rank, 0);
    if (size != NULL) {
        setenv("OMPI_COMM_WORLD_SIZE", size, 0);
    }
    return atoi(rank);
}

/* A direct launch nobody configured for failstop (a user's own srun line,
 * OMPI_MCA_pml unset): the settings failstop-run would give. */
static void fs_rank_select_failstop(const char *self)
{
    char exe[4096], dirs[8192 + 64];
    char *slash;
    ssize_t n;
    int up;

    if ((getenv("SLURM_STEP_ID") == NULL) || (getenv("OMPI_MCA_pml") != NULL)) {
        return;
    }
    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) {
        fprintf(stderr, "failstop-rank: cannot find itself (%s): failstop not selected\n",
                self);
        return;
    }
    exe[n] = '\0';
    /* PREFIX/libexec/failstop/failstop-rank -> PREFIX */
    for (up = 0; up < 3; up++) {
        slash = strrchr(exe, '/');
        if (slash == NULL) {
            return;
        }
        *slash = '\0';
    }
    snprintf(dirs, sizeof(dirs), "%s/lib/openmpi:%s", exe, FS_OMPI_PKGLIBDIR);
    setenv("OMPI_MCA_pml", "failstop", 1);
    setenv("OMPI_MCA_mca_base_component_path", dirs, 0);
    setenv("OMPI_MCA_async_mpi_finalize", "1", 0);
    setenv("PMIX_MCA_mca_base_component_show_load_errors", "0", 0);
}

static double fs_rank_min(double a, double b)
{
    return (a < b) ? a : b;
}

/* Fills plan with this rank's entries in FAILSTOP_KILL, in time order (ties
 * in the order given); returns their number. */
static int fs_rank_kill_plan(int rank, fs_rank_kill_t *plan, int max)
{
    const char *env = getenv("FAILSTOP_KILL");
    char *copy, *item, *save = NULL;
    int n = 0, i, j;

    if ((env == NULL) || (*env == '\0') || ((copy = strdup(env)) == NULL)) {
        return 0;
    }
    for (item = strtok_r(copy, ",", &save); item != NULL;
         item = strtok_r(NULL, ",", &save)) {
        int r, sig = SIGKILL;
        double delay;
        if ((sscanf(item, "%d@%lf:%d", &r, &delay, &sig) < 2) || (r != rank)) {
            continue;
        }
        if (n == max) {
            fprintf(stderr, "failstop-rank: more than %d --kill entries for rank %d;"
                    " ignoring '%s'\n", max, rank, item);
            continue;
        }
        /* insertion sort, stable */
        for (i = n; (i > 0) && (plan[i - 1].at > delay); i--) {
            plan[i] = plan[i - 1];
        }
        plan[i].at  = delay;
        plan[i].sig = sig;
        n++;
    }
    free(copy);
    for (j = 0; j < n; j++) {
        if (!(plan[j].at >= 0)) {
            plan[j].at = 0;
        }
    }
    return n;
}

/* FAILSTOP_FENCE_STOPPED_MS: milliseconds, 0 = never; default when unset. */
static long fs_rank_fence_ms(void)
{
    const char *env = getenv("FAILSTOP_FENCE_STOPPED_MS");
    char *end;
    long ms;

    if ((env == NULL) || (*env == '\0')) {
        return FS_RANK_FENCE_DEFAULT_MS;
    }
    errno = 0;
    ms = strtol(env, &end, 10);
    if ((errno != 0) || (*end != '\0') || (ms < 0)) {
        fprintf(stderr, "failstop-rank: bad FAILSTOP_FENCE_STOPPED_MS '%s';"
                " using %d\n", env, FS_RANK_FENCE_DEFAULT_MS);
        return FS_RANK_FENCE_DEFAULT_MS;
    }
    return ms;
}

static void fs_rank_record(int rank, int status, const fs_rank_outcome_t *out)
{
    char text[256];
    int n;

    /* The first line's format is parsed by failstop-run and tests/mpi/run.sh. */
    n = snprintf(text, sizeof(text), "%s %d %.6f%s\n",
                 WIFSIGNALED(status) ? "signal" : "exit",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
                 fs_time_wall(), out->killed ? " injected" : "");
    if (out->fenced && (n > 0) && ((size_t)n < sizeof(text))) {
        snprintf(text + n, sizeof(text) - (size_t)n,
                 "fenced after stopped %ld ms stop-signal %d\n", out->stopped_ms,
                 out->stop_sig);
    }
    fs_record("rank", rank, text);
}

/* That the rank started, with the job's size and the host: failstop-run
 * then knows which ranks left no record at all (killed together with their
 * waiter), and where they ran. */
static void fs_rank_record_start(int rank)
{
    const char *size = getenv("OMPI_COMM_WORLD_SIZE");
    char host[256] = "?", text[320];

    if (gethostname(host, sizeof(host) - 1) != 0) {
        strcpy(host, "?");
    }
    snprintf(text, sizeof(text), "%d %s\n", (size != NULL) ? atoi(size) : 0, host);
    fs_record("started", rank, text);
}

/* When the first planned signal was sent (failstop-run --report): the record
 * fault.<N>, "signal <number> <time>", which a program that kills itself on
 * purpose writes the same way (failstop-validate's probe). */
static void fs_rank_record_fault(int rank, int sig)
{
    char text[64];

    snprintf(text, sizeof(text), "signal %d %.6f\n", sig, fs_time_wall());
    fs_record("fault", rank, text);
}

/* For tests: when the waiter saw the rank stop. */
static void fs_rank_record_stop(int rank, int sig)
{
    char text[64];

    snprintf(text, sizeof(text), "%d %.6f\n", sig, fs_time_wall());
    fs_record("stopped", rank, text);
}

/* Sleeps in sigtimedwait() on SIGCHLD (blocked, in *chld) until WAKE
 * (monotonic; FS_RANK_NEVER: until a SIGCHLD); returns when it started, and
 * how long it meant to sleep in *planned_p. */
static double fs_rank_sleep(const sigset_t *chld, double wake, double *planned_p)
{
    const double before = fs_time_now();
    struct timespec ts;
    double planned;

    if (wake >= FS_RANK_NEVER) {
        *planned_p = FS_RANK_NEVER;
        sigwaitinfo(chld, NULL);
        return before;
    }
    planned    = (wake > before) ? wake - before : 0;
    ts.tv_sec  = (time_t)planned;
    ts.tv_nsec = (long)((planned - (double)ts.tv_sec) * 1e9) + 1000;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    sigtimedwait(chld, NULL, &ts);
    *planned_p = planned;
    return before;
}

/* A stop or continue of the child (STATUS from waitpid): when it has been
 * stopped since (monotonic; < 0 while running), in *since_p. */
static void fs_rank_note_stop(int status, int rank, double *since_p, fs_rank_outcome_t *out)
{
    if (WIFSTOPPED(status)) {
        out->stop_sig = WSTOPSIG(status);
        if (*since_p < 0) {
            *since_p = fs_time_now();
            fs_rank_record_stop(rank, out->stop_sig);
        }
    } else if (WIFCONTINUED(status)) {
        *since_p = -1;
    }
}

/* Sends the planned signals from plan[next] on whose time (seconds after
 * the start) has come by ELAPSED; returns the next one not sent. */
static int fs_rank_send_planned(pid_t child, const fs_rank_kill_t *plan, int nplan,
                                int next, double elapsed, int rank, fs_rank_outcome_t *out)
{
    while ((next < nplan) && (elapsed >= plan[next].at)) {
        if (!out->killed) {
            fs_rank_record_fault(rank, plan[next].sig);
        }
        kill(child, plan[next].sig);
        out->killed = 1;
        next++;
    }
    return next;
}

/* The child has been stopped for STOPPED seconds, past the limit: fenced. */
static void fs_rank_fence(pid_t child, int rank, double stopped, fs_rank_outcome_t *out)
{
    out->fenced     = 1;
    out->stopped_ms = (long)(stopped * 1e3 + 0.5);
    fprintf(stderr, "failstop-rank: rank %d stopped (signal %d) for %ld ms:"
            " fencing it with SIGKILL\n", rank, out->stop_sig, out->stopped_ms);
    kill(child, SIGKILL);
}

/* Waits for the child to terminate: sends the planned signals when their
 * time comes, and fences the child when it stays stopped too long.  SIGCHLD
 * must be blocked (in *chld). */
static int fs_rank_wait(pid_t child, const fs_rank_kill_t *plan, int nplan,
                        long fence_ms, const sigset_t *chld, int rank,
                        fs_rank_pmix_t *pm, fs_rank_outcome_t *out)
{
    const double start = fs_time_now();
    const double limit = (double)fence_ms * 1e-3;
    double stopped_since = -1; /* monotonic; < 0 when running */
    int next = 0, status = 0;

    memset(out, 0, sizeof(*out));
    for (;;) {
        double now, wake, before, planned;
        pid_t r;

        r = waitpid(child, &status, WNOHANG | WUNTRACED | WCONTINUED);
        if (r == child) {
            if (WIFEXITED(status) || WIFSIGNALED(status)) {
                return status;
            }
            fs_rank_note_stop(status, rank, &stopped_since, out);
            continue; /* there may be more to collect */
        }
        if ((r < 0) && (errno != EINTR)) {
            perror("failstop-rank: waitpid");
            return status;
        }

        fs_rank_pmix_take(pm, child);
        now  = fs_time_now();
        next = fs_rank_send_planned(child, plan, nplan, next, now - start, rank, out);
        if ((stopped_since >= 0) && (fence_ms > 0) && !out->fenced &&
            (now - stopped_since >= limit)) {
            fs_rank_fence(child, rank, now - stopped_since, out);
        }

        /* Sleep until a state change of the child, the next planned signal,
         * or (while it is stopped) the next tick. */
        wake = FS_RANK_NEVER;
        if (next < nplan) {
            wake = start + plan[next].at;
        }
        if ((stopped_since >= 0) && (fence_ms > 0) && !out->fenced) {
            wake = fs_rank_min(wake, fs_rank_min(stopped_since + limit,
                                                 now + FS_RANK_TICK_MS * 1e-3));
        }
        if (fs_rank_pmix_wanted(pm)) {
            wake = fs_rank_min(wake, now + ((now - start < FS_RANK_PMIX_FAST_S)
                                            ? FS_RANK_PMIX_TICK_MS : FS_RANK_PMIX_SLOW_MS) * 1e-3);
        }
        before = fs_rank_sleep(chld, wake, &planned);
        /* Woken much later than planned: this waiter was stopped or starved
         * too, so what the child's stop lasted is unknown; count afresh. */
        if ((stopped_since >= 0) &&
            (fs_time_now() - before > planned + FS_RANK_STALL_MS * 1e-3)) {
            stopped_since = fs_time_now();
        }
    }
}

/* The signals that end a waiter holding its dead rank's PMIx connection
 * (rank_pmix.h): SIGUSR2, which failstop-run sends srun (srun passes it to
 * every task; only holding waiters are left when it does), and the step's
 * end (TERM, INT, HUP from Slurm: srun --wait, scancel). */
static void fs_rank_end_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGUSR2);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
}

/* A rank that did not end normally while its waiter holds its PMIx
 * connection: the waiter keeps it open until one of those signals, so that
 * the server never sees it lost.  They were blocked as soon as the rank
 * ended (fs_rank_hold_end): one that came while the records were written
 * is pending, not lost on the dead rank. */
static void fs_rank_pmix_linger(const fs_rank_pmix_t *pm, int status)
{
    sigset_t end;

    if ((pm->fd < 0) || (WIFEXITED(status) && (WEXITSTATUS(status) == 0))) {
        return;
    }
    fs_rank_end_signals(&end);
    /* another signal with a handler (SIGCONT, forwarded) interrupts the
     * wait: not an end */
    while ((sigwaitinfo(&end, NULL) < 0) && (errno == EINTR)) {
    }
}

/* The rank has ended: while its connection is held, the end signals stay
 * pending until fs_rank_pmix_linger takes them (the forwarding handler
 * would pass them to the dead rank). */
static void fs_rank_hold_end(const fs_rank_pmix_t *pm)
{
    sigset_t end;

    if (pm->fd >= 0) {
        fs_rank_end_signals(&end);
        sigprocmask(SIG_BLOCK, &end, NULL);
    }
}

/* Whether the record KIND.RANK exists in the status directory DIR. */
static int fs_rank_has_record(const char *dir, const char *kind, int rank)
{
    char path[4096];

    return fs_record_path(path, sizeof(path), dir, kind, rank) &&
           (access(path, F_OK) == 0);
}

/* Whether some other rank that started has neither left MPI_Init nor
 * ended. */
static int fs_rank_others_in_init(const char *dir, int rank, int size)
{
    int r;

    for (r = 0; r < size; r++) {
        if ((r != rank) && fs_rank_has_record(dir, "started", r) &&
            !fs_rank_has_record(dir, "ready", r) &&
            !fs_rank_has_record(dir, "rank", r)) {
            return 1;
        }
    }
    return 0;
}

/* After the rank's end is recorded: holds this waiter's exit while the
 * others may still be in MPI_Init's closing fence (see the top comment).
 * Only where the status directory is local: elsewhere the records of the
 * others are not visible. */
static void fs_rank_hold_init_death(int rank)
{
    const char *dir = getenv("FAILSTOP_STATUS_DIR");
    const char *size_env = getenv("OMPI_COMM_WORLD_SIZE");
    const struct timespec poll = {0, FS_RANK_INIT_POLL_MS * 1000000L};
    double until;
    int size;

    if ((dir == NULL) || (*dir == '\0') || (size_env == NULL) || (rank < 0) ||
        !fs_rank_has_record(dir, "up", rank) || fs_rank_has_record(dir, "ready", rank) ||
        fs_rank_has_record(dir, "finalized", rank)) {
        return;
    }
    size  = atoi(size_env);
    until = fs_time_now() + FS_RANK_INIT_HOLD_MS * 1e-3;
    while (fs_rank_others_in_init(dir, rank, size) && (fs_time_now() < until)) {
        nanosleep(&poll, NULL);
    }
}

/* The launcher told the program its command line through OMPI_COMMAND and
 * OMPI_ARGV (MPI_INFO_ENV's "command" and "argv"), and they name this
 * wrapper: programs that spawn copies of themselves from MPI_INFO_ENV
 * (ULFM's stress/spawn) would spawn the wrapper.  The child gets its own. */
static void fs_rank_set_command(char *const *cmd)
{
    size_t len = 1;
    char *args;
    int i;

    for (i = 1; cmd[i] != NULL; i++) {
        len += strlen(cmd[i]) + 1;
    }
    args = calloc(1, len);
    if (args == NULL) {
        return;                     /* the wrapper's stays: only the info key */
    }
    for (i = 1; cmd[i] != NULL; i++) {
        strcat(args, cmd[i]);
        if (cmd[i + 1] != NULL) {
            strcat(args, " ");
        }
    }
    setenv("OMPI_COMMAND", cmd[0], 1);
    setenv("OMPI_ARGV", args, 1);
    free(args);
}

int main(int argc, char **argv)
{
    const int rank = fs_rank_identity();
    fs_rank_kill_t plan[FS_RANK_MAX_KILLS];
    fs_rank_outcome_t out;
    fs_rank_pmix_t pmix;
    sigset_t chld, old;
    int nplan, status;
    long fence_ms;

    if (argc < 2) {
        fprintf(stderr, "usage: failstop-rank PROGRAM [ARGS...]\n");
        return 127;
    }
    fs_rank_select_failstop(argv[0]);
    fs_rank_pmix_init(&pmix);
    fs_rank_record_start(rank);
    nplan    = fs_rank_kill_plan(rank, plan, FS_RANK_MAX_KILLS);
    fence_ms = fs_rank_fence_ms();

    /* SIGCHLD stays pending until sigtimedwait() takes it; default action
     * (not SIG_IGN, which would reap the child for us). */
    signal(SIGCHLD, SIG_DFL);
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &old);

    fs_rank_child = fork();
    if (fs_rank_child < 0) {
        perror("failstop-rank: fork");
        return 127;
    }
    if (fs_rank_child == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        fs_rank_set_command(argv + 1);
        execvp(argv[1], argv + 1);
        fprintf(stderr, "failstop-rank: cannot run %s: %s\n", argv[1], strerror(errno));
        _exit(127);
    }
    signal(SIGTERM, fs_rank_forward);
    signal(SIGINT, fs_rank_forward);
    signal(SIGHUP, fs_rank_forward);
    signal(SIGUSR1, fs_rank_forward);
    signal(SIGUSR2, fs_rank_forward);
    signal(SIGCONT, fs_rank_forward);
    status = fs_rank_wait(fs_rank_child, plan, nplan, fence_ms, &chld, rank, &pmix, &out);
    fs_rank_hold_end(&pmix);
    fs_rank_record(rank, status, &out);
    fs_rank_hold_init_death(rank);
    fs_rank_pmix_linger(&pmix, status);
    if (WIFSIGNALED(status)) {
        return 128 + WTERMSIG(status);
    }
    return WEXITSTATUS(status);
}
