/* failstop-rank: runs one MPI rank under failstop-run.
 *
 * With --enable-recovery mpirun's exit code means nothing, so failstop-run
 * starts every rank through this waiter, which records how the rank ended in
 * $FAILSTOP_STATUS_DIR/rank.<N>: "exit <code>" or "signal <number>", plus
 * the time.  It forwards termination signals to the rank, and the rank dies
 * with it (PR_SET_PDEATHSIG) if the waiter itself is killed.
 *
 * $FAILSTOP_KILL ("RANK@SECONDS[:SIGNAL],...", from failstop-run --kill)
 * makes the waiter of RANK send SIGNAL (default SIGKILL) to its rank after
 * SECONDS: the process killed is the MPI process itself, as a crash would. */
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

static volatile pid_t fs_rank_child = -1;

static void fs_rank_forward(int sig)
{
    if (fs_rank_child > 0) {
        kill(fs_rank_child, sig);
    }
}

static double fs_rank_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Finds this rank's entry in FAILSTOP_KILL; returns 1 and fills delay/signal. */
static int fs_rank_kill_plan(int rank, double *delay_p, int *sig_p)
{
    const char *plan = getenv("FAILSTOP_KILL");
    char *copy, *item, *save = NULL;
    int found = 0;

    if ((plan == NULL) || (*plan == '\0') || ((copy = strdup(plan)) == NULL)) {
        return 0;
    }
    for (item = strtok_r(copy, ",", &save); item != NULL && !found;
         item = strtok_r(NULL, ",", &save)) {
        int r, sig = SIGKILL;
        double delay;
        if ((sscanf(item, "%d@%lf:%d", &r, &delay, &sig) >= 2) && (r == rank)) {
            *delay_p = delay;
            *sig_p   = sig;
            found    = 1;
        }
    }
    free(copy);
    return found;
}

static void fs_rank_record(const char *dir, int rank, int status, int killed)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/rank.%d", dir, rank);
    f = fopen(path, "w");
    if (f == NULL) {
        return;
    }
    if (WIFSIGNALED(status)) {
        fprintf(f, "signal %d %.6f%s\n", WTERMSIG(status), fs_rank_now(),
                killed ? " injected" : "");
    } else {
        fprintf(f, "exit %d %.6f%s\n", WEXITSTATUS(status), fs_rank_now(),
                killed ? " injected" : "");
    }
    fclose(f);
}

/* Waits for the child, delivering the planned kill when its time comes. */
static int fs_rank_wait(pid_t child, int has_kill, double delay, int sig, int *killed_p)
{
    double deadline = fs_rank_now() + delay;
    int status = 0;
    pid_t r;

    *killed_p = 0;
    for (;;) {
        r = waitpid(child, &status, has_kill && !*killed_p ? WNOHANG : 0);
        if (r == child) {
            return status;
        }
        if ((r < 0) && (errno != EINTR)) {
            return status;
        }
        if (has_kill && !*killed_p && (fs_rank_now() >= deadline)) {
            kill(child, sig);
            *killed_p = 1;
        } else if (has_kill && !*killed_p) {
            double left = deadline - fs_rank_now();
            usleep((useconds_t)((left < 0.02 ? left : 0.02) * 1e6) + 1);
        }
    }
}

int main(int argc, char **argv)
{
    const char *dir = getenv("FAILSTOP_STATUS_DIR");
    const char *rank_env = getenv("OMPI_COMM_WORLD_RANK");
    int rank = (rank_env != NULL) ? atoi(rank_env) : -1;
    int has_kill, killed, sig = SIGKILL, status;
    double delay = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: failstop-rank PROGRAM [ARGS...]\n");
        return 127;
    }
    has_kill = fs_rank_kill_plan(rank, &delay, &sig);
    fs_rank_child = fork();
    if (fs_rank_child < 0) {
        perror("failstop-rank: fork");
        return 127;
    }
    if (fs_rank_child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
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
    status = fs_rank_wait(fs_rank_child, has_kill, delay, sig, &killed);
    if ((dir != NULL) && (rank >= 0)) {
        fs_rank_record(dir, rank, status, killed);
    }
    if (WIFSIGNALED(status)) {
        return 128 + WTERMSIG(status);
    }
    return WEXITSTATUS(status);
}
