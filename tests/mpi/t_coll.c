/* t_coll.c: Open MPI's collective components run over the PML; every
 * collective is checked against locally computed results, with rotating
 * roots and small and large (eager and rendezvous) sizes:
 * Barrier, Bcast, Reduce, Allreduce, Gather(v), Scatter(v), Allgather(v),
 * Alltoall(v), Reduce_scatter(_block), Scan, Exscan, and the nonblocking
 * Ibarrier (must not complete before every rank entered), Iallreduce and
 * Ibcast. */
#include "mpitest.h"

enum { BIGB = 4 << 20, BIGI = 256 * 1024 };

/* Small exact values: sums over many ranks stay far from overflow. */
static int v(int r, int it, int i) { return (r + 1) * 131 + it * 7 + i % 4093; }

static void bcasts(unsigned char *b)
{
    for (int root = 0; root < mt_size(); root++) {
        int x[10];
        for (int i = 0; i < 10; i++)
            x[i] = mt_rank() == root ? v(root, 1, i) : -1;
        MT_CHECK(MPI_Bcast(x, 10, MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < 10; i++)
            mt_expect(MT_HERE, x[i] == v(root, 1, i), "Bcast small [%d]", i);
        if (mt_rank() == root)
            mt_fill(b, BIGB, root, 2);
        else
            memset(b, 0, BIGB);
        MT_CHECK(MPI_Bcast(b, BIGB, MPI_BYTE, root, MPI_COMM_WORLD));
        mt_verify(MT_HERE, b, BIGB, root, 2, "Bcast 4 MiB");
    }
}

static void reductions(int *a, int *r)
{
    int n = mt_size(), me = mt_rank();
    const int counts[2] = { 1, BIGI };
    for (int c = 0; c < 2; c++) {
        int cnt = counts[c], root = c % n;
        for (int i = 0; i < cnt; i++)
            a[i] = v(me, 3, i);
        MT_CHECK(MPI_Reduce(a, r, cnt, MPI_INT, MPI_SUM, root,
                            MPI_COMM_WORLD));
        for (int i = 0; i < cnt && me == root; i++) {
            int want = 0;
            for (int q = 0; q < n; q++)
                want += v(q, 3, i);
            mt_expect(MT_HERE, r[i] == want, "Reduce[%d] %d != %d", i, r[i],
                      want);
        }
        MT_CHECK(MPI_Allreduce(a, r, cnt, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        for (int i = 0; i < cnt; i++)
            mt_expect(MT_HERE, r[i] == v(n - 1, 3, i), "Allreduce max[%d]",
                      i);
        MT_CHECK(MPI_Allreduce(MPI_IN_PLACE, a, cnt, MPI_INT, MPI_SUM,
                               MPI_COMM_WORLD));
        for (int i = 0; i < cnt; i++) {
            int want = 0;
            for (int q = 0; q < n; q++)
                want += v(q, 3, i);
            mt_expect(MT_HERE, a[i] == want, "Allreduce sum[%d]", i);
        }
    }
}

/* v-collective layout: rank q has (q+1)*k ints at dis[q], with a one-int
 * gap between contributions that must stay untouched. */
struct vlay {
    int *cnt, *dis, total;
};

static struct vlay vlay_make(int k)
{
    int n = mt_size();
    struct vlay l = { mt_malloc(sizeof(int) * (size_t)n),
                      mt_malloc(sizeof(int) * (size_t)n), 0 };
    for (int q = 0; q < n; q++) {
        l.cnt[q] = (q + 1) * k;
        l.dis[q] = l.total;
        l.total += l.cnt[q] + 1;
    }
    return l;
}

static void vlay_free(struct vlay *l)
{
    free(l->cnt);
    free(l->dis);
}

/* r holds every rank's contribution v(q, it, .) at dis[q], gaps are -1. */
static void vlay_check(mt_loc at, const struct vlay *l, const int *r, int it,
                       const char *what)
{
    for (int q = 0; q < mt_size(); q++) {
        for (int i = 0; i < l->cnt[q]; i++)
            mt_expect(at, r[l->dis[q] + i] == v(q, it, i), "%s: rank %d "
                      "element %d", what, q, i);
        mt_expect(at, r[l->dis[q] + l->cnt[q]] == -1, "%s: gap written",
                  what);
    }
}

static void fill_ints(int *a, int n, int val)
{
    for (int i = 0; i < n; i++)
        a[i] = val;
}

static void gathers(int *a, int *r, int k)
{
    int n = mt_size(), me = mt_rank();
    struct vlay l = vlay_make(k);
    for (int i = 0; i < l.cnt[me]; i++)
        a[i] = v(me, 4, i);
    for (int root = 0; root < n; root++) {
        MT_CHECK(MPI_Gather(a, k, MPI_INT, r, k, MPI_INT, root,
                            MPI_COMM_WORLD));
        for (int q = 0; q < n && me == root; q++)
            for (int i = 0; i < k; i++)
                mt_expect(MT_HERE, r[q * k + i] == v(q, 4, i), "Gather");
        fill_ints(r, l.total, -1);
        MT_CHECK(MPI_Gatherv(a, l.cnt[me], MPI_INT, r, l.cnt, l.dis, MPI_INT,
                             root, MPI_COMM_WORLD));
        if (me == root)
            vlay_check(MT_HERE, &l, r, 4, "Gatherv");
    }
    fill_ints(r, l.total, -1);
    MT_CHECK(MPI_Allgather(a, k, MPI_INT, r, k, MPI_INT, MPI_COMM_WORLD));
    for (int q = 0; q < n; q++)
        for (int i = 0; i < k; i++)
            mt_expect(MT_HERE, r[q * k + i] == v(q, 4, i), "Allgather");
    fill_ints(r, l.total, -1);
    MT_CHECK(MPI_Allgatherv(a, l.cnt[me], MPI_INT, r, l.cnt, l.dis, MPI_INT,
                            MPI_COMM_WORLD));
    vlay_check(MT_HERE, &l, r, 4, "Allgatherv");
    vlay_free(&l);
}

static void scatters(int *a, int *r, int k)
{
    int n = mt_size(), me = mt_rank();
    struct vlay l = vlay_make(k);
    for (int root = 0; root < n; root++) {
        for (int q = 0; q < n && me == root; q++)
            for (int i = 0; i < k; i++)
                a[q * k + i] = v(q, 5, i);
        MT_CHECK(MPI_Scatter(a, k, MPI_INT, r, k, MPI_INT, root,
                             MPI_COMM_WORLD));
        for (int i = 0; i < k; i++)
            mt_expect(MT_HERE, r[i] == v(me, 5, i), "Scatter[%d]", i);
        for (int q = 0; q < n && me == root; q++)
            for (int i = 0; i < l.cnt[q]; i++)
                a[l.dis[q] + i] = v(q, 6, i);
        fill_ints(r, l.cnt[me] + 1, -1);
        MT_CHECK(MPI_Scatterv(a, l.cnt, l.dis, MPI_INT, r, l.cnt[me],
                              MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < l.cnt[me]; i++)
            mt_expect(MT_HERE, r[i] == v(me, 6, i), "Scatterv[%d]", i);
        mt_expect(MT_HERE, r[l.cnt[me]] == -1, "Scatterv overflow");
    }
    vlay_free(&l);
}

/* What rank `from` sends to rank `to` in the all-to-all tests. */
static int a2a(int from, int to, int i) { return v(from * 4096 + to, 8, i); }

static void alltoalls(int *a, int *r, int k)
{
    int n = mt_size(), me = mt_rank();
    int *sc = mt_malloc(sizeof(int) * 4 * (size_t)n), *sd = sc + n,
        *rc = sc + 2 * n, *rd = sc + 3 * n;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < k; i++)
            a[j * k + i] = a2a(me, j, i);
    MT_CHECK(MPI_Alltoall(a, k, MPI_INT, r, k, MPI_INT, MPI_COMM_WORLD));
    for (int q = 0; q < n; q++)
        for (int i = 0; i < k; i++)
            mt_expect(MT_HERE, r[q * k + i] == a2a(q, me, i), "Alltoall");
    /* v variant: me -> j carries ((me + j) % 3 + 1) * k / 4 ints */
    for (int j = 0, so = 0, ro = 0; j < n; j++) {
        sc[j] = ((me + j) % 3 + 1) * (k / 4);
        rc[j] = ((j + me) % 3 + 1) * (k / 4);
        sd[j] = so, rd[j] = ro;
        so += sc[j] + 1, ro += rc[j] + 1;
        for (int i = 0; i < sc[j]; i++)
            a[sd[j] + i] = a2a(me, j, i);
        fill_ints(r + rd[j], rc[j] + 1, -1);
    }
    MT_CHECK(MPI_Alltoallv(a, sc, sd, MPI_INT, r, rc, rd, MPI_INT,
                           MPI_COMM_WORLD));
    for (int q = 0; q < n; q++) {
        for (int i = 0; i < rc[q]; i++)
            mt_expect(MT_HERE, r[rd[q] + i] == a2a(q, me, i), "Alltoallv");
        mt_expect(MT_HERE, r[rd[q] + rc[q]] == -1, "Alltoallv gap");
    }
    free(sc);
}

static int sum_upto(int last, int it, int i)
{
    int s = 0;
    for (int q = 0; q <= last; q++)
        s += v(q, it, i);
    return s;
}

static void reduce_scatters_scans(int *a, int *r, int k)
{
    int n = mt_size(), me = mt_rank(), off = 0;
    struct vlay l = vlay_make(k);
    for (int q = 0; q < me; q++)
        off += l.cnt[q];
    for (int i = 0; i < k * n * (n + 1) / 2; i++)
        a[i] = v(me, 9, i);
    MT_CHECK(MPI_Reduce_scatter(a, r, l.cnt, MPI_INT, MPI_SUM,
                                MPI_COMM_WORLD));
    for (int i = 0; i < l.cnt[me]; i++)
        mt_expect(MT_HERE, r[i] == sum_upto(n - 1, 9, off + i),
                  "Reduce_scatter[%d]", i);
    MT_CHECK(MPI_Reduce_scatter_block(a, r, k, MPI_INT, MPI_SUM,
                                      MPI_COMM_WORLD));
    for (int i = 0; i < k; i++)
        mt_expect(MT_HERE, r[i] == sum_upto(n - 1, 9, me * k + i),
                  "Reduce_scatter_block[%d]", i);
    MT_CHECK(MPI_Scan(a, r, k, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < k; i++)
        mt_expect(MT_HERE, r[i] == sum_upto(me, 9, i), "Scan[%d]", i);
    MT_CHECK(MPI_Exscan(a, r, k, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < k && me > 0; i++) /* undefined on rank 0 */
        mt_expect(MT_HERE, r[i] == sum_upto(me - 1, 9, i), "Exscan[%d]", i);
    vlay_free(&l);
}

/* Rank 0 enters the Ibarrier while the others wait for its "go": until
 * then the Ibarrier cannot complete. */
static void ibarrier_semantics(void)
{
    MPI_Request req;
    int done = 0;
    if (mt_rank() == 0) {
        MT_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
        for (int k = 0; k < 200 && !done; k++)
            MT_CHECK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
        mt_expect(MT_HERE, !done, "Ibarrier completed with ranks missing");
        for (int q = 1; q < mt_size(); q++)
            MT_CHECK(MPI_Send(NULL, 0, MPI_BYTE, q, 99, MPI_COMM_WORLD));
    } else {
        MT_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 99, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
        MT_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
    }
    MT_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
}

/* Ibcast (4 MiB) and Iallreduce outstanding together. */
static void nonblocking_colls(unsigned char *b, int *a, int *r)
{
    MPI_Request req[2];
    int n = mt_size(), root = n - 1;
    if (mt_rank() == root)
        mt_fill(b, BIGB, root, 12);
    for (int i = 0; i < BIGI; i++)
        a[i] = v(mt_rank(), 13, i);
    MT_CHECK(MPI_Ibcast(b, BIGB, MPI_BYTE, root, MPI_COMM_WORLD, &req[0]));
    MT_CHECK(MPI_Iallreduce(a, r, BIGI, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                            &req[1]));
    MT_CHECK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    mt_verify(MT_HERE, b, BIGB, root, 12, "Ibcast");
    for (int i = 0; i < BIGI; i++)
        mt_expect(MT_HERE, r[i] == sum_upto(n - 1, 13, i), "Iallreduce");
}

int main(int argc, char **argv)
{
    unsigned char *b;
    int *a, *r, n, words;
    mt_init(&argc, &argv, "t_coll");
    n = mt_size();
    /* room for the largest layout: k = 16384 ints per block (64 KiB) */
    words = 16384 * n * (n + 1) / 2 + 2 * n + BIGI;
    a = mt_malloc(sizeof(int) * (size_t)words);
    r = mt_malloc(sizeof(int) * (size_t)words);
    b = mt_malloc(BIGB);
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    bcasts(b);
    reductions(a, r);
    for (int k = 4; k <= 16384; k *= 64) {
        gathers(a, r, k);
        scatters(a, r, k);
        alltoalls(a, r, k);
        reduce_scatters_scans(a, r, k);
    }
    ibarrier_semantics();
    nonblocking_colls(b, a, r);
    free(a), free(r), free(b);
    return mt_finish();
}
