/* tf_fail_icoll: nonblocking collectives and process failure (MPI-FT 17.7,
 * 17.7.3):
 *  - a nonblocking collective pending on MPI_COMM_WORLD when a process
 *    fails completes with MPIX_ERR_RANK_FAIL_STOP at every survivor, never
 *    hangs;
 *  - on the collectively inactive MPI_COMM_WORLD a nonblocking collective
 *    start (MPI_Ibarrier, MPI_Iallreduce, MPI_Ibcast) returns MPI_SUCCESS
 *    and the error class comes at completion, as for point-to-point
 *    (17.7.3: "the operation will not return an error class indicative of
 *    this failure [at the start call]. Instead the error will be returned
 *    during the completion call");
 *  - nonblocking collectives on a communicator without the failed process
 *    still work (results checked).
 *
 * Rank 1 dies idle, once every survivor has started its pending collective
 * (it never joins it, so that collective cannot succeed anywhere).
 * FS_TEST_NPS: 3
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

#define NV 8

int main(int argc, char **argv)
{
    const int v = 1;
    int me, n, i, x = 0, in[NV], out[NV], lr, ls, want, active = -1;
    MPI_Comm live;
    MPI_Request rq;
    MPI_Status st;

    mt_init(&argc, &argv, "tf_fail_icoll");
    me = mt_rank();
    n = mt_size();
    ft_check_class();
    MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, me == v ? MPI_UNDEFINED : 0, me,
                            &live));
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    if (me == v) {
        for (i = 0; i < n - 1; i++)
            MT_CHECK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 99,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        ft_die();
    }

    /* pending when the failure happens: v never joins it */
    for (i = 0; i < NV; i++)
        in[i] = me + i;
    MT_CHECK(MPI_Iallreduce(in, out, NV, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                            &rq));
    MT_CHECK(MPI_Send(&me, 1, MPI_INT, v, 99, MPI_COMM_WORLD));
    ft_expect_failed(MT_HERE, ft_wait(MT_HERE, &rq, &st, "pending "
                                           "Iallreduce"),
                     "Iallreduce pending when a process failed");
    mt_expect(MT_HERE, ft_is_known_failed(MPI_COMM_WORLD, v),
              "rank %d not in the failed group", v);
    MT_CHECK(MPIX_Comm_collectives_enabled(MPI_COMM_WORLD, &active));
    mt_expect(MT_HERE, active == 0, "MPI_COMM_WORLD still active");

    /* started on the inactive communicator: success now, error later */
    MT_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &rq));
    ft_expect_failed(MT_HERE, ft_wait(MT_HERE, &rq, &st, "Ibarrier"),
                     "Ibarrier on the inactive MPI_COMM_WORLD");
    MT_CHECK(MPI_Iallreduce(in, out, NV, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                            &rq));
    ft_expect_failed(MT_HERE, ft_wait(MT_HERE, &rq, &st, "Iallreduce"),
                     "Iallreduce on the inactive MPI_COMM_WORLD");
    MT_CHECK(MPI_Ibcast(in, NV, MPI_INT, 0, MPI_COMM_WORLD, &rq));
    ft_expect_failed(MT_HERE, ft_wait(MT_HERE, &rq, &st, "Ibcast"),
                     "Ibcast on the inactive MPI_COMM_WORLD");

    /* the survivors' communicator */
    MT_CHECK(MPI_Comm_rank(live, &lr));
    MT_CHECK(MPI_Comm_size(live, &ls));
    MT_CHECK(MPI_Ibarrier(live, &rq));
    MT_CHECK(ft_wait(MT_HERE, &rq, &st, "Ibarrier on the survivors"));
    for (i = 0; i < NV; i++)
        in[i] = mt_ival(lr, 1, (size_t)i) & 0xffff;
    MT_CHECK(MPI_Iallreduce(in, out, NV, MPI_INT, MPI_SUM, live, &rq));
    MT_CHECK(ft_wait(MT_HERE, &rq, &st, "Iallreduce on the survivors"));
    for (i = 0; i < NV; i++) {
        want = 0;
        for (int r = 0; r < ls; r++)
            want += mt_ival(r, 1, (size_t)i) & 0xffff;
        mt_expect(MT_HERE, out[i] == want, "survivors' Iallreduce [%d]: %d, "
                  "want %d", i, out[i], want);
    }
    if (lr == 0)
        mt_fill(in, sizeof in, 0, 2);
    MT_CHECK(MPI_Ibcast(in, NV, MPI_INT, 0, live, &rq));
    MT_CHECK(ft_wait(MT_HERE, &rq, &st, "Ibcast on the survivors"));
    mt_verify(MT_HERE, in, sizeof in, 0, 2, "survivors' Ibcast");
    MT_CHECK(MPI_Comm_free(&live));
    return ft_finish();
}
