/* Agreement with a death during it, against Open MPI 5's own API
 * (mpi-ext.h, libmpi only): the processes run MPIX_Comm_agree round after
 * round, rank 0 clearing bit (round % 30) of its flag, so the AND names
 * the round; the last rank dies (SIGKILL) between two of them.  Checked in
 * every round: the flag is the AND of the survivors' (rank 0's); the
 * return is success, or MPIX_ERR_PROC_FAILED while the failure is not
 * acknowledged by everyone -- then it is acknowledged
 * (MPIX_Comm_failure_ack) and the agreement goes on; and at the end every
 * survivor saw the same rounds fail (compared through one more agreement).
 * Runs over failstop and over Open MPI's own ULFM alike
 * (tests/ompi5/ulfm.sh). */
#include "mpitest.h"

#include <mpi-ext.h>
#include <signal.h>

#define ROUNDS 60
#define DEATH  20

int main(int argc, char **argv)
{
    int round, flag, rc, failed_rounds = 0, first_failed = -1, mask;

    mt_init(&argc, &argv, "u5_agree_die");
    mt_expect(MT_HERE, mt_size() >= 3, "needs 3 ranks or more");
    for (round = 0; round < ROUNDS; ++round) {
        if ((round == DEATH) && (mt_rank() == mt_size() - 1)) {
            raise(SIGKILL);
        }
        flag = (mt_rank() == 0) ? (int)(0x3fffffffu & ~(1u << (round % 30))) : 0x3fffffff;
        rc   = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
        mt_expect(MT_HERE, (rc == MPI_SUCCESS) || (mt_errclass(rc) == MPIX_ERR_PROC_FAILED),
                  "round %d: agree returned %d (class %d)", round, rc, mt_errclass(rc));
        mt_expect(MT_HERE, flag == (int)(0x3fffffffu & ~(1u << (round % 30))),
                  "round %d: flag %#x, expected %#x", round, flag,
                  0x3fffffffu & ~(1u << (round % 30)));
        if (rc != MPI_SUCCESS) {
            mt_expect(MT_HERE, round >= DEATH, "round %d failed before the death", round);
            ++failed_rounds;
            first_failed = (first_failed < 0) ? round : first_failed;
            MT_CHECK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
        }
    }
    mt_expect(MT_HERE, failed_rounds >= 1, "no round reported the failure");
    /* the same rounds failed everywhere (the return is uniform) */
    mask = first_failed * 64 + failed_rounds;
    flag = mask;
    MT_CHECK(MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    mt_expect(MT_HERE, flag == mask, "rounds failed here (first %d, %d of them) differ "
              "from another survivor's", first_failed, failed_rounds);
    return mt_finalize_ok();
}
