/* Latency of MPIX_Comm_agree, MPIX_Comm_validate and MPIX_Comm_shrink (a
 * new communicator each time, freed), and of MPI_Allreduce (one int,
 * MPI_BAND: the agreement's result without fault tolerance) on the same
 * communicator, for reference.
 *
 *   fs_agreelat [ITERS [ROUNDS [DEAD]]]
 *
 * Each round times ITERS back-to-back calls (after a barrier) and reports
 * the mean per call; rank 0 prints the median over ROUNDS rounds and the
 * smallest round, in microseconds, one line per operation:
 *   agree|validate|shrink|allreduce <np> <median_us> <min_us>
 * (validate and shrink time ITERS/10 calls, at least 1).
 * DEAD = 1: the last rank exits right after MPI_Init (killed, as a crash),
 * the others wait until they know it failed, acknowledge it
 * (MPIX_Comm_failure_ack) and time the same among the survivors, with
 * "_after_failure" appended; each validate recognizes the failure again and
 * rebuilds the survivors' shadow communicator, and the allreduce runs over
 * the survivors of the validated MPI_COMM_WORLD ("allreduce_survivors").  MPIX_ names are
 * looked up at run time (bench/fs_bench_sym.h). */
#include "fs_bench_sym.h"

#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef int (*agree_fn_t)(MPI_Comm, int *);
typedef int (*validate_fn_t)(MPI_Comm, MPI_Group *);
typedef int (*shrink_fn_t)(MPI_Comm, MPI_Comm *);
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

/* Times of each round's calls of one operation (op 0 agree, 1 validate,
 * 2 shrink, 3 allreduce), per call. */
static double time_op(int op, int iters)
{
    static agree_fn_t agree;
    static validate_fn_t validate;
    static shrink_fn_t shrink;
    MPI_Group g;
    MPI_Comm c;
    int i, flag, out;
    double t0;

    if (agree == NULL) {
        agree    = (agree_fn_t)fs_bench_sym("MPIX_Comm_agree");
        validate = (validate_fn_t)fs_bench_sym("MPIX_Comm_validate");
        shrink   = (shrink_fn_t)fs_bench_sym("MPIX_Comm_shrink");
    }
    flag = 1;
    agree(MPI_COMM_WORLD, &flag);        /* aligns the members */
    t0 = MPI_Wtime();
    for (i = 0; i < iters; i++) {
        flag = ~0;
        if (op == 0) {
            agree(MPI_COMM_WORLD, &flag);
        } else if (op == 1) {
            validate(MPI_COMM_WORLD, &g);
            MPI_Group_free(&g);
        } else if (op == 2) {
            shrink(MPI_COMM_WORLD, &c);
            MPI_Comm_free(&c);
        } else {
            MPI_Allreduce(&flag, &out, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) / iters;
}

int main(int argc, char **argv)
{
    static const char *names[2][4] = {
        { "agree", "validate", "shrink", "allreduce" },
        { "agree_after_failure", "validate_after_failure", "shrink_after_failure",
          "allreduce_survivors" } };
    int iters = argc > 1 ? atoi(argv[1]) : 200, rounds = argc > 2 ? atoi(argv[2]) : 21;
    int dead = argc > 3 ? atoi(argv[3]) : 0, me, np, r, op, few;
    double *t[4];
    MPI_Group g;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if ((fs_bench_sym("MPIX_Comm_validate") == NULL) || (iters < 1) || (rounds < 1)) {
        if (me == 0)
            fprintf(stderr, "fs_agreelat: needs failstop (MPIX_Comm_validate) and "
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
        ((validate_fn_t)fs_bench_sym("MPIX_Comm_validate"))(MPI_COMM_WORLD, &g);
        MPI_Group_free(&g);             /* collectives over the survivors */
    }
    few = iters / 10 > 0 ? iters / 10 : 1;
    for (op = 0; op < 4; op++)
        t[op] = calloc((size_t)rounds, sizeof(double));
    for (r = 0; r < rounds; r++)
        for (op = 0; op < 4; op++)
            t[op][r] = time_op(op, (op == 1 || op == 2) ? few : iters);
    for (op = 0; op < 4; op++) {
        if (me == 0)
            report(names[dead ? 1 : 0][op], dead ? np - 1 : np, t[op], rounds);
        free(t[op]);
    }
    MPI_Finalize();
    return 0;
}
