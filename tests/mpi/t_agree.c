/* t_agree.c: MPIX_Comm_agree and MPIX_Comm_iagree without failures: the
 * bitwise AND of every member's flag, at every member, with MPI_SUCCESS;
 * many in a row (records are collected: the counter of agreements alive
 * stays small), on MPI_COMM_WORLD, a duplicate and the halves of a split
 * at once, three nonblocking ones outstanding together, mixed with
 * point-to-point traffic on the same communicator.  Sizes 4 and 9 cross
 * the star/binomial threshold (pml_failstop_agree_star_max, 8).
 * FS_TEST_NPS: 2 4 9
 */
#include "mpitest.h"
#include "failstop.h"

static void agree_expect(MPI_Comm comm, int mine, int want, const char *what)
{
    int flag = mine;

    MT_CHECK(MPIX_Comm_agree(comm, &flag));
    mt_expect(MT_HERE, flag == want, "%s: agreed %#x, want %#x", what, flag, want);
}

/* AND of ~(1 << (r % 31)) over ranks 0..n-1 of comm */
static int and_of_ranks(int n)
{
    int r, x = -1;

    for (r = 0; r < n; r++)
        x &= ~(1 << (r % 31));
    return x;
}

static void rounds(MPI_Comm comm, int count, const char *what)
{
    int me, n, i;

    MT_CHECK(MPI_Comm_rank(comm, &me));
    MT_CHECK(MPI_Comm_size(comm, &n));
    for (i = 0; i < count; i++) {
        agree_expect(comm, ~(1 << (me % 31)), and_of_ranks(n), what);
        /* one member alone says no: everyone hears it */
        agree_expect(comm, (me == i % n) ? 0 : 1, 0, what);
        agree_expect(comm, 1, 1, what);
    }
}

static void nonblocking(MPI_Comm comm)
{
    int me, n, flag[3], k;
    MPI_Request rq[3];
    MPI_Status st[3];

    MT_CHECK(MPI_Comm_rank(comm, &me));
    MT_CHECK(MPI_Comm_size(comm, &n));
    flag[0] = ~(1 << (me % 31));
    flag[1] = 5;
    flag[2] = (me == n - 1) ? 4 : 6;
    for (k = 0; k < 3; k++)
        MT_CHECK(MPIX_Comm_iagree(comm, &flag[k], &rq[k]));
    MT_CHECK(MPI_Waitall(3, rq, st));
    mt_expect(MT_HERE, flag[0] == and_of_ranks(n), "iagree 0: %#x", flag[0]);
    mt_expect(MT_HERE, flag[1] == 5, "iagree 1: %#x", flag[1]);
    mt_expect(MT_HERE, flag[2] == 4, "iagree 2: %#x", flag[2]);
}

int main(int argc, char **argv)
{
    MPI_Comm dup, half;
    int me, n, x = 0, y = 0;
    unsigned long long dropped;

    mt_init(&argc, &argv, "t_agree");
    me = mt_rank();
    n  = mt_size();
    rounds(MPI_COMM_WORLD, 50, "world");
    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half));
    /* interleaved on two communicators: instances are per communicator */
    rounds(half, 10, "half");
    rounds(dup, 10, "dup");
    nonblocking(MPI_COMM_WORLD);
    nonblocking(half);
    /* point-to-point on the same communicator around an agreement */
    if (n > 1) {
        MPI_Request rq;

        MT_CHECK(MPI_Irecv(&y, 1, MPI_INT, mt_left(), 3, dup, &rq));
        x = me;
        MT_CHECK(MPI_Send(&x, 1, MPI_INT, mt_right(), 3, dup));
        agree_expect(dup, 3, 3, "with a receive pending");
        MT_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        mt_expect(MT_HERE, y == mt_left(), "ring value %d", y);
    }
    MT_CHECK(MPIX_Failstop_counter("dropped_malformed", &dropped));
    mt_expect(MT_HERE, dropped == 0, "%llu messages dropped", dropped);
    MT_CHECK(MPI_Comm_free(&half));
    MT_CHECK(MPI_Comm_free(&dup));
    return mt_finish();
}
