/* tf_fail_queries: the failure queries (MPI-FT 17.4.1, 17.6, ULFM
 * spellings) are local, exact and in each communicator's own numbering:
 *  - before the failure every failed / acknowledged group is empty;
 *  - MPIX_Comm_group_failed gives the failed rank in the communicator's
 *    numbering: checked on MPI_COMM_WORLD and on a communicator made before
 *    the failure with the ranks reversed;
 *  - on an intercommunicator made before the failure, the failed process
 *    is in MPIX_Comm_group_failed (local group) on its own side and in
 *    MPIX_Comm_remote_group_failed on the other side, again in the right
 *    numbering;
 *  - MPIX_Comm_remote_group_failed on an intracommunicator is MPI_ERR_COMM;
 *  - MPIX_Comm_failure_get_acked is empty until MPIX_Comm_failure_ack, then
 *    holds the failed rank; acknowledging is per communicator; the
 *    acknowledgement re-enables MPI_ANY_SOURCE (disabled by the failure:
 *    MPIX_ERR_RANK_FAIL_STOP until then), checked with payloads;
 *  - MPIX_Comm_reenable_any_source returns the failed group in the
 *    communicator's numbering (the remote group's for an intercommunicator).
 *
 * The last rank dies idle.
 * FS_TEST_NPS: 4
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

/* Frees *g and checks it has exactly the members want[0..n-1] of comm's
 * group (remote: comm's remote group), in comm's numbering. */
static void expect_group(mt_loc at, MPI_Group *g, MPI_Comm comm, int remote,
                         const int *want, int n, const char *what)
{
    MPI_Group ref;
    int size = -1, i, out;

    MT_CHECK(MPI_Group_size(*g, &size));
    mt_expect(at, size == n, "%s: %d members, want %d", what, size, n);
    if (remote)
        MT_CHECK(MPI_Comm_remote_group(comm, &ref));
    else
        MT_CHECK(MPI_Comm_group(comm, &ref));
    for (i = 0; i < n; i++) {
        MT_CHECK(MPI_Group_translate_ranks(*g, 1, &i, ref, &out));
        mt_expect(at, out == want[i], "%s: member %d is rank %d, want %d",
                  what, i, out, want[i]);
    }
    MT_CHECK(MPI_Group_free(&ref));
    MT_CHECK(MPI_Group_free(g));
}

static void expect_empty(mt_loc at, MPI_Group *g, const char *what)
{
    int size = -1;
    MT_CHECK(MPI_Group_size(*g, &size));
    mt_expect(at, size == 0, "%s: %d members, want none", what, size);
    MT_CHECK(MPI_Group_free(g));
}

/* Every survivor sends one payload to the next survivor and receives one
 * with MPI_ANY_SOURCE (world ranks 0..nlive-1 are the survivors). */
static void anysource_ring(MPI_Comm comm, int nlive, int it)
{
    int me = mt_rank(), buf[32], in[32];
    MPI_Request rq;
    MPI_Status st;

    mt_fill(buf, sizeof buf, me, it);
    MT_CHECK(MPI_Irecv(in, 32, MPI_INT, MPI_ANY_SOURCE, it, comm, &rq));
    MT_CHECK(MPI_Send(buf, 32, MPI_INT, (me + 1) % nlive, it, comm));
    MT_CHECK(MPI_Wait(&rq, &st));
    mt_expect_status(MT_HERE, &st, (me + nlive - 1) % nlive, it, MPI_INT, 32);
    mt_verify(MT_HERE, in, sizeof in, (me + nlive - 1) % nlive, it,
              "MPI_ANY_SOURCE receive");
}

static void check_before(MPI_Comm rev, MPI_Comm inter)
{
    MPI_Group g;
    int rc;

    MT_CHECK(MPIX_Comm_group_failed(MPI_COMM_WORLD, &g));
    expect_empty(MT_HERE, &g, "group_failed(world) before");
    MT_CHECK(MPIX_Comm_group_failed(rev, &g));
    expect_empty(MT_HERE, &g, "group_failed(rev) before");
    MT_CHECK(MPIX_Comm_group_failed(inter, &g));
    expect_empty(MT_HERE, &g, "group_failed(inter) before");
    MT_CHECK(MPIX_Comm_remote_group_failed(inter, &g));
    expect_empty(MT_HERE, &g, "remote_group_failed(inter) before");
    MT_CHECK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &g));
    expect_empty(MT_HERE, &g, "get_acked(world) before");
    MT_CHECK(MPIX_Comm_reenable_any_source(rev, &g));
    expect_empty(MT_HERE, &g, "reenable_any_source(rev) before");
    rc = MPIX_Comm_remote_group_failed(MPI_COMM_WORLD, &g);
    mt_expect_class(MT_HERE, rc, MPI_ERR_COMM,
                    "remote_group_failed on an intracommunicator");
}

