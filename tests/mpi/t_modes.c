/* t_modes.c: the four send modes, blocking and nonblocking, in a ring over
 * all ranks, plus the completion semantics that distinguish them:
 *   - synchronous sends complete only after the matching receive is posted
 *     (Ssend timing against a sleeping receiver; Issend+MPI_Test stays
 *     incomplete while the message sits unreceived at the peer);
 *   - buffered sends complete locally (Ibsend completes with no receive);
 *   - ready sends are only started once the receive is known to be posted;
 *   - the send buffer may be reused as soon as a blocking send returns. */
#include "mpitest.h"

enum mode { M_STD, M_SYNC, M_BUF, M_READY, M_NMODES };
static const char *const mode_name[M_NMODES] = { "std", "sync", "buf",
                                                 "ready" };
static const size_t sizes[] = { 0, 1, 1024, 65536, 1 << 20 };
enum { NSIZES = sizeof sizes / sizeof sizes[0], MAXSZ = 1 << 20 };
enum { TAG_GO = 7, TAG_DATA = 8, TAG_ARRIVED = 9 };

static int send_mode(enum mode m, const void *b, int n, int dest, int tag)
{
    MPI_Comm w = MPI_COMM_WORLD;
    switch (m) {
    case M_STD: return MPI_Send(b, n, MPI_BYTE, dest, tag, w);
    case M_SYNC: return MPI_Ssend(b, n, MPI_BYTE, dest, tag, w);
    case M_BUF: return MPI_Bsend(b, n, MPI_BYTE, dest, tag, w);
    default: return MPI_Rsend(b, n, MPI_BYTE, dest, tag, w);
    }
}

static int isend_mode(enum mode m, const void *b, int n, int dest, int tag,
                      MPI_Request *r)
{
    MPI_Comm w = MPI_COMM_WORLD;
    switch (m) {
    case M_STD: return MPI_Isend(b, n, MPI_BYTE, dest, tag, w, r);
    case M_SYNC: return MPI_Issend(b, n, MPI_BYTE, dest, tag, w, r);
    case M_BUF: return MPI_Ibsend(b, n, MPI_BYTE, dest, tag, w, r);
    default: return MPI_Irsend(b, n, MPI_BYTE, dest, tag, w, r);
    }
}

/* One ring step: receive from left, send to right in mode m. */
static void ring_step(enum mode m, int nb, size_t n, int iter,
                      unsigned char *sbuf, unsigned char *rbuf)
{
    MPI_Request rreq, sreq;
    MPI_Status st;
    int tag = 100 + (int)m * 2 + nb;
    char what[64];

    MT_CHECK(MPI_Irecv(rbuf, (int)n, MPI_BYTE, mt_left(), tag,
                       MPI_COMM_WORLD, &rreq));
    if (m == M_READY) /* every ring receive is posted before any Rsend */
        MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    mt_fill(sbuf, n, mt_rank(), iter);
    if (nb) {
        MT_CHECK(isend_mode(m, sbuf, (int)n, mt_right(), tag, &sreq));
        MT_CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    } else {
        MT_CHECK(send_mode(m, sbuf, (int)n, mt_right(), tag));
    }
    memset(sbuf, 0xEE, n); /* the buffer is ours again: scribble on it */
    MT_CHECK(MPI_Wait(&rreq, &st));
    snprintf(what, sizeof what, "%s%s %zu B", nb ? "I" : "", mode_name[m],
             n);
    mt_expect_status(MT_HERE, &st, mt_left(), tag, MPI_BYTE, (int)n);
    mt_verify(MT_HERE, rbuf, n, mt_left(), iter, what);
}

static void ring_all_modes(unsigned char *sbuf, unsigned char *rbuf)
{
    int iter = 0;
    for (int m = 0; m < M_NMODES; m++)
        for (int nb = 0; nb < 2; nb++)
            for (int s = 0; s < NSIZES; s++)
                for (int rep = 0; rep < (sizes[s] >= MAXSZ ? 2 : 3); rep++)
                    ring_step((enum mode)m, nb, sizes[s], iter++, sbuf, rbuf);
}

/* Rank 0 -> 1: MPI_Ssend must block until rank 1 posts the receive, which it
 * does 200 ms after being told to start.  The clock starts before the "go"
 * message, so the bound holds however the two processes are scheduled. */
static void ssend_timing(unsigned char *buf)
{
    const int n = 8, delay_ms = 200;
    if (mt_rank() == 0) {
        double t0 = mt_now(), t1;
        MT_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD));
        mt_fill(buf, n, 0, 4242);
        t1 = mt_now();
        MT_CHECK(MPI_Ssend(buf, n, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD));
        mt_expect(MT_HERE, mt_now() - t0 >= 0.150,
                  "MPI_Ssend completed %.1f ms after start (Ssend itself "
                  "%.1f ms) but the receive was posted after %d ms",
                  (mt_now() - t0) * 1e3, (mt_now() - t1) * 1e3, delay_ms);
    } else if (mt_rank() == 1) {
        MPI_Status st;
        MT_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
        mt_sleep_ms(delay_ms); /* deliberate: the sender must wait for us */
        MT_CHECK(MPI_Recv(buf, n, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &st));
        mt_expect_status(MT_HERE, &st, 0, TAG_DATA, MPI_BYTE, n);
        mt_verify(MT_HERE, buf, (size_t)n, 0, 4242, "Ssend timing");
    }
}

/* Rank 0 Issends to rank 1, which probes the message (so it has arrived),
 * reports that, and only receives after a "go".  Until then every MPI_Test
 * on the Issend must say incomplete. */
