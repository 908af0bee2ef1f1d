/* fs_soak: no false suspicion under load.  Every rank runs, for -t SECONDS,
 * rounds of: a ring exchange of 4 MiB messages, a 1 MiB MPI_Allreduce, and
 * a compute phase without any MPI call (0.2 to 3 s, different on every
 * rank, so some wait in MPI while others compute).  With MPI_ERRORS_RETURN
 * any error is counted.  At the end each rank reports its failstop counters
 * and rank 0 prints one line:
 *   SOAK np=N seconds=S rounds=R errors=E peers_failed=F suspicions=U
 *        max_beat_gap_ms=G max_self_late_ms=L
 * (sums for errors/failed/suspicions, maxima for the times).  failstop's
 * MPIX functions are looked up at run time (as in fs_killtime). */
#define _GNU_SOURCE
#include <mpi.h>

#include "fs_bench_sym.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BIG (4 << 20)
#define RED (1 << 18)      /* 1 MiB of ints */

static int (*soak_counter)(const char *, unsigned long long *);

static double soak_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double soak_get(const char *name)
{
    unsigned long long v = 0;

    if (soak_counter == NULL) {
        soak_counter = (int (*)(const char *, unsigned long long *))
                       fs_bench_sym("MPIX_Failstop_counter");
    }
    if ((soak_counter == NULL) || (soak_counter(name, &v) != MPI_SUCCESS)) {
        return -1;
    }
    return (double)v;
}

static void soak_compute(double secs)
{
    volatile double x = 1.0;
    double t0 = soak_now();

    while (soak_now() - t0 < secs) {
        x = x * 1.0000001 + 1e-9;
    }
}

int main(int argc, char **argv)
{
    int me, np, c, rounds = 0, errors = 0;
    double secs = 600, t0, mine[5], tot[5], mx[2];
    char *sbuf, *rbuf;
    int *rin, *rout;

    while ((c = getopt(argc, argv, "t:")) != -1) {
        if (c == 't') {
            secs = atof(optarg);
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    sbuf = malloc(BIG);
    rbuf = malloc(BIG);
    rin  = malloc(RED * sizeof(int));
    rout = malloc(RED * sizeof(int));
    memset(sbuf, me, BIG);
    memset(rin, 0, RED * sizeof(int));
    srand((unsigned)(me * 7919 + 1));
    t0 = soak_now();
    for (;;) {
        int stop = (soak_now() - t0 > secs), all_stop = 0, i;
        if (MPI_Allreduce(&stop, &all_stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) {
            ++errors;
            break;
        }
        if (all_stop) {
            break;
        }
        for (i = 0; i < 4; ++i) {
            errors += MPI_Sendrecv(sbuf, BIG, MPI_CHAR, (me + 1) % np, 1, rbuf, BIG,
                                   MPI_CHAR, (me + np - 1) % np, 1, MPI_COMM_WORLD,
                                   MPI_STATUS_IGNORE) != MPI_SUCCESS;
        }
        errors += MPI_Allreduce(rin, rout, RED, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS;
        soak_compute(0.2 + (rand() % 2800) * 1e-3);
        ++rounds;
    }
    mine[0] = errors;
    mine[1] = soak_get("peers_failed");
    mine[2] = soak_get("hb_suspicions");
    mine[3] = soak_get("hb_max_beat_gap_us") * 1e-3;
    mine[4] = soak_get("hb_max_self_late_us") * 1e-3;
    MPI_Reduce(mine, tot, 3, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(mine + 3, mx, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (me == 0) {
        printf("SOAK np=%d seconds=%.0f rounds=%d errors=%.0f peers_failed=%.0f "
               "suspicions=%.0f max_beat_gap_ms=%.1f max_self_late_ms=%.1f\n",
               np, soak_now() - t0, rounds, tot[0], tot[1], tot[2], mx[0], mx[1]);
    }
    free(sbuf);
    free(rbuf);
    free(rin);
    free(rout);
    MPI_Finalize();
    return 0;
}
