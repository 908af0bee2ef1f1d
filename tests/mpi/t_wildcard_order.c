/* t_wildcard_order.c: MPI_ANY_SOURCE / MPI_ANY_TAG matching and message
 * ordering.
 *   - a root receives everyone's messages with all four combinations of
 *     wildcard and specific source/tag; every status must be right and every
 *     receive must get the earliest eligible message of that sender;
 *   - non-overtaking: a stream of same-tag messages whose sizes alternate
 *     between eager and rendezvous arrives in send order (receiver blocking
 *     with a large buffer, or all receives pre-posted with exact sizes);
 *   - among several posted receives that all match, the earliest posted one
 *     gets the first message, whether wildcard or specific. */
#include "mpitest.h"

enum { M = 24, NTAGS = 3, TAG0 = 30, TAG_W = 60, TAG_O = 70 };
enum { MSG = 16, MAXSZ = 4 << 20, K = 40 };
static const size_t osizes[] = { 8, 1 << 20, 0, 65536, 1, 4 << 20, 1024,
                                 8192 };
enum { NO = sizeof osizes / sizeof osizes[0] };

static int tag_of(int i) { return TAG0 + i % NTAGS; }

struct pending {
    unsigned char (*got)[M]; /* [source][index] received */
    int left;                 /* messages still to come */
};

/* Earliest message of src not yet received whose tag matches tag. */
static int earliest(const struct pending *p, int src, int tag)
{
    for (int i = 0; i < M; i++)
        if (!p->got[src][i] && (tag == MPI_ANY_TAG || tag_of(i) == tag))
            return i;
    return -1;
}

/* Picks the envelope of the k-th receive so that it is always satisfiable:
 * mode k%4 selects wildcard/specific source x wildcard/specific tag; the
 * specific tag is that of the sender's *last* outstanding message, so the
 * receive must skip over earlier messages with other tags. */
static void pick(const struct pending *p, int k, int root, int *src, int *tag)
{
    int s = -1, i = M - 1;
    for (int d = 0; d < mt_size() && s < 0; d++) {
        int c = (k + d) % mt_size();
        if (c != root && earliest(p, c, MPI_ANY_TAG) >= 0)
            s = c;
    }
    while (p->got[s][i])
        i--;
    *src = (k % 4) & 1 ? s : MPI_ANY_SOURCE;
    *tag = (k % 4) & 2 ? tag_of(i) : MPI_ANY_TAG;
}

static void root_receive_all(int root)
{
    struct pending p;
    unsigned char buf[MSG];
    p.got = mt_zalloc((size_t)mt_size() * sizeof *p.got);
    p.left = (mt_size() - 1) * M;
    for (int k = 0; p.left > 0; k++) {
        MPI_Status st;
        int src, tag, s, i;
        pick(&p, k, root, &src, &tag);
        MT_CHECK(MPI_Recv(buf, MSG, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st));
        s = st.MPI_SOURCE;
        mt_expect(MT_HERE, s >= 0 && s < mt_size() && s != root &&
                  (src == MPI_ANY_SOURCE || s == src),
                  "recv(%d,%d): status source %d", src, tag, s);
        i = earliest(&p, s, tag);
        mt_expect(MT_HERE, i >= 0 && st.MPI_TAG == tag_of(i),
                  "recv(%d,%d) from %d: tag %d, earliest eligible is #%d",
                  src, tag, s, st.MPI_TAG, i);
        mt_expect_status(MT_HERE, &st, s, tag_of(i), MPI_BYTE, MSG);
        mt_verify(MT_HERE, buf, MSG, s, i, "wildcard receive");
        p.got[s][i] = 1;
        p.left--;
    }
    free(p.got);
}

static void wildcard_mix(int root)
{
    unsigned char sb[M][MSG];
    MPI_Request req[M];
    if (mt_rank() == root) {
        root_receive_all(root);
    } else {
        for (int i = 0; i < M; i++) {
            mt_fill(sb[i], MSG, mt_rank(), i);
            MT_CHECK(MPI_Isend(sb[i], MSG, MPI_BYTE, root, tag_of(i),
                               MPI_COMM_WORLD, &req[i]));
        }
        MT_CHECK(MPI_Waitall(M, req, MPI_STATUSES_IGNORE));
    }
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* keep phases apart */
}

/* Same-tag stream to the right, sizes alternating eager/rendezvous; the
 * receiver takes them one by one with a wildcard into a 4 MiB buffer. */
