/* failstop demo: four ranks talk, then rank 3 is killed (failstop-run --kill)
 * while rank 0 is blocked receiving from it.  Stock Open MPI hangs there;
 * over failstop the receive returns MPI_ERR_RANK_FAIL_STOP in milliseconds
 * and the survivors carry on. */
#include "failstop.h"

#include <mpi.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double demo_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int demo_ring(int rank, int size)
{
    int token = rank, got = -1, sum = 0;

    MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 1, &got, 1, MPI_INT,
                 (rank + size - 1) % size, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return (got == (rank + size - 1) % size) && (sum == size * (size - 1) / 2);
}

static void demo_wait_for_failure(void)
{
    char text[MPI_MAX_ERROR_STRING];
    int value, rc, cls, len;
    double t0 = demo_now();

    printf("rank 0: waiting in MPI_Recv for a message from rank 3 ...\n");
    fflush(stdout);
    rc = MPI_Recv(&value, 1, MPI_INT, 3, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, text, &len);
    printf("rank 0: MPI_Recv returned after %.0f ms: %s\n",
           (demo_now() - t0) * 1e3, rc == MPI_SUCCESS ? "MPI_SUCCESS" : text);
    printf("rank 0: error class is %sMPIX_ERR_RANK_FAIL_STOP\n",
           (rc != MPI_SUCCESS && cls == MPIX_ERR_RANK_FAIL_STOP) ? "" : "NOT ");
}

int main(int argc, char **argv)
{
    int rank, size, active = 0, ok, x = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPIX_Failstop_active(&active);
    if (size != 4) {
        if (rank == 0) {
            fprintf(stderr, "the demo wants 4 ranks\n");
        }
        MPI_Finalize();
        return 1;
    }
    ok = demo_ring(rank, size);
    if (rank == 0) {
        printf("rank 0: 4 ranks exchanged messages over %s: %s\n",
               active ? "failstop" : "another PML", ok ? "ok" : "WRONG");
        fflush(stdout);
    }
    if (rank == 3) {
        pause();                 /* killed by failstop-run --kill 3@... */
    } else if (rank == 0) {
        demo_wait_for_failure();
    }
    if (rank == 1) {
        MPI_Send(&x, 1, MPI_INT, 2, 9, MPI_COMM_WORLD);
        MPI_Recv(&x, 1, MPI_INT, 2, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank 1: survivors 1 and 2 still exchange messages: ok\n");
    } else if (rank == 2) {
        MPI_Recv(&x, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&x, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
