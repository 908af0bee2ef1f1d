/* t_persistent.c: persistent requests.  Send_init in all four modes and
 * Recv_init, started again and again (MPI_Start and MPI_Startall) with new
 * payloads in the same buffers; inactive requests stay allocated, test as
 * complete with an empty status and can be freed; a persistent synchronous
 * send must not complete before its receive is started. */
#include "mpitest.h"

enum mode { M_STD, M_SYNC, M_BUF, M_READY, M_NMODES };
static const char *const mode_init[M_NMODES] = { "Send_init", "Ssend_init",
                                                 "Bsend_init", "Rsend_init" };
static const size_t sizes[] = { 8, 65536, 1 << 20 };
enum { NSIZES = sizeof sizes / sizeof sizes[0], MAXSZ = 1 << 20 };
enum { TAG_GO = 5, TAG_DATA = 6, TAG_ARRIVED = 7, TAG_MIX = 50 };

static int send_init(enum mode m, void *b, int n, int dest, int tag,
                     MPI_Request *r)
{
    MPI_Comm w = MPI_COMM_WORLD;
    switch (m) {
    case M_STD: return MPI_Send_init(b, n, MPI_BYTE, dest, tag, w, r);
    case M_SYNC: return MPI_Ssend_init(b, n, MPI_BYTE, dest, tag, w, r);
    case M_BUF: return MPI_Bsend_init(b, n, MPI_BYTE, dest, tag, w, r);
    default: return MPI_Rsend_init(b, n, MPI_BYTE, dest, tag, w, r);
    }
}

/* An inactive persistent request tests complete with an empty status. */
static void expect_inactive(MPI_Request *req)
{
    MPI_Status st;
    int flag = 0, c = -1;
    mt_expect(MT_HERE, *req != MPI_REQUEST_NULL,
              "persistent request freed by completion");
    MT_CHECK(MPI_Test(req, &flag, &st));
    MT_CHECK(MPI_Get_count(&st, MPI_BYTE, &c));
    mt_expect(MT_HERE, flag && *req != MPI_REQUEST_NULL &&
              st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG &&
              c == 0, "inactive request: flag %d source %d tag %d count %d",
              flag, st.MPI_SOURCE, st.MPI_TAG, c);
}

/* Ring: persistent send (mode m) to the right, persistent receive from the
 * left, restarted iters times with fresh payloads. */
static void ring_persistent(enum mode m, size_t n, unsigned char *sbuf,
                            unsigned char *rbuf)
{
    MPI_Request req[2]; /* [0] receive, [1] send */
    MPI_Status st[2];
    int tag = 20 + (int)m, iters = n >= MAXSZ ? 8 : 30;
    char what[64];

    MT_CHECK(MPI_Recv_init(rbuf, (int)n, MPI_BYTE, mt_left(), tag,
                           MPI_COMM_WORLD, &req[0]));
    MT_CHECK(send_init(m, sbuf, (int)n, mt_right(), tag, &req[1]));
    for (int it = 0; it < iters; it++) {
        int iter = (int)m * 1000 + it;
        mt_fill(sbuf, n, mt_rank(), iter);
        memset(rbuf, 0, n);
        if (m == M_READY || it % 2 == 0) {
            MT_CHECK(MPI_Start(&req[0]));
            if (m == M_READY) /* all receives active before any Rsend */
                MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            MT_CHECK(MPI_Start(&req[1]));
        } else {
            MT_CHECK(MPI_Startall(2, req));
        }
        MT_CHECK(MPI_Waitall(2, req, st));
        mt_expect_status(MT_HERE, &st[0], mt_left(), tag, MPI_BYTE, (int)n);
        snprintf(what, sizeof what, "%s %zu B start %d", mode_init[m], n,
                 it);
        mt_verify(MT_HERE, rbuf, n, mt_left(), iter, what);
    }
    expect_inactive(&req[0]);
    expect_inactive(&req[1]);
    MT_CHECK(MPI_Request_free(&req[0]));
    MT_CHECK(MPI_Request_free(&req[1]));
    mt_expect(MT_HERE, req[0] == MPI_REQUEST_NULL &&
              req[1] == MPI_REQUEST_NULL, "Request_free left a handle");
}

/* Four sends (two per neighbour) and four wildcard receives in one
 * Startall list, restarted many times. */
