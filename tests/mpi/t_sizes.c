/* t_sizes.c: message sizes from 0 B to 4 MiB (eager and rendezvous):
 *   - blocking ping-pong between rank pairs at every size;
 *   - streams of many outstanding nonblocking messages in both ring
 *     directions at once, per size and with sizes mixed in one stream. */
#include "mpitest.h"

static const size_t sizes[] = { 0, 1, 8, 1024, 8192, 65536, 1 << 20,
                                4 << 20 };
enum { NSIZES = sizeof sizes / sizeof sizes[0], MAXSZ = 4 << 20 };
/* one stream mixing eager and rendezvous sizes */
static const size_t mixsz[] = { 8, 262144, 0, 65536, 1, 8192, 1024 };
enum { NMIX = sizeof mixsz / sizeof mixsz[0] };
enum { TAG_PING = 1, TAG_PONG = 2, TAG_RIGHT = 3, TAG_LEFT = 4 };

static void pingpong(int peer, int initiator, unsigned char *sbuf,
                     unsigned char *rbuf)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Status st;
    for (int s = 0; s < NSIZES; s++) {
        int n = (int)sizes[s], iters = n >= (1 << 20) ? 3 : 10;
        for (int it = 0; it < iters; it++) {
            int iter = s * 100 + it;
            if (initiator) {
                mt_fill(sbuf, (size_t)n, mt_rank(), iter);
                MT_CHECK(MPI_Send(sbuf, n, MPI_BYTE, peer, TAG_PING, w));
                MT_CHECK(MPI_Recv(rbuf, n, MPI_BYTE, peer, TAG_PONG, w, &st));
                mt_expect_status(MT_HERE, &st, peer, TAG_PONG, MPI_BYTE, n);
                mt_verify(MT_HERE, rbuf, (size_t)n, peer, iter, "pong");
            } else {
                MT_CHECK(MPI_Recv(rbuf, n, MPI_BYTE, peer, TAG_PING, w, &st));
                mt_expect_status(MT_HERE, &st, peer, TAG_PING, MPI_BYTE, n);
                mt_verify(MT_HERE, rbuf, (size_t)n, peer, iter, "ping");
                mt_fill(sbuf, (size_t)n, mt_rank(), iter);
                MT_CHECK(MPI_Send(sbuf, n, MPI_BYTE, peer, TAG_PONG, w));
            }
        }
    }
}

/* Pairs (0,1), (2,3), ...; with an odd size the last rank then plays with
 * rank 0. */
static void all_pingpongs(unsigned char *sbuf, unsigned char *rbuf)
{
    int me = mt_rank(), n = mt_size();
    if ((me ^ 1) < n)
        pingpong(me ^ 1, (me & 1) == 0, sbuf, rbuf);
    if (n % 2 == 1 && (me == 0 || me == n - 1))
        pingpong(me == 0 ? n - 1 : 0, me == 0, sbuf, rbuf);
}

/* Layout of one stream: message i has size sz[i]; 4 buffer sets:
 * to right, to left, from left, from right. */
struct stream {
    int count;
    const size_t *sz;   /* per message */
    unsigned char *buf[4][128];
    MPI_Request req[4 * 128];
    MPI_Status st[4 * 128];
};

static void stream_post(struct stream *s, int base)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int c = s->count, l = mt_left(), r = mt_right();
    for (int i = 0; i < c; i++) {
        int n = (int)s->sz[i];
        for (int k = 0; k < 4; k++)
            s->buf[k][i] = mt_malloc(s->sz[i]);
        /* receives first for half the messages, sends first for the rest */
        if (i % 2 == 0) {
            MT_CHECK(MPI_Irecv(s->buf[2][i], n, MPI_BYTE, l, TAG_RIGHT, w,
                               &s->req[2 * c + i]));
            MT_CHECK(MPI_Irecv(s->buf[3][i], n, MPI_BYTE, r, TAG_LEFT, w,
                               &s->req[3 * c + i]));
        }
        mt_fill(s->buf[0][i], s->sz[i], mt_rank(), base + 2 * i);
        mt_fill(s->buf[1][i], s->sz[i], mt_rank(), base + 2 * i + 1);
        MT_CHECK(MPI_Isend(s->buf[0][i], n, MPI_BYTE, r, TAG_RIGHT, w,
                           &s->req[i]));
        MT_CHECK(MPI_Isend(s->buf[1][i], n, MPI_BYTE, l, TAG_LEFT, w,
                           &s->req[c + i]));
        if (i % 2 == 1) {
            MT_CHECK(MPI_Irecv(s->buf[2][i], n, MPI_BYTE, l, TAG_RIGHT, w,
                               &s->req[2 * c + i]));
            MT_CHECK(MPI_Irecv(s->buf[3][i], n, MPI_BYTE, r, TAG_LEFT, w,
                               &s->req[3 * c + i]));
        }
    }
}

static void stream_check(struct stream *s, int base)
{
    int c = s->count, l = mt_left(), r = mt_right();
    MT_CHECK(MPI_Waitall(4 * c, s->req, s->st));
    for (int i = 0; i < c; i++) {
        int n = (int)s->sz[i];
        /* the left neighbour's "to right" stream and vice versa */
        mt_expect_status(MT_HERE, &s->st[2 * c + i], l, TAG_RIGHT, MPI_BYTE,
                         n);
        mt_expect_status(MT_HERE, &s->st[3 * c + i], r, TAG_LEFT, MPI_BYTE, n);
        mt_verify(MT_HERE, s->buf[2][i], s->sz[i], l, base + 2 * i,
                  "stream from left");
        mt_verify(MT_HERE, s->buf[3][i], s->sz[i], r, base + 2 * i + 1,
                  "stream from right");
        for (int k = 0; k < 4; k++)
            free(s->buf[k][i]);
    }
}

static void run_stream(int count, const size_t *sz, int base)
{
    static struct stream s;
    s.count = count;
    s.sz = sz;
    stream_post(&s, base);
    stream_check(&s, base);
}

static void all_streams(void)
{
    size_t sz[128];
    for (int s = 0; s < NSIZES; s++) {
        int count = sizes[s] <= 65536 ? 100 : sizes[s] <= (1 << 20) ? 8 : 2;
        for (int i = 0; i < count; i++)
            sz[i] = sizes[s];
        run_stream(count, sz, 10000 * (s + 1));
    }
    /* eager and rendezvous interleaved in one stream */
    for (int i = 0; i < 100; i++)
        sz[i] = mixsz[i % NMIX];
    run_stream(100, sz, 90000);
}

int main(int argc, char **argv)
{
    unsigned char *sbuf, *rbuf;
    mt_init(&argc, &argv, "t_sizes");
    sbuf = mt_malloc(MAXSZ);
    rbuf = mt_malloc(MAXSZ);
    all_pingpongs(sbuf, rbuf);
    all_streams();
    free(sbuf);
    free(rbuf);
    return mt_finish();
}
