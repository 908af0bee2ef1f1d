/* Latency of MPIX_Comm_agree, and of MPI_Allreduce (one int, MPI_BAND: the
 * same result without fault tolerance) on the same communicator, for
 * reference.
 *
 *   fs_agreelat [ITERS [ROUNDS [DEAD]]]
 *
 * Each round times ITERS back-to-back calls (after a barrier) and reports
 * the mean per call; rank 0 prints the median over ROUNDS rounds and the
 * smallest round, in microseconds, one line per operation:
 *   agree <np> <median_us> <min_us>
 *   allreduce <np> <median_us> <min_us>
 * DEAD = 1: the last rank exits right after MPI_Init (killed, as a crash),
 * the others wait until they know it failed, acknowledge it
 * (MPIX_Comm_failure_ack) and time agreements among the survivors (no
 * allreduce: the communicator's collectives are off).  MPIX_ names are
 * looked up at run time (bench/fs_bench_sym.h). */
#include "fs_bench_sym.h"

#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef int (*agree_fn_t)(MPI_Comm, int *);
typedef int (*ack_fn_t)(MPI_Comm);
typedef int (*failed_fn_t)(MPI_Comm, MPI_Group *);

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static void report(const char *what, int np, double *t, int rounds)
{
    qsort(t, (size_t)rounds, sizeof(*t), cmp_double);
    printf("%s %d %.2f %.2f\n", what, np, t[rounds / 2] * 1e6, t[0] * 1e6);
    fflush(stdout);
}

/* Survivors wait until the failed group holds one process. */
static void wait_failed(failed_fn_t failed_of)
{
    MPI_Group g;
    int n = 0, flag;

    while (n == 0) {
        failed_of(MPI_COMM_WORLD, &g);
        MPI_Group_size(g, &n);
        MPI_Group_free(&g);
        MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
    }
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 200, rounds = argc > 2 ? atoi(argv[2]) : 21;
    int dead = argc > 3 ? atoi(argv[3]) : 0, me, np, r, i, flag, out;
    agree_fn_t agree;
    double *ta, *tr, t0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    agree = (agree_fn_t)fs_bench_sym("MPIX_Comm_agree");
    if ((agree == NULL) || (iters < 1) || (rounds < 1)) {
        if (me == 0)
            fprintf(stderr, "fs_agreelat: needs failstop (MPIX_Comm_agree) and "
                    "ITERS, ROUNDS >= 1\n");
        MPI_Finalize();
        return 1;
    }
    if (dead && (me == np - 1)) {
        raise(SIGKILL);
    }
    if (dead) {
        wait_failed((failed_fn_t)fs_bench_sym("MPIX_Comm_group_failed"));
        ((ack_fn_t)fs_bench_sym("MPIX_Comm_failure_ack"))(MPI_COMM_WORLD);
    }
    ta = calloc((size_t)rounds, sizeof(*ta));
    tr = calloc((size_t)rounds, sizeof(*tr));
    for (r = 0; r < rounds; r++) {
        flag = 1;
        agree(MPI_COMM_WORLD, &flag);        /* aligns the members */
        t0 = MPI_Wtime();
        for (i = 0; i < iters; i++) {
            flag = ~0;
            agree(MPI_COMM_WORLD, &flag);
        }
        ta[r] = (MPI_Wtime() - t0) / iters;
        if (dead)
            continue;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (i = 0; i < iters; i++) {
            flag = ~0;
            MPI_Allreduce(&flag, &out, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD);
        }
        tr[r] = (MPI_Wtime() - t0) / iters;
    }
    if (me == 0) {
        report(dead ? "agree_after_failure" : "agree", dead ? np - 1 : np, ta, rounds);
        if (!dead)
            report("allreduce", np, tr, rounds);
    }
    free(ta);
    free(tr);
    MPI_Finalize();
    return 0;
}
