/* ULFM's revoke/shrink loop, against Open MPI 5's own API (mpi-ext.h,
 * libmpi only): the processes sum with MPI_Allreduce round after round; in
 * two of the rounds the highest-ranked process of the communicator dies
 * (SIGKILL) mid-loop.  A survivor whose allreduce fails revokes the
 * communicator (the others' then fail too) and all shrink it and go on.
 * Checked: every error is MPIX_ERR_PROC_FAILED or MPIX_ERR_REVOKED, each
 * shrink removes exactly the dead process, every sum over a communicator
 * that did not fail is right, and the survivors end together.  Runs over
 * failstop and over Open MPI's own ULFM alike (tests/ompi5/ulfm.sh); at 4
 * ranks the last two die. */
#include "mpitest.h"

#include <mpi-ext.h>
#include <signal.h>

#define ROUNDS 40
#define DEATHS 2

static int sum_below(int n)
{
    return n * (n - 1) / 2;
}

/* One allreduce of the world ranks; 1 if it failed (and comm is revoked). */
static int step(MPI_Comm comm, int alive)
{
    int me = mt_rank(), sum = -1, rc, cls;

    rc = MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, comm);
    if (rc == MPI_SUCCESS) {
        mt_expect(MT_HERE, sum == sum_below(alive), "sum %d over %d processes, expected %d",
                  sum, alive, sum_below(alive));
        return 0;
    }
    cls = mt_errclass(rc);
    mt_expect(MT_HERE, (cls == MPIX_ERR_PROC_FAILED) || (cls == MPIX_ERR_REVOKED),
              "allreduce: error class %d, expected PROC_FAILED or REVOKED", cls);
    MT_CHECK(MPIX_Comm_revoke(comm));
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Comm comm, shrunk;
    int alive, round, deaths = 0, n = 0;

    mt_init(&argc, &argv, "u5_shrink_loop");
    mt_expect(MT_HERE, mt_size() > DEATHS, "needs more than %d ranks", DEATHS);
    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    alive = mt_size();
    for (round = 0; round < ROUNDS; ++round) {
        /* rounds 10 and 20: the highest-ranked one dies (world rank alive-1) */
        if ((deaths < DEATHS) && (round == 10 * (deaths + 1)) && (mt_rank() == alive - 1)) {
            raise(SIGKILL);
        }
        if (!step(comm, alive)) {
            continue;
        }
        MT_CHECK(MPIX_Comm_shrink(comm, &shrunk));
        MT_CHECK(MPI_Comm_size(shrunk, &n));
        mt_expect(MT_HERE, n == alive - 1, "round %d: shrink gave %d processes, expected %d",
                  round, n, alive - 1);
        MT_CHECK(MPI_Comm_free(&comm));
        comm = shrunk;
        alive = n;
        ++deaths;
    }
    mt_expect(MT_HERE, deaths == DEATHS, "%d deaths seen, expected %d", deaths, DEATHS);
    MT_CHECK(MPI_Barrier(comm));
    MT_CHECK(MPI_Comm_free(&comm));
    return mt_finalize_ok();
}
