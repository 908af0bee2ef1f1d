/* tf_fail_fatal: with the default error handler MPI_ERRORS_ARE_FATAL, the
 * failure of a peer makes the job abort promptly, with a message naming
 * the failed rank, instead of hanging (issue: kill injection; MPI-FT 17.5:
 * errors are raised through the error handler of the call).
 *
 * Rank 1 dies once every other rank is past the last collective; the
 * survivors then block in MPI_Recv from it, never setting an error
 * handler.  The job must end non-zero and print failstop's line naming
 * process 1.  If a call returns (the handler was not fatal) or nothing
 * happens within the deadline (a watchdog alarm), the survivor exits 0,
 * which makes the run fail ("want an aborted job").
 * FS_TEST_NPS: 3
 * FS_TEST_FAULT: 1
 * FS_TEST_EXPECT: abort
 * FS_TEST_EXPECT_OUTPUT: process 1 \(rank in MPI_COMM_WORLD\) failed
 */
#include "faulttest.h"

/* Ends this survivor with status 0 and a reason: the job then does not
 * look aborted, and the test fails. */
static void not_aborted(const char *why)
{
    fprintf(stderr, "MPITEST FAIL tf_fail_fatal rank %d/%d: %s\n", mt_rank(),
            mt_size(), why);
    fflush(stderr);
    _exit(0);
}

static void wd_fire(int sig)
{
    static const char msg[] = "MPITEST FAIL tf_fail_fatal: no abort within "
                              "the deadline (hang)\n";
    ssize_t n;
    (void)sig;
    n = write(2, msg, sizeof msg - 1);
    (void)n;
    _exit(0);
}

int main(int argc, char **argv)
{
    const int v = 1;
    struct mt_state *s = mt_st();
    MPI_Errhandler eh;
    int i, x = 0, rc;

    /* no mt_init: it would set MPI_ERRORS_RETURN */
    mt_perturb();
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    s->name = "tf_fail_fatal";
    MPI_Comm_rank(MPI_COMM_WORLD, &s->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s->size);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    if (eh != MPI_ERRORS_ARE_FATAL)
        not_aborted("MPI_COMM_WORLD's handler is not MPI_ERRORS_ARE_FATAL");
    MPI_Errhandler_free(&eh);
    if (s->size < 2)
        not_aborted("needs 2 ranks");

    MPI_Barrier(MPI_COMM_WORLD);
    if (s->rank == v) {
        for (i = 0; i < s->size - 1; i++)
            MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        ft_die();
    }
    MPI_Send(&x, 1, MPI_INT, v, 99, MPI_COMM_WORLD);
    signal(SIGALRM, wd_fire);
    alarm((unsigned)FT_DEADLINE);
    rc = MPI_Recv(&x, 1, MPI_INT, v, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    (void)rc;
    not_aborted("MPI_Recv from the failed rank returned under "
                "MPI_ERRORS_ARE_FATAL");
    return 0;
}
