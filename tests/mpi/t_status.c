/* t_status.c: single-completion calls leave status.MPI_ERROR alone.
 * MPI sets the MPI_ERROR field of a status only in calls that complete
 * several requests and return MPI_ERR_IN_STATUS; every other call's error is
 * its return value, and the field keeps what the caller put there
 * (MPI-4.0 3.2.5).  Each call below gets a status whose MPI_ERROR holds a
 * marker and must leave it there, while filling source, tag and count:
 * MPI_Recv (contiguous and vector type), MPI_Sendrecv, MPI_Sendrecv_replace,
 * MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv +
 * MPI_Wait, MPI_Wait, MPI_Test, MPI_Waitany, MPI_Testany,
 * MPI_Request_get_status; small (eager) and 256 KiB (rendezvous) messages.
 * Rank 0 receives from rank 1; the other ranks only take part in barriers.
 */
#include "mpitest.h"

enum { MARK = MPI_ERR_DIMS, TAG = 70 };

static MPI_Status marked(void)
{
    MPI_Status st;
    memset(&st, 0, sizeof st);
    st.MPI_ERROR = MARK;
    return st;
}

/* status of a completed receive of n ints with TAG from rank 1 */
static void check(mt_loc at, const MPI_Status *st, int n, const char *call)
{
    int count = -1;
    mt_expect(at, st->MPI_ERROR == MARK, "%s wrote status.MPI_ERROR = %d", call,
              st->MPI_ERROR);
    mt_expect(at, st->MPI_SOURCE == 1 && st->MPI_TAG == TAG,
              "%s: status source %d tag %d, want 1 and %d", call, st->MPI_SOURCE,
              st->MPI_TAG, TAG);
    MT_CHECK(MPI_Get_count(st, MPI_INT, &count));
    mt_expect(at, count == n, "%s: count %d, want %d", call, count, n);
}

/* Rank 1 sends one message of n ints to rank 0 (one per call tested). */
static void feed(int n, int calls)
{
    int *buf = mt_zalloc((size_t)n * sizeof(int));
    for (int i = 0; i < calls; i++)
        MT_CHECK(MPI_Send(buf, n, MPI_INT, 0, TAG, MPI_COMM_WORLD));
    free(buf);
}

static void probes(int *buf, int n)
{
    MPI_Status st;
    MPI_Message msg;
    MPI_Request r;
    int flag = 0;

    st = marked();
    MT_CHECK(MPI_Probe(1, TAG, MPI_COMM_WORLD, &st));
    check(MT_HERE, &st, n, "MPI_Probe");
    st = marked();
    while (!flag)
        MT_CHECK(MPI_Iprobe(1, TAG, MPI_COMM_WORLD, &flag, &st));
    check(MT_HERE, &st, n, "MPI_Iprobe");

    st = marked();
    MT_CHECK(MPI_Mprobe(1, TAG, MPI_COMM_WORLD, &msg, &st));
    check(MT_HERE, &st, n, "MPI_Mprobe");
    st = marked();
    MT_CHECK(MPI_Mrecv(buf, n, MPI_INT, &msg, &st));
    check(MT_HERE, &st, n, "MPI_Mrecv");

    flag = 0;
    st = marked();
    while (!flag)
        MT_CHECK(MPI_Improbe(1, TAG, MPI_COMM_WORLD, &flag, &msg, &st));
    check(MT_HERE, &st, n, "MPI_Improbe");
    MT_CHECK(MPI_Imrecv(buf, n, MPI_INT, &msg, &r));
    st = marked();
    MT_CHECK(MPI_Wait(&r, &st));
    check(MT_HERE, &st, n, "MPI_Imrecv + MPI_Wait");
}

static void receives(int *buf, int n)
{
    MPI_Status st;
    MPI_Datatype vec;
    MPI_Request r;
    int flag = 0, idx = -1;

    st = marked();
    MT_CHECK(MPI_Recv(buf, n, MPI_INT, 1, TAG, MPI_COMM_WORLD, &st));
    check(MT_HERE, &st, n, "MPI_Recv");

    /* a non-contiguous receive takes another path in a PML */
    MT_CHECK(MPI_Type_vector(n, 1, 2, MPI_INT, &vec));
    MT_CHECK(MPI_Type_commit(&vec));
    st = marked();
    MT_CHECK(MPI_Recv(buf, 1, vec, 1, TAG, MPI_COMM_WORLD, &st));
    check(MT_HERE, &st, n, "MPI_Recv (vector type)");
    MT_CHECK(MPI_Type_free(&vec));

    MT_CHECK(MPI_Irecv(buf, n, MPI_INT, 1, TAG, MPI_COMM_WORLD, &r));
    st = marked();
    MT_CHECK(MPI_Wait(&r, &st));
    check(MT_HERE, &st, n, "MPI_Wait");

    MT_CHECK(MPI_Irecv(buf, n, MPI_INT, 1, TAG, MPI_COMM_WORLD, &r));
    st = marked();
    while (!flag)
        MT_CHECK(MPI_Test(&r, &flag, &st));
    check(MT_HERE, &st, n, "MPI_Test");

    MT_CHECK(MPI_Irecv(buf, n, MPI_INT, 1, TAG, MPI_COMM_WORLD, &r));
    st = marked();
    MT_CHECK(MPI_Waitany(1, &r, &idx, &st));
    check(MT_HERE, &st, n, "MPI_Waitany");

    MT_CHECK(MPI_Irecv(buf, n, MPI_INT, 1, TAG, MPI_COMM_WORLD, &r));
    st = marked();
    for (flag = 0; !flag;)
        MT_CHECK(MPI_Testany(1, &r, &idx, &flag, &st));
    check(MT_HERE, &st, n, "MPI_Testany");

    MT_CHECK(MPI_Irecv(buf, n, MPI_INT, 1, TAG, MPI_COMM_WORLD, &r));
    st = marked();
    for (flag = 0; !flag;)
        MT_CHECK(MPI_Request_get_status(r, &flag, &st));
    check(MT_HERE, &st, n, "MPI_Request_get_status");
    MT_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
}

static void exchanges(int *buf, int n)
{
    MPI_Status st;
    int *out = mt_zalloc((size_t)n * sizeof(int));

    st = marked();
    MT_CHECK(MPI_Sendrecv(out, n, MPI_INT, 1, TAG, buf, n, MPI_INT, 1, TAG,
                          MPI_COMM_WORLD, &st));
    check(MT_HERE, &st, n, "MPI_Sendrecv");
    st = marked();
    MT_CHECK(MPI_Sendrecv_replace(buf, n, MPI_INT, 1, TAG, 1, TAG, MPI_COMM_WORLD, &st));
    check(MT_HERE, &st, n, "MPI_Sendrecv_replace");
    free(out);
}

enum { N_PROBES = 2, N_RECVS = 7, N_EXCH = 2 };

static void round_of(int n)
{
    int *buf = mt_zalloc(2 * (size_t)n * sizeof(int));

    if (mt_rank() == 0) {
        probes(buf, n);
        receives(buf, n);
        exchanges(buf, n);
    } else if (mt_rank() == 1) {
        feed(n, N_PROBES + N_RECVS);
        for (int i = 0; i < N_EXCH; i++)
            MT_CHECK(MPI_Sendrecv_replace(buf, n, MPI_INT, 0, TAG, 0, TAG, MPI_COMM_WORLD,
                                          MPI_STATUS_IGNORE));
    }
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    free(buf);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv, "t_status");
    round_of(4);
    round_of(65536);
    return mt_finish();
}
