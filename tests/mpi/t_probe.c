/* t_probe.c: MPI_Probe/Iprobe and matched probes (Mprobe/Improbe with
 * Mrecv/Imrecv).  Probes must report the right source, tag and count before
 * anything is received, must not consume the message (plain probes) or must
 * take it out of matching (matched probes), and must preserve per-source
 * order. */
#include "mpitest.h"

static const size_t psizes[] = { 0, 1, 8, 1024, 65536, 1 << 20, 12,
                                 4 << 20 };
enum { NP = sizeof psizes / sizeof psizes[0], MAXSZ = 4 << 20 };
enum { TAG_RING = 10, TAG_NEVER = 99, TAG_M = 200, TAG_I = 300,
       TAG_ONE = 400 };

static size_t size_of(int src, int j) { return psizes[(j + src) % NP]; }

/* Expected count in units of dt (MPI_UNDEFINED if not a whole number). */
static int count_in(size_t n, int unit)
{
    return n % (size_t)unit ? MPI_UNDEFINED : (int)(n / (size_t)unit);
}

static void expect_probe_status(mt_loc at, const MPI_Status *st, int src,
                                int tag, size_t n)
{
    int c = -2;
    mt_expect_status(at, st, src, tag, MPI_BYTE, (int)n);
    MT_CHECK(MPI_Get_count(st, MPI_INT, &c));
    mt_expect(at, c == count_in(n, (int)sizeof(int)),
              "Get_count(MPI_INT) = %d for %zu bytes", c, n);
}

/* Each rank sends NP messages to its right neighbour; the receiver probes
 * each one (blocking specific, then nonblocking wildcard) before receiving
 * it with the probed count. */
static void probe_ring(unsigned char *sbufs[NP], unsigned char *rbuf)
{
    MPI_Request req[NP];
    MPI_Status st, st2;
    int flag = 1, l = mt_left();

    MT_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, TAG_NEVER, MPI_COMM_WORLD, &flag,
                        &st));
    mt_expect(MT_HERE, !flag, "Iprobe found a message that was never sent");
    for (int k = 0; k < NP; k++) {
        mt_fill(sbufs[k], psizes[k], mt_rank(), k);
        MT_CHECK(MPI_Isend(sbufs[k], (int)psizes[k], MPI_BYTE, mt_right(),
                           TAG_RING + k, MPI_COMM_WORLD, &req[k]));
    }
    for (int k = 0; k < NP; k++) {
        int n;
        if (k % 2 == 0) {
            MT_CHECK(MPI_Probe(l, TAG_RING + k, MPI_COMM_WORLD, &st));
            MT_CHECK(MPI_Probe(MPI_ANY_SOURCE, TAG_RING + k, MPI_COMM_WORLD,
                               &st2)); /* still there */
            expect_probe_status(MT_HERE, &st2, l, TAG_RING + k, psizes[k]);
        } else {
            /* earliest unreceived message from left is k: non-overtaking */
            double end = mt_now() + 20.0;
            for (flag = 0; !flag; ) {
                MT_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG,
                                    MPI_COMM_WORLD, &flag, &st));
                mt_expect(MT_HERE, flag || mt_now() < end, "Iprobe timeout");
            }
        }
        expect_probe_status(MT_HERE, &st, l, TAG_RING + k, psizes[k]);
        MT_CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
        MT_CHECK(MPI_Recv(rbuf, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG,
                          MPI_COMM_WORLD, &st2));
        mt_expect_status(MT_HERE, &st2, l, TAG_RING + k, MPI_BYTE, n);
        mt_verify(MT_HERE, rbuf, (size_t)n, l, k, "probed message");
    }
    MT_CHECK(MPI_Waitall(NP, req, MPI_STATUSES_IGNORE));
}

/* Every rank, root included (send to self), sends NP messages with tag
 * base to root; returns the requests to wait on. */