static void startall_mixed(unsigned char *sb, unsigned char *rb)
{
    enum { K = 4, N = 256 };
    MPI_Request req[2 * K];
    MPI_Status st[2 * K];
    int dest[K] = { mt_right(), mt_left(), mt_right(), mt_left() };
    for (int k = 0; k < K; k++) {
        MT_CHECK(MPI_Recv_init(rb + k * N, N, MPI_BYTE, MPI_ANY_SOURCE,
                               MPI_ANY_TAG, MPI_COMM_WORLD, &req[k]));
        MT_CHECK(MPI_Send_init(sb + k * N, N, MPI_BYTE, dest[k], TAG_MIX + k,
                               MPI_COMM_WORLD, &req[K + k]));
    }
    for (int it = 0; it < 50; it++) {
        int seen = 0;
        for (int k = 0; k < K; k++)
            mt_fill(sb + k * N, N, mt_rank(), it * K + k);
        MT_CHECK(MPI_Startall(2 * K, req));
        MT_CHECK(MPI_Waitall(2 * K, req, st));
        /* each tag arrives exactly once; its sender follows from the tag */
        for (int k = 0; k < K; k++) {
            int t = st[k].MPI_TAG - TAG_MIX;
            int src = t % 2 == 0 ? mt_left() : mt_right();
            mt_expect(MT_HERE, t >= 0 && t < K && !(seen & (1 << t)) &&
                      st[k].MPI_SOURCE == src, "tag %d source %d",
                      st[k].MPI_TAG, st[k].MPI_SOURCE);
            seen |= 1 << t;
            mt_verify(MT_HERE, rb + k * N, N, src, it * K + t, "Startall");
        }
        /* the next round's wildcards must not catch this round's sends */
        MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    for (int k = 0; k < 2 * K; k++)
        MT_CHECK(MPI_Request_free(&req[k]));
}

/* Persistent Ssend from rank 0 to 1, restarted: each start must stay
 * incomplete while the message waits, probed, at the receiver. */
static void ssend_init_handshake(unsigned char *buf, size_t n)
{
    MPI_Request req;
    MPI_Status st;
    int me = mt_rank();
    if (me == 0)
        MT_CHECK(MPI_Ssend_init(buf, (int)n, MPI_BYTE, 1, TAG_DATA,
                                MPI_COMM_WORLD, &req));
    else if (me == 1)
        MT_CHECK(MPI_Recv_init(buf, (int)n, MPI_BYTE, 0, TAG_DATA,
                               MPI_COMM_WORLD, &req));
    for (int it = 0; it < 3 && me <= 1; it++) {
        if (me == 0) {
            int done = 0;
            mt_fill(buf, n, 0, 900 + it);
            MT_CHECK(MPI_Start(&req));
            /* the receiver has the message but has not started its recv */
            MT_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_ARRIVED,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int k = 0; k < 100 && !done; k++)
                MT_CHECK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
            mt_expect(MT_HERE, !done,
                      "persistent Ssend of %zu B completed before the "
                      "receive was started", n);
            MT_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD));
            MT_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            MT_CHECK(MPI_Probe(0, TAG_DATA, MPI_COMM_WORLD, &st));
            MT_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_ARRIVED,
                              MPI_COMM_WORLD));
            MT_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE));
            MT_CHECK(MPI_Start(&req));
            MT_CHECK(MPI_Wait(&req, &st));
            mt_verify(MT_HERE, buf, n, 0, 900 + it, "Ssend_init");
        }
    }
    if (me <= 1)
        MT_CHECK(MPI_Request_free(&req));
}

/* Persistent requests that were never started can be freed too. */
static void free_unstarted(unsigned char *buf)
{
    MPI_Request r[3];
    MT_CHECK(MPI_Send_init(buf, 4, MPI_BYTE, mt_right(), 1, MPI_COMM_WORLD,
                           &r[0]));
    MT_CHECK(MPI_Recv_init(buf, 4, MPI_BYTE, MPI_ANY_SOURCE, 1,
                           MPI_COMM_WORLD, &r[1]));
    MT_CHECK(MPI_Bsend_init(buf, 4, MPI_BYTE, mt_left(), 1, MPI_COMM_WORLD,
                            &r[2]));
    for (int k = 0; k < 3; k++) {
        expect_inactive(&r[k]);
        MT_CHECK(MPI_Request_free(&r[k]));
        mt_expect(MT_HERE, r[k] == MPI_REQUEST_NULL, "not freed");
    }
}

int main(int argc, char **argv)
{
    unsigned char *sbuf, *rbuf, *bbuf;
    int bsize, dsize;
    void *dbuf;

    mt_init(&argc, &argv, "t_persistent");
    sbuf = mt_malloc(MAXSZ);
    rbuf = mt_malloc(MAXSZ);
    bsize = (mt_size() + 8) * (MAXSZ + MPI_BSEND_OVERHEAD);
    bbuf = mt_malloc((size_t)bsize);
    MT_CHECK(MPI_Buffer_attach(bbuf, bsize));

    for (int s = 0; s < NSIZES; s++) {
        ring_persistent(M_STD, sizes[s], sbuf, rbuf);
        ring_persistent(M_SYNC, sizes[s], sbuf, rbuf);
        ring_persistent(M_READY, sizes[s], sbuf, rbuf);
    }
    startall_mixed(sbuf, rbuf);
    ssend_init_handshake(sbuf, 8);
    ssend_init_handshake(sbuf, MAXSZ);
    free_unstarted(sbuf);
    /* Last, so the rest is validated first on stock ob1: Open MPI 4.1.4's
     * ob1 resends stale data when a Bsend_init request above the BTL eager
     * limit is restarted after its previous transfer fully completed. */
    for (int s = 0; s < NSIZES; s++)
        ring_persistent(M_BUF, sizes[s], sbuf, rbuf);

    MT_CHECK(MPI_Buffer_detach(&dbuf, &dsize));
    free(bbuf);
    free(sbuf);
    free(rbuf);
    return mt_finish();
}