static void issend_handshake(unsigned char *buf, size_t n, int iter)
{
    if (mt_rank() == 0) {
        MPI_Request sreq, areq;
        int sdone = 0, arrived = 0, extra = 0;
        double end = mt_now() + 20.0;
        mt_fill(buf, n, 0, iter);
        MT_CHECK(MPI_Issend(buf, (int)n, MPI_BYTE, 1, TAG_DATA,
                            MPI_COMM_WORLD, &sreq));
        MT_CHECK(MPI_Irecv(NULL, 0, MPI_BYTE, 1, TAG_ARRIVED, MPI_COMM_WORLD,
                           &areq));
        /* keep testing until the peer saw the message, then 100 more */
        while (extra < 100) {
            MT_CHECK(MPI_Test(&sreq, &sdone, MPI_STATUS_IGNORE));
            mt_expect(MT_HERE, !sdone, "Issend of %zu B completed before "
                      "the receiver posted a receive (arrived=%d)", n,
                      arrived);
            if (!arrived)
                MT_CHECK(MPI_Test(&areq, &arrived, MPI_STATUS_IGNORE));
            else
                extra++;
            mt_expect(MT_HERE, mt_now() < end, "no arrival notice");
        }
        MT_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD));
        MT_CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    } else if (mt_rank() == 1) {
        MPI_Status st;
        /* probing is not receiving: the Issend must stay incomplete */
        MT_CHECK(MPI_Probe(0, TAG_DATA, MPI_COMM_WORLD, &st));
        mt_expect_status(MT_HERE, &st, 0, TAG_DATA, MPI_BYTE, (int)n);
        MT_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_ARRIVED, MPI_COMM_WORLD));
        MT_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
        MT_CHECK(MPI_Recv(buf, (int)n, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD,
                          &st));
        mt_verify(MT_HERE, buf, n, 0, iter, "Issend handshake");
    }
}

/* Rank 0's Ibsend must complete with no receive posted anywhere; the buffer
 * is then scribbled, and rank 1 (told to go only afterwards) must still get
 * the original data. */
static void ibsend_local(unsigned char *buf, size_t n, int iter)
{
    if (mt_rank() == 0) {
        MPI_Request req;
        mt_fill(buf, n, 0, iter);
        MT_CHECK(MPI_Ibsend(buf, (int)n, MPI_BYTE, 1, TAG_DATA,
                            MPI_COMM_WORLD, &req));
        mt_test_until(MT_HERE, &req, MPI_STATUS_IGNORE, 10.0,
                      "Ibsend without a posted receive");
        memset(buf, 0xAB, n);
        MT_CHECK(MPI_Bsend(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD));
    } else if (mt_rank() == 1) {
        MPI_Status st;
        MT_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
        MT_CHECK(MPI_Recv(buf, (int)n, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD,
                          &st));
        mt_expect_status(MT_HERE, &st, 0, TAG_DATA, MPI_BYTE, (int)n);
        mt_verify(MT_HERE, buf, n, 0, iter, "Ibsend local completion");
    }
}

/* Irsend after an explicit "receive posted" handshake from the receiver. */
static void irsend_handshake(unsigned char *buf, size_t n, int iter)
{
    MPI_Request req;
    MPI_Status st;
    if (mt_rank() == 1) {
        MT_CHECK(MPI_Irecv(buf, (int)n, MPI_BYTE, 0, TAG_DATA,
                           MPI_COMM_WORLD, &req));
        MT_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD));
        MT_CHECK(MPI_Wait(&req, &st));
        mt_expect_status(MT_HERE, &st, 0, TAG_DATA, MPI_BYTE, (int)n);
        mt_verify(MT_HERE, buf, n, 0, iter, "Irsend handshake");
    } else if (mt_rank() == 0) {
        MT_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
        mt_fill(buf, n, 0, iter);
        MT_CHECK(MPI_Irsend(buf, (int)n, MPI_BYTE, 1, TAG_DATA,
                            MPI_COMM_WORLD, &req));
        MT_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
}

int main(int argc, char **argv)
{
    unsigned char *sbuf, *rbuf, *bbuf;
    int bsize, dsize;
    void *dbuf;

    mt_init(&argc, &argv, "t_modes");
    sbuf = mt_malloc(MAXSZ);
    rbuf = mt_malloc(MAXSZ);
    /* a rank can be up to size-1 ring steps ahead of its right neighbour,
     * each leaving one buffered message behind, and buffer space is only
     * reclaimed once the library has progressed the transfer: be generous */
    bsize = (mt_size() + 8) * (MAXSZ + MPI_BSEND_OVERHEAD);
    bbuf = mt_malloc((size_t)bsize);
    MT_CHECK(MPI_Buffer_attach(bbuf, bsize));

    ring_all_modes(sbuf, rbuf);
    ssend_timing(sbuf);
    for (int i = 0; i < 3; i++)
        issend_handshake(sbuf, i == 0 ? 0 : i == 1 ? 8 : MAXSZ, 500 + i);
    ibsend_local(sbuf, 8, 600);
    ibsend_local(sbuf, MAXSZ, 601);
    irsend_handshake(sbuf, 8, 700);
    irsend_handshake(sbuf, MAXSZ, 701);

    MT_CHECK(MPI_Buffer_detach(&dbuf, &dsize)); /* waits for buffered sends */
    mt_expect(MT_HERE, dbuf == bbuf && dsize == bsize, "detach mismatch");
    free(bbuf);
    free(sbuf);
    free(rbuf);
    return mt_finish();
}
