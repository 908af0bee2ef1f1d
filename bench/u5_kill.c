/* Kill to error under Open MPI 5's own ULFM API (mpi-ext.h, libmpi only),
 * the same program over failstop and over Open MPI's own ULFM (ob1): the
 * last rank notes the time (CLOCK_MONOTONIC, one host) in DIR/kill.t and
 * kills itself (SIGKILL); every other rank waits in a receive from it and
 * notes when that fails.  The survivors shrink MPI_COMM_WORLD and rank 0
 * prints, in milliseconds from the kill:
 *   kill <np> <first_error_ms> <all_know_ms>
 *
 *   u5_kill DIR
 *
 * bench/ompi5.sh runs it. */
#include <mpi.h>
#include <mpi-ext.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    char path[4096];
    double t_err, t_kill = 0, v[2], r[2];
    int rank, np, x, rc;
    MPI_Comm alive;
    FILE *f;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    snprintf(path, sizeof(path), "%s/kill.t", (argc > 1) ? argv[1] : "/tmp");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == np - 1) {
        f = fopen(path, "w");
        if (f != NULL) {
            fprintf(f, "%.9f\n", now());
            fclose(f);
        }
        raise(SIGKILL);
    }
    rc    = MPI_Recv(&x, 1, MPI_INT, np - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    t_err = now();
    if (rc == MPI_SUCCESS) {
        fprintf(stderr, "u5_kill: a receive from the dead rank succeeded\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    f = fopen(path, "r");
    if ((f == NULL) || (fscanf(f, "%lf", &t_kill) != 1)) {
        fprintf(stderr, "u5_kill: no kill time in %s\n", path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fclose(f);
    if (MPIX_Comm_shrink(MPI_COMM_WORLD, &alive) != MPI_SUCCESS) {
        fprintf(stderr, "u5_kill: MPIX_Comm_shrink failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    v[0] = -(t_err - t_kill);       /* MAX of the negated: the first */
    v[1] = t_err - t_kill;
    MPI_Allreduce(v, r, 2, MPI_DOUBLE, MPI_MAX, alive);
    if (rank == 0) {
        printf("kill %d %.3f %.3f\n", np, -r[0] * 1e3, r[1] * 1e3);
    }
    MPI_Comm_free(&alive);
    MPI_Finalize();
    return 0;
}
