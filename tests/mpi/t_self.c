/* t_self.c: messages a rank sends to itself.
 *   - blocking MPI_Send of small messages to self, then MPI_Recv;
 *   - Isend/Irecv to self from 0 B to 4 MiB, receive posted first or last;
 *   - MPI_Sendrecv and MPI_Sendrecv_replace with self;
 *   - wildcard receive and probe of a self message (source = own rank);
 *   - Issend to self stays incomplete until the receive is posted;
 *   - a stream of 100 outstanding self messages keeps its order.
 * All ranks do this at the same time. */
#include "mpitest.h"

static const size_t sizes[] = { 0, 1, 8, 1024, 8192, 65536, 1 << 20,
                                4 << 20 };
enum { NSIZES = sizeof sizes / sizeof sizes[0], MAXSZ = 4 << 20 };
enum { TAG_B = 1, TAG_NB = 2, TAG_SR = 3, TAG_SS = 4, TAG_ST = 5 };

static void blocking_small(unsigned char *sb, unsigned char *rb)
{
    const int n[4] = { 0, 1, 8, 64 };
    int me = mt_rank();
    for (int i = 0; i < 4; i++) {
        MPI_Status st;
        mt_fill(sb, (size_t)n[i], me, i);
        MT_CHECK(MPI_Send(sb, n[i], MPI_BYTE, me, TAG_B, MPI_COMM_WORLD));
        memset(sb, 0, (size_t)n[i]); /* the send buffer is free again */
        MT_CHECK(MPI_Recv(rb, n[i], MPI_BYTE, me, TAG_B, MPI_COMM_WORLD,
                          &st));
        mt_expect_status(MT_HERE, &st, me, TAG_B, MPI_BYTE, n[i]);
        mt_verify(MT_HERE, rb, (size_t)n[i], me, i, "blocking send to self");
    }
}

/* Receive first (recv_first) or send first; the receive uses wildcards
 * every other size, and a probe checks the envelope when sending first. */
static void nonblocking(int recv_first, unsigned char *sb, unsigned char *rb)
{
    int me = mt_rank();
    for (int s = 0; s < NSIZES; s++) {
        MPI_Request req[2];
        MPI_Status st[2];
        int n = (int)sizes[s], iter = 100 * recv_first + s;
        int src = s % 2 ? MPI_ANY_SOURCE : me, tag = s % 2 ? MPI_ANY_TAG
                                                           : TAG_NB;
        mt_fill(sb, sizes[s], me, iter);
        if (recv_first)
            MT_CHECK(MPI_Irecv(rb, n, MPI_BYTE, src, tag, MPI_COMM_WORLD,
                               &req[1]));
        MT_CHECK(MPI_Isend(sb, n, MPI_BYTE, me, TAG_NB, MPI_COMM_WORLD,
                           &req[0]));
        if (!recv_first) {
            MT_CHECK(MPI_Probe(src, tag, MPI_COMM_WORLD, &st[1]));
            mt_expect_status(MT_HERE, &st[1], me, TAG_NB, MPI_BYTE, n);
            MT_CHECK(MPI_Irecv(rb, n, MPI_BYTE, src, tag, MPI_COMM_WORLD,
                               &req[1]));
        }
        MT_CHECK(MPI_Waitall(2, req, st));
        mt_expect_status(MT_HERE, &st[1], me, TAG_NB, MPI_BYTE, n);
        mt_verify(MT_HERE, rb, sizes[s], me, iter, "Isend/Irecv to self");
    }
}