int main(int argc, char **argv)
{
    int v, me, n, rc, x = 0, w;
    MPI_Comm rev, half, inter;
    MPI_Group g;
    MPI_Status st;

    mt_init(&argc, &argv, "tf_fail_queries");
    me = mt_rank();
    n = mt_size();
    v = n - 1;
    ft_check_class();

    /* rev: world ranks reversed, so v is rank 0 there */
    MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, 0, n - 1 - me, &rev));
    /* inter: even world ranks against odd ones; local rank = world / 2 */
    MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half));
    MT_CHECK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - me % 2, 11,
                                  &inter));
    check_before(rev, inter);
    ft_barrier_then_die(v);

    ft_wait_failed(MT_HERE, MPI_COMM_WORLD, v);

    /* group_failed in each communicator's numbering */
    MT_CHECK(MPIX_Comm_group_failed(MPI_COMM_WORLD, &g));
    expect_group(MT_HERE, &g, MPI_COMM_WORLD, 0, &v, 1, "group_failed(world)");
    w = 0;      /* v in rev */
    MT_CHECK(MPIX_Comm_group_failed(rev, &g));
    expect_group(MT_HERE, &g, rev, 0, &w, 1, "group_failed(rev)");
    /* half has no failed member when v is on the other side */
    MT_CHECK(MPIX_Comm_group_failed(half, &g));
    w = v / 2;
    if (v % 2 == me % 2)
        expect_group(MT_HERE, &g, half, 0, &w, 1, "group_failed(half)");
    else
        expect_empty(MT_HERE, &g, "group_failed(half without v)");

    /* intercommunicator: v is in the local group on its side, in the
     * remote group on the other; rank v / 2 in both numberings */
    MT_CHECK(MPIX_Comm_group_failed(inter, &g));
    if (v % 2 == me % 2)
        expect_group(MT_HERE, &g, inter, 0, &w, 1, "group_failed(inter)");
    else
        expect_empty(MT_HERE, &g, "group_failed(inter), v remote");
    MT_CHECK(MPIX_Comm_remote_group_failed(inter, &g));
    if (v % 2 != me % 2)
        expect_group(MT_HERE, &g, inter, 1, &w, 1,
                     "remote_group_failed(inter)");
    else
        expect_empty(MT_HERE, &g, "remote_group_failed(inter), v local");
    rc = MPIX_Comm_remote_group_failed(MPI_COMM_WORLD, &g);
    mt_expect_class(MT_HERE, rc, MPI_ERR_COMM,
                    "remote_group_failed on an intracommunicator");

    /* acknowledgement: nothing acknowledged yet, ANY_SOURCE disabled */
    MT_CHECK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &g));
    expect_empty(MT_HERE, &g, "get_acked(world) before ack");
    ft_expect_failed(MT_HERE, MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 3,
                                       MPI_COMM_WORLD, &st),
                     "ANY_SOURCE receive before the acknowledgement");
    MT_CHECK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    MT_CHECK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &g));
    expect_group(MT_HERE, &g, MPI_COMM_WORLD, 0, &v, 1,
                 "get_acked(world) after ack");
    anysource_ring(MPI_COMM_WORLD, v, 4);
    anysource_ring(MPI_COMM_WORLD, v, 5);

    /* acknowledging is per communicator: rev is still disabled */
    MT_CHECK(MPIX_Comm_failure_get_acked(rev, &g));
    expect_empty(MT_HERE, &g, "get_acked(rev) before its own ack");
    ft_expect_failed(MT_HERE, MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 3,
                                       rev, &st),
                     "ANY_SOURCE receive on rev before its acknowledgement");
    MT_CHECK(MPIX_Comm_reenable_any_source(rev, &g));
    w = 0;
    expect_group(MT_HERE, &g, rev, 0, &w, 1, "reenable_any_source(rev)");
    MT_CHECK(MPIX_Comm_failure_get_acked(rev, &g));
    expect_group(MT_HERE, &g, rev, 0, &w, 1, "get_acked(rev) after reenable");

    /* intercommunicator: reenable returns the remote group's failures */
    MT_CHECK(MPIX_Comm_reenable_any_source(inter, &g));
    w = v / 2;
    if (v % 2 != me % 2)
        expect_group(MT_HERE, &g, inter, 1, &w, 1,
                     "reenable_any_source(inter)");
    else
        expect_empty(MT_HERE, &g, "reenable_any_source(inter), v local");

    /* the queries did not change what is known */
    mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 1,
              "failed group has %d members", ft_failed_count(MPI_COMM_WORLD));
    MT_CHECK(MPI_Comm_free(&inter));
    MT_CHECK(MPI_Comm_free(&half));
    MT_CHECK(MPI_Comm_free(&rev));
    return ft_finish();
}