static void send_to_root(int root, int base, unsigned char *sbufs[NP],
                         MPI_Request req[NP])
{
    for (int j = 0; j < NP; j++) {
        size_t n = size_of(mt_rank(), j);
        mt_fill(sbufs[j], n, mt_rank(), base + j);
        MT_CHECK(MPI_Isend(sbufs[j], (int)n, MPI_BYTE, root, base,
                           MPI_COMM_WORLD, &req[j]));
    }
}

/* Root takes all messages with Mprobe(ANY_SOURCE, ANY_TAG) + Mrecv. */
static void mprobe_collect(int root, unsigned char *sbufs[NP],
                           unsigned char *rbuf)
{
    MPI_Request req[NP];
    send_to_root(root, TAG_M, sbufs, req);
    if (mt_rank() == root) {
        int *next = mt_zalloc(sizeof(int) * (size_t)mt_size());
        for (int m = 0; m < NP * mt_size(); m++) {
            MPI_Message msg;
            MPI_Status st;
            int src, j;
            MT_CHECK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                                &msg, &st));
            src = st.MPI_SOURCE;
            mt_expect(MT_HERE, src >= 0 && src < mt_size() && next[src] < NP,
                      "Mprobe: unexpected source %d", src);
            j = next[src]++;
            expect_probe_status(MT_HERE, &st, src, TAG_M, size_of(src, j));
            MT_CHECK(MPI_Mrecv(rbuf, MAXSZ, MPI_BYTE, &msg, &st));
            mt_expect(MT_HERE, msg == MPI_MESSAGE_NULL, "msg not reset");
            mt_expect_status(MT_HERE, &st, src, TAG_M, MPI_BYTE,
                             (int)size_of(src, j));
            mt_verify(MT_HERE, rbuf, size_of(src, j), src, TAG_M + j,
                      "Mrecv");
        }
        free(next);
    }
    MT_CHECK(MPI_Waitall(NP, req, MPI_STATUSES_IGNORE));
}

/* Root matches all messages with Improbe(ANY_SOURCE, ANY_TAG) first, starts an
 * Imrecv for each as soon as it is matched, and only then waits. */
static void improbe_collect(int root, unsigned char *sbufs[NP])
{
    MPI_Request sreq[NP];
    send_to_root(root, TAG_I, sbufs, sreq);
    if (mt_rank() == root) {
        int total = NP * mt_size(), got = 0;
        int *next = mt_zalloc(sizeof(int) * (size_t)mt_size());
        int *src_of = mt_malloc(sizeof(int) * (size_t)total);
        int *j_of = mt_malloc(sizeof(int) * (size_t)total);
        unsigned char **rb = mt_malloc(sizeof(void *) * (size_t)total);
        MPI_Request *rreq = mt_malloc(sizeof(MPI_Request) * (size_t)total);
        MPI_Status *rst = mt_malloc(sizeof(MPI_Status) * (size_t)total);
        double end = mt_now() + 30.0;
        while (got < total) {
            MPI_Message msg;
            MPI_Status st;
            int flag = 0, cnt;
            MT_CHECK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                                 &flag, &msg, &st));
            mt_expect(MT_HERE, flag || mt_now() < end, "Improbe: %d of %d",
                      got, total);
            if (!flag)
                continue;
            src_of[got] = st.MPI_SOURCE;
            mt_expect(MT_HERE, st.MPI_SOURCE >= 0 && st.MPI_SOURCE <
                      mt_size() && next[st.MPI_SOURCE] < NP, "bad source");
            j_of[got] = next[st.MPI_SOURCE]++;
            expect_probe_status(MT_HERE, &st, src_of[got], TAG_I,
                                size_of(src_of[got], j_of[got]));
            MT_CHECK(MPI_Get_count(&st, MPI_BYTE, &cnt));
            rb[got] = mt_malloc((size_t)cnt);
            MT_CHECK(MPI_Imrecv(rb[got], cnt, MPI_BYTE, &msg, &rreq[got]));
            got++;
        }
        MT_CHECK(MPI_Waitall(total, rreq, rst));
        for (int m = 0; m < total; m++) {
            size_t n = size_of(src_of[m], j_of[m]);
            mt_expect_status(MT_HERE, &rst[m], src_of[m], TAG_I, MPI_BYTE,
                             (int)n);
            mt_verify(MT_HERE, rb[m], n, src_of[m], TAG_I + j_of[m],
                      "Imrecv");
            free(rb[m]);
        }
        free(src_of), free(j_of), free(rb), free(rreq), free(rst), free(next);
    }
    MT_CHECK(MPI_Waitall(NP, sreq, MPI_STATUSES_IGNORE));
}

