/* x_exit.c MODE: how the ranks of a job end, for tests/mpi/exit_status.sh,
 * which checks failstop-run's exit status for each (README: "Exit status").
 *   ok         every rank finalizes and returns 0
 *   rankcode   every rank returns its rank after MPI_Finalize
 *   nofin      rank 1 exits 0 without MPI_Finalize, after the others left
 *   exit3      rank 1 exits 3 without MPI_Finalize, after the others left
 *   segv       rank 1 dies of SIGSEGV, after the others left
 *   lost       rank 1 SIGKILLs its waiter (failstop-rank, its parent), after
 *              the others left: no record of how it ended, as when the
 *              launcher kills waiter and rank together
 *   victim     rank 1 waits to be killed (failstop-run --kill 1@...); the
 *              others get the failure from a receive and finish normally
 *   victim2    as victim, but rank 0 then returns 2
 *   spin       every rank computes until the launcher's time limit
 *   abort      rank 1 calls MPI_Abort(MPI_COMM_WORLD, 7)
 * "After the others left" is 1.5 s after a barrier the others leave at once:
 * nobody is left to declare rank 1 failed. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void nap(double secs)
{
    struct timespec ts = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int main(int argc, char **argv)
{
    const char *mode = (argc > 1) ? argv[1] : "ok";
    int rank, rc, x = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    if (!strcmp(mode, "rankcode")) {
        MPI_Finalize();
        return rank;
    }
    if (!strcmp(mode, "nofin") || !strcmp(mode, "exit3") || !strcmp(mode, "segv") ||
        !strcmp(mode, "lost")) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            nap(1.5);
            if (!strcmp(mode, "segv"))
                raise(SIGSEGV);
            if (!strcmp(mode, "lost")) {
                kill(getppid(), SIGKILL);
                nap(60);      /* PR_SET_PDEATHSIG ends it */
            }
            _exit(!strcmp(mode, "exit3") ? 3 : 0);
        }
    } else if (!strcmp(mode, "victim") || !strcmp(mode, "victim2")) {
        if (rank == 1) {
            nap(60);          /* killed long before */
            return 9;
        }
        rc = MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS) {
            fprintf(stderr, "x_exit: rank %d: a receive from the killed rank succeeded\n", rank);
            return 5;
        }
        MPI_Finalize();
        return (rank == 0 && !strcmp(mode, "victim2")) ? 2 : 0;
    } else if (!strcmp(mode, "spin")) {
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < 120)
            ;
    } else if (!strcmp(mode, "abort")) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1)
            MPI_Abort(MPI_COMM_WORLD, 7);
        nap(60);
    }
    MPI_Finalize();
    return 0;
}
