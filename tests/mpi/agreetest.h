/* agreetest.h: helpers for the agreement fault tests (tests/mpi/tf_agree_*.c). */
#ifndef AGREETEST_H
#define AGREETEST_H

#include "faulttest.h"

/* rank r's flag: every bit set but its own, so the AND shows who took part */
static inline int at_flag(int r)
{
    return ~(1 << (r % 31));
}

/* Survivors (live[0..n-1], in MPI_COMM_WORLD) compare an agreement's
 * outcome: the same flag and the same return class at every one of them
 * (uniform agreement), and every survivor's bit cleared (it took part). */
static inline void at_expect_uniform(mt_loc at, const int *live, int n, int rc, int flag)
{
    int me = mt_rank(), i, k = 0, mine[2], *in = mt_malloc(sizeof(int) * 2 * (size_t)n);
    MPI_Request *rq = mt_malloc(sizeof(*rq) * 2 * (size_t)n);

    mine[0] = mt_errclass(rc);
    mine[1] = flag;
    for (i = 0; i < n; i++) {
        mt_expect(at, !(flag & (1 << (live[i] % 31))), "agreed %#x without survivor %d",
                  flag, live[i]);
        if (live[i] == me)
            continue;
        MT_CHECK(MPI_Irecv(&in[2 * i], 2, MPI_INT, live[i], 77, MPI_COMM_WORLD, &rq[k++]));
        MT_CHECK(MPI_Isend(mine, 2, MPI_INT, live[i], 77, MPI_COMM_WORLD, &rq[k++]));
    }
    MT_CHECK(MPI_Waitall(k, rq, MPI_STATUSES_IGNORE));
    for (i = 0; i < n; i++) {
        if (live[i] == me)
            continue;
        mt_expect(at, (in[2 * i] == mine[0]) && (in[2 * i + 1] == mine[1]),
                  "not uniform: here class %d flag %#x, at %d class %d flag %#x",
                  mine[0], mine[1], live[i], in[2 * i], in[2 * i + 1]);
    }
    free(rq);
    free(in);
}

/* MPIX_Comm_agree under a watchdog: an agreement that never ends fails. */
static inline int at_agree(mt_loc at, MPI_Comm comm, int *flag)
{
    int rc;

    ft_watchdog_arm(at, "MPIX_Comm_agree");
    rc = MPIX_Comm_agree(comm, flag);
    ft_watchdog_disarm();
    mt_expect(at, rc == MPI_SUCCESS || rc == MPIX_ERR_PROC_FAILED,
              "MPIX_Comm_agree returned %d, neither success nor the failure class %d "
              "(the code must equal the class)", rc, MPIX_ERR_PROC_FAILED);
    return rc;
}

#endif