/* A matched probe takes the message out of matching: neither Iprobe nor
 * Improbe may see it again, yet Mrecv still delivers it. */
static void mprobe_removes(unsigned char *buf)
{
    MPI_Message msg, msg2;
    MPI_Status st;
    int flag = 1, l = mt_left();
    mt_fill(buf, 64, mt_rank(), TAG_ONE);
    MT_CHECK(MPI_Send(buf, 64, MPI_BYTE, mt_right(), TAG_ONE,
                      MPI_COMM_WORLD));
    MT_CHECK(MPI_Mprobe(l, TAG_ONE, MPI_COMM_WORLD, &msg, &st));
    mt_expect_status(MT_HERE, &st, l, TAG_ONE, MPI_BYTE, 64);
    MT_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, TAG_ONE, MPI_COMM_WORLD, &flag, &st));
    mt_expect(MT_HERE, !flag, "Iprobe saw a message already Mprobed");
    MT_CHECK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                         &msg2, &st));
    mt_expect(MT_HERE, !flag, "Improbe matched a message twice");
    memset(buf, 0, 64);
    MT_CHECK(MPI_Mrecv(buf, 64, MPI_BYTE, &msg, &st));
    mt_verify(MT_HERE, buf, 64, l, TAG_ONE, "Mrecv after Iprobe");
}

/* Probes of MPI_PROC_NULL return at once with the empty, no-proc answers. */
static void probe_proc_null(void)
{
    MPI_Message msg;
    MPI_Status st;
    int flag = 0, c = -1;
    MT_CHECK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    mt_expect(MT_HERE, msg == MPI_MESSAGE_NO_PROC, "Mprobe(PROC_NULL)");
    MT_CHECK(MPI_Mrecv(NULL, 0, MPI_BYTE, &msg, &st));
    MT_CHECK(MPI_Get_count(&st, MPI_BYTE, &c));
    mt_expect(MT_HERE, st.MPI_SOURCE == MPI_PROC_NULL &&
              st.MPI_TAG == MPI_ANY_TAG && c == 0, "Mrecv(NO_PROC) status");
    MT_CHECK(MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &msg, &st));
    mt_expect(MT_HERE, flag && msg == MPI_MESSAGE_NO_PROC,
              "Improbe(PROC_NULL)");
    MT_CHECK(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    mt_expect(MT_HERE, st.MPI_SOURCE == MPI_PROC_NULL, "Probe(PROC_NULL)");
}

int main(int argc, char **argv)
{
    unsigned char *sbufs[NP], *rbuf;
    mt_init(&argc, &argv, "t_probe");
    for (int k = 0; k < NP; k++)
        sbufs[k] = mt_malloc(MAXSZ);
    rbuf = mt_malloc(MAXSZ);

    /* the barriers keep a later phase's messages out of a wildcard probe */
    probe_ring(sbufs, rbuf);
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int root = 0; root < mt_size(); root++) {
        mprobe_collect(root, sbufs, rbuf);
        MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        improbe_collect(root, sbufs);
        MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    mprobe_removes(rbuf);
    probe_proc_null();

    for (int k = 0; k < NP; k++)
        free(sbufs[k]);
    free(rbuf);
    return mt_finish();
}
