/* Latency of Open MPI 5's own ULFM calls (mpi-ext.h, libmpi only), the
 * same program over failstop and over Open MPI's own ULFM (ob1):
 *   agree      MPIX_Comm_agree on MPI_COMM_WORLD
 *   shrink     MPIX_Comm_shrink of MPI_COMM_WORLD (the new one freed)
 *   revoke     rank 0 revokes a fresh duplicate of MPI_COMM_WORLD; each
 *              rank times until a receive posted on it fails (rank 0: until
 *              its revoke returns); the latest of them (one host: one
 *              CLOCK_MONOTONIC; Open MPI 5's MPI_Wtime counts from each
 *              process's own start)
 *   allreduce  MPI_Allreduce of one int (MPI_BAND), the agreement's result
 *              without fault tolerance, for reference
 *
 *   u5_lat [ITERS [ROUNDS]]
 *
 * Each round times ITERS calls after a barrier (shrink ITERS/10, revoke
 * ITERS/10, at least 1) and takes the mean per call; rank 0 prints the
 * median over ROUNDS rounds and the smallest, in microseconds:
 *   <op> <np> <median_us> <min_us>
 * bench/ompi5.sh runs it. */
#include <mpi.h>
#include <mpi-ext.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "u5_lat: %s returned %d\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static double time_agree(int n)
{
    double t0 = MPI_Wtime();
    int i, flag;

    for (i = 0; i < n; ++i) {
        flag = 1;
        check(MPIX_Comm_agree(MPI_COMM_WORLD, &flag), "MPIX_Comm_agree");
    }
    return (MPI_Wtime() - t0) / n;
}

static double time_allreduce(int n)
{
    double t0 = MPI_Wtime();
    int i, in = 1, out = 0;

    for (i = 0; i < n; ++i) {
        check(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD), "MPI_Allreduce");
    }
    return (MPI_Wtime() - t0) / n;
}

static double time_shrink(int n)
{
    double t0 = MPI_Wtime();
    MPI_Comm c;
    int i;

    for (i = 0; i < n; ++i) {
        check(MPIX_Comm_shrink(MPI_COMM_WORLD, &c), "MPIX_Comm_shrink");
        check(MPI_Comm_free(&c), "MPI_Comm_free");
    }
    return (MPI_Wtime() - t0) / n;
}

/* until every rank knows: the latest rank's time after rank 0 started */
static double time_revoke_once(int rank)
{
    MPI_Comm d;
    MPI_Request req;
    double t0 = 0, t_end, latest = 0;
    int x, done = 0, rc = MPI_SUCCESS;

    check(MPI_Comm_dup(MPI_COMM_WORLD, &d), "MPI_Comm_dup");
    check(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    if (rank == 0) {
        t0 = now();
        check(MPIX_Comm_revoke(d), "MPIX_Comm_revoke");
    } else {
        rc = MPI_Irecv(&x, 1, MPI_INT, 0, 0, d, &req);
        while ((rc == MPI_SUCCESS) && !done) {
            rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        }
        if (rc == MPI_SUCCESS) {
            fprintf(stderr, "u5_lat: a receive on the revoked communicator completed\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    t_end = now();
    check(MPI_Allreduce(&t_end, &latest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    check(MPI_Bcast(&t0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD), "MPI_Bcast");
    check(MPI_Comm_free(&d), "MPI_Comm_free");
    return latest - t0;
}

static double time_revoke(int n, int rank)
{
    double sum = 0;
    int i;

    for (i = 0; i < n; ++i) {
        sum += time_revoke_once(rank);
    }
    return sum / n;
}

static void report(const char *op, int np, double *t, int rounds)
{
    qsort(t, (size_t)rounds, sizeof(*t), cmp_double);
    printf("%s %d %.2f %.2f\n", op, np, t[rounds / 2] * 1e6, t[0] * 1e6);
}

int main(int argc, char **argv)
{
    int iters = (argc > 1) ? atoi(argv[1]) : 200, rounds = (argc > 2) ? atoi(argv[2]) : 11;
    int rank, np, r, op, few;
    const char *names[] = {"agree", "allreduce", "shrink", "revoke"};
    double *t;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    few = (iters / 10 > 0) ? iters / 10 : 1;
    t = calloc((size_t)(rounds > 0 ? rounds : 1), sizeof(*t));
    if ((t == NULL) || (iters < 1) || (rounds < 1)) {
        fprintf(stderr, "usage: u5_lat [ITERS [ROUNDS]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (op = 0; op < 4; ++op) {
        for (r = 0; r < rounds; ++r) {
            check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
            switch (op) {
            case 0:  t[r] = time_agree(iters); break;
            case 1:  t[r] = time_allreduce(iters); break;
            case 2:  t[r] = time_shrink(few); break;
            default: t[r] = time_revoke(few, rank); break;
            }
        }
        if (rank == 0) {
            report(names[op], np, t, rounds);
        }
    }
    free(t);
    MPI_Finalize();
    return 0;
}