static void order_blocking_recv(unsigned char **sb, unsigned char *rb)
{
    MPI_Request req[K];
    for (int k = 0; k < K; k++) {
        mt_fill(sb[k], osizes[k % NO], mt_rank(), 1000 + k);
        MT_CHECK(MPI_Isend(sb[k], (int)osizes[k % NO], MPI_BYTE, mt_right(),
                           TAG_O, MPI_COMM_WORLD, &req[k]));
    }
    for (int k = 0; k < K; k++) {
        MPI_Status st;
        MT_CHECK(MPI_Recv(rb, MAXSZ, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                          MPI_COMM_WORLD, &st));
        mt_expect_status(MT_HERE, &st, mt_left(), TAG_O, MPI_BYTE,
                         (int)osizes[k % NO]);
        mt_verify(MT_HERE, rb, osizes[k % NO], mt_left(), 1000 + k,
                  "stream order (blocking receiver)");
    }
    MT_CHECK(MPI_Waitall(K, req, MPI_STATUSES_IGNORE));
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Receiver pre-posts all receives with exact sizes; the sender then sends
 * the stream with blocking sends.  Out-of-order matching would truncate. */
static void order_preposted(unsigned char **sb, unsigned char **rb)
{
    MPI_Request req[K];
    MPI_Status st[K];
    for (int k = 0; k < K; k++)
        MT_CHECK(MPI_Irecv(rb[k], (int)osizes[k % NO], MPI_BYTE, mt_left(),
                           TAG_O, MPI_COMM_WORLD, &req[k]));
    for (int k = 0; k < K; k++) {
        mt_fill(sb[k], osizes[k % NO], mt_rank(), 2000 + k);
        MT_CHECK(MPI_Send(sb[k], (int)osizes[k % NO], MPI_BYTE, mt_right(),
                          TAG_O, MPI_COMM_WORLD));
    }
    MT_CHECK(MPI_Waitall(K, req, st));
    for (int k = 0; k < K; k++) {
        mt_expect_status(MT_HERE, &st[k], mt_left(), TAG_O, MPI_BYTE,
                         (int)osizes[k % NO]);
        mt_verify(MT_HERE, rb[k], osizes[k % NO], mt_left(), 2000 + k,
                  "stream order (pre-posted)");
    }
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Four receives that all match the left neighbour's next message, posted in
 * the order given; the k-th message sent must land in the k-th receive. */
static void posted_order(const int src[4], const int tag[4], size_t n,
                         unsigned char *sb, unsigned char *rb, int base)
{
    MPI_Request req[4];
    MPI_Status st[4];
    for (int k = 0; k < 4; k++) {
        int s = src[k] < 0 ? mt_left() : src[k];
        MT_CHECK(MPI_Irecv(rb + k * n, (int)n, MPI_BYTE, s, tag[k],
                           MPI_COMM_WORLD, &req[k]));
    }
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* all receives are posted */
    for (int k = 0; k < 4; k++) {
        mt_fill(sb + k * n, n, mt_rank(), base + k);
        MT_CHECK(MPI_Send(sb + k * n, (int)n, MPI_BYTE, mt_right(), TAG_W,
                          MPI_COMM_WORLD));
    }
    MT_CHECK(MPI_Waitall(4, req, st));
    for (int k = 0; k < 4; k++) {
        mt_expect_status(MT_HERE, &st[k], mt_left(), TAG_W, MPI_BYTE, (int)n);
        mt_verify(MT_HERE, rb + k * n, n, mt_left(), base + k,
                  "earliest posted receive matches first");
    }
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

static void all_posted_orders(unsigned char *sb, unsigned char *rb)
{
    const int A = MPI_ANY_SOURCE, T = MPI_ANY_TAG, L = -1;
    const int src1[4] = { A, L, L, A }, tag1[4] = { TAG_W, TAG_W, T, T };
    const int src2[4] = { L, A, A, L }, tag2[4] = { TAG_W, T, TAG_W, T };
    const int src3[4] = { L, L, A, A }, tag3[4] = { T, TAG_W, T, TAG_W };
    const size_t n[2] = { 8, 1 << 20 };
    for (int i = 0; i < 2; i++) {
        posted_order(src1, tag1, n[i], sb, rb, 3000 + 10 * i);
        posted_order(src2, tag2, n[i], sb, rb, 3100 + 10 * i);
        posted_order(src3, tag3, n[i], sb, rb, 3200 + 10 * i);
    }
}

int main(int argc, char **argv)
{
    unsigned char *sb[K], *rb[K];
    mt_init(&argc, &argv, "t_wildcard_order");
    for (int k = 0; k < K; k++) {
        sb[k] = mt_malloc(k < NO ? MAXSZ : osizes[k % NO]);
        rb[k] = mt_malloc(k < NO ? MAXSZ : osizes[k % NO]);
    }
    wildcard_mix(0);
    wildcard_mix(mt_size() - 1);
    order_blocking_recv(sb, rb[0]);
    order_preposted(sb, rb);
    all_posted_orders(sb[0], rb[0]);
    for (int k = 0; k < K; k++) {
        free(sb[k]);
        free(rb[k]);
    }
    return mt_finish();
}