static void sendrecv_self(unsigned char *sb, unsigned char *rb)
{
    int me = mt_rank();
    for (int s = 0; s < NSIZES; s++) {
        MPI_Status st;
        int n = (int)sizes[s];
        mt_fill(sb, sizes[s], me, 200 + s);
        MT_CHECK(MPI_Sendrecv(sb, n, MPI_BYTE, me, TAG_SR, rb, n, MPI_BYTE,
                              me, TAG_SR, MPI_COMM_WORLD, &st));
        mt_expect_status(MT_HERE, &st, me, TAG_SR, MPI_BYTE, n);
        mt_verify(MT_HERE, rb, sizes[s], me, 200 + s, "Sendrecv self");
        MT_CHECK(MPI_Sendrecv_replace(sb, n, MPI_BYTE, me, TAG_SR,
                                      MPI_ANY_SOURCE, MPI_ANY_TAG,
                                      MPI_COMM_WORLD, &st));
        mt_expect_status(MT_HERE, &st, me, TAG_SR, MPI_BYTE, n);
        mt_verify(MT_HERE, sb, sizes[s], me, 200 + s,
                  "Sendrecv_replace self");
    }
}

/* The message to self is visible (Iprobe), yet the Issend must not complete
 * before the receive is posted. */
static void issend_self(size_t n, unsigned char *sb, unsigned char *rb)
{
    MPI_Request sreq, rreq;
    MPI_Status st;
    int me = mt_rank(), flag = 0, done = 0;
    double end = mt_now() + 20.0;
    mt_fill(sb, n, me, 300);
    MT_CHECK(MPI_Issend(sb, (int)n, MPI_BYTE, me, TAG_SS, MPI_COMM_WORLD,
                        &sreq));
    while (!flag) {
        MT_CHECK(MPI_Iprobe(me, TAG_SS, MPI_COMM_WORLD, &flag, &st));
        mt_expect(MT_HERE, flag || mt_now() < end, "self message not seen");
    }
    for (int k = 0; k < 100 && !done; k++)
        MT_CHECK(MPI_Test(&sreq, &done, MPI_STATUS_IGNORE));
    mt_expect(MT_HERE, !done, "Issend to self (%zu B) completed before the "
              "receive was posted", n);
    MT_CHECK(MPI_Irecv(rb, (int)n, MPI_BYTE, me, TAG_SS, MPI_COMM_WORLD,
                       &rreq));
    MT_CHECK(MPI_Wait(&rreq, &st));
    MT_CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    mt_verify(MT_HERE, rb, n, me, 300, "Issend to self");
}

/* 100 outstanding self messages of mixed sizes, received in order. */
static void stream_self(unsigned char *sb, unsigned char *rb)
{
    enum { K = 100, SLOT = 8192 };
    MPI_Request req[2 * K];
    MPI_Status st[2 * K];
    int me = mt_rank();
    for (int k = 0; k < K; k++) {
        int n = (k * 37) % SLOT;
        mt_fill(sb + k * SLOT, (size_t)n, me, 400 + k);
        MT_CHECK(MPI_Isend(sb + k * SLOT, n, MPI_BYTE, me, TAG_ST,
                           MPI_COMM_WORLD, &req[k]));
    }
    for (int k = 0; k < K; k++)
        MT_CHECK(MPI_Irecv(rb + k * SLOT, SLOT, MPI_BYTE, MPI_ANY_SOURCE,
                           TAG_ST, MPI_COMM_WORLD, &req[K + k]));
    MT_CHECK(MPI_Waitall(2 * K, req, st));
    for (int k = 0; k < K; k++) {
        int n = (k * 37) % SLOT;
        mt_expect_status(MT_HERE, &st[K + k], me, TAG_ST, MPI_BYTE, n);
        mt_verify(MT_HERE, rb + k * SLOT, (size_t)n, me, 400 + k,
                  "self stream order");
    }
}

int main(int argc, char **argv)
{
    unsigned char *sb, *rb;
    mt_init(&argc, &argv, "t_self");
    sb = mt_malloc(MAXSZ);
    rb = mt_malloc(MAXSZ);
    blocking_small(sb, rb);
    nonblocking(1, sb, rb);
    nonblocking(0, sb, rb);
    sendrecv_self(sb, rb);
    issend_self(0, sb, rb);
    issend_self(8, sb, rb);
    issend_self(MAXSZ, sb, rb);
    stream_self(sb, rb);
    free(sb);
    free(rb);
    return mt_finish();
}
