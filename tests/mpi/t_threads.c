/* t_threads.c: MPI_THREAD_MULTIPLE.  Per rank, 4 threads each run their own
 * ping-pong stream (pings to the right, pongs back to the left) with their
 * own tags on a shared dup of MPI_COMM_WORLD, while a fifth thread sends to
 * every other rank on another dup and receives with
 * MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG) + MPI_Recv.  All payloads are
 * checked; per-source order holds for the probing thread.  If the library
 * does not provide MPI_THREAD_MULTIPLE the test is skipped (note on
 * stderr, OK line still printed). */
#include "mpitest.h"

#include <pthread.h>

enum { NPP = 4, ITERS = 32, K = 30, TAG_PING = 100, TAG_PONG = 200 };
enum { MAXSZ = 256 << 10 };
/* eager and rendezvous sizes; kept moderate because 6 threads per rank
 * share 2 oversubscribed cores */
static const size_t cycle[8] = { 8, 1024, 8, 65536, 8, 1024, 8, MAXSZ };

static MPI_Comm pp_comm, probe_comm;

struct pp_arg {
    int t;
    unsigned char *buf[4]; /* ping out, ping in, pong out, pong in */
};

/* Pong that rank r sends back for ping (t, it). */
static int pong_id(int r) { return 1000 + r; }

static void pp_iter(struct pp_arg *a, int it)
{
    MPI_Request rq[4];
    MPI_Status st[4];
    size_t n = cycle[(it + a->t) % 8];
    int t = a->t, iter = t * 10000 + it, l = mt_left(), r = mt_right();
    MT_CHECK(MPI_Irecv(a->buf[1], (int)n, MPI_BYTE, l, TAG_PING + t, pp_comm,
                       &rq[0]));
    MT_CHECK(MPI_Irecv(a->buf[3], (int)n, MPI_BYTE, r, TAG_PONG + t, pp_comm,
                       &rq[1]));
    mt_fill(a->buf[0], n, mt_rank(), iter);
    MT_CHECK(MPI_Isend(a->buf[0], (int)n, MPI_BYTE, r, TAG_PING + t, pp_comm,
                       &rq[2]));
    MT_CHECK(MPI_Wait(&rq[0], &st[0]));
    mt_expect_status(MT_HERE, &st[0], l, TAG_PING + t, MPI_BYTE, (int)n);
    mt_verify(MT_HERE, a->buf[1], n, l, iter, "thread ping");
    mt_fill(a->buf[2], n, pong_id(mt_rank()), iter);
    MT_CHECK(MPI_Isend(a->buf[2], (int)n, MPI_BYTE, l, TAG_PONG + t, pp_comm,
                       &rq[3]));
    MT_CHECK(MPI_Waitall(3, &rq[1], &st[1]));
    mt_expect_status(MT_HERE, &st[1], r, TAG_PONG + t, MPI_BYTE, (int)n);
    mt_verify(MT_HERE, a->buf[3], n, pong_id(r), iter, "thread pong");
}

static void *pp_thread(void *p)
{
    struct pp_arg *a = p;
    for (int it = 0; it < ITERS; it++)
        pp_iter(a, it);
    return NULL;
}

static size_t probe_size(int k) { return (size_t)(k * 131) % 5000; }

/* Sends K messages to every other rank, then takes (size-1)*K messages with
 * Iprobe(ANY_SOURCE, ANY_TAG) + Recv; tags from one source come in order. */
static void *probe_thread(void *p)
{
    int n = mt_size(), me = mt_rank(), got = 0;
    int *next = mt_malloc(sizeof(int) * (size_t)n);
    unsigned char *sb = mt_malloc(5000), *rb = mt_malloc(5000);
    MPI_Request *req = mt_malloc(sizeof *req * (size_t)(n * K));
    double end = mt_now() + 40.0;
    (void)p;
    memset(next, 0, sizeof(int) * (size_t)n);
    mt_fill(sb, 5000, me, 77);
    for (int j = 0, q = 0; j < n; j++)
        for (int k = 0; k < K; k++, q++)
            req[q] = MPI_REQUEST_NULL;
    for (int k = 0; k < K; k++)
        for (int j = 0; j < n; j++)
            if (j != me)
                MT_CHECK(MPI_Isend(sb, (int)probe_size(k), MPI_BYTE, j, k,
                                   probe_comm, &req[j * K + k]));
    while (got < (n - 1) * K) {
        MPI_Status st;
        int flag = 0, s;
        MT_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, probe_comm, &flag,
                            &st));
        mt_expect(MT_HERE, flag || mt_now() < end, "probe thread: %d of %d",
                  got, (n - 1) * K);
        if (!flag)
            continue;
        s = st.MPI_SOURCE;
        mt_expect(MT_HERE, s >= 0 && s < n && s != me && next[s] < K &&
                  st.MPI_TAG == next[s], "probe thread: source %d tag %d",
                  s, st.MPI_TAG);
        mt_expect_status(MT_HERE, &st, s, next[s], MPI_BYTE,
                         (int)probe_size(next[s]));
        MT_CHECK(MPI_Recv(rb, 5000, MPI_BYTE, s, st.MPI_TAG, probe_comm,
                          &st));
        mt_verify(MT_HERE, rb, probe_size(next[s]), s, 77, "probe thread");
        next[s]++;
        got++;
    }
    MT_CHECK(MPI_Waitall(n * K, req, MPI_STATUSES_IGNORE));
    free(next), free(sb), free(rb), free(req);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t th[NPP + 1];
    struct pp_arg args[NPP];
    int provided = mt_init_thread(&argc, &argv, "t_threads",
                                  MPI_THREAD_MULTIPLE);
    if (provided < MPI_THREAD_MULTIPLE) {
        mt_note("SKIP: MPI_THREAD_MULTIPLE not provided");
        return mt_finish();
    }
    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &pp_comm));
    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &probe_comm));
    for (int t = 0; t < NPP; t++) {
        args[t].t = t;
        for (int k = 0; k < 4; k++)
            args[t].buf[k] = mt_malloc(MAXSZ);
        mt_expect(MT_HERE, pthread_create(&th[t], NULL, pp_thread,
                                          &args[t]) == 0, "pthread_create");
    }
    mt_expect(MT_HERE, pthread_create(&th[NPP], NULL, probe_thread, NULL) ==
              0, "pthread_create");
    for (int t = 0; t <= NPP; t++)
        mt_expect(MT_HERE, pthread_join(th[t], NULL) == 0, "pthread_join");
    for (int t = 0; t < NPP; t++)
        for (int k = 0; k < 4; k++)
            free(args[t].buf[k]);
    MT_CHECK(MPI_Comm_free(&pp_comm));
    MT_CHECK(MPI_Comm_free(&probe_comm));
    return mt_finish();
}
