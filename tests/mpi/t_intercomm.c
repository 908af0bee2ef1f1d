/* t_intercomm.c: intercommunicators.  MPI_COMM_WORLD is split into even and
 * odd ranks, joined with MPI_Intercomm_create; point-to-point across it
 * addresses remote-group ranks (status MPI_SOURCE is a remote rank), with
 * wildcard and specific receives, small and 1 MiB; an intercommunicator
 * broadcast; then MPI_Intercomm_merge and traffic on the merged comm. */
#include "mpitest.h"

/* one tag per round: a fast peer's next round must not meet a wildcard */
enum { TAG_MK = 77, TAG_A = 1, TAG_B = 2, TAG_C = 3, TAG_D = 4, TAG_M = 5 };
enum { BIG = 1 << 20 };

struct inter {
    int color, lrank, lsize, rsize;
    MPI_Comm local, comm;
};

/* Pattern id of local rank l of group color (distinct across groups). */
static int pid(int color, int l) { return color * 1000 + l; }

static struct inter make_inter(void)
{
    struct inter x;
    int flag = 0, remote_leader;
    x.color = mt_rank() % 2;
    MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, x.color, mt_rank(), &x.local));
    MT_CHECK(MPI_Comm_rank(x.local, &x.lrank));
    MT_CHECK(MPI_Comm_size(x.local, &x.lsize));
    remote_leader = x.color == 0 ? 1 : 0; /* world rank of the other leader */
    MT_CHECK(MPI_Intercomm_create(x.local, 0, MPI_COMM_WORLD, remote_leader,
                                  TAG_MK, &x.comm));
    MT_CHECK(MPI_Comm_test_inter(x.comm, &flag));
    MT_CHECK(MPI_Comm_remote_size(x.comm, &x.rsize));
    mt_expect(MT_HERE, flag && x.lsize == (mt_size() + 1 - x.color) / 2 &&
              x.rsize == mt_size() - x.lsize && x.lrank == mt_rank() / 2,
              "intercomm: inter %d local %d/%d remote size %d", flag,
              x.lrank, x.lsize, x.rsize);
    return x;
}

/* Every rank sends n bytes to every remote rank; receives use
 * MPI_ANY_SOURCE (wild) or each remote rank in turn. */
static void all_to_remote(const struct inter *x, size_t n, int wild,
                          int tag, unsigned char *sb, unsigned char *rb)
{
    MPI_Request *req = mt_malloc(sizeof *req * (size_t)x->rsize);
    unsigned char *seen = mt_malloc((size_t)x->rsize);
    memset(seen, 0, (size_t)x->rsize);
    for (int j = 0; j < x->rsize; j++) {
        mt_fill(sb + (size_t)j * n, n, pid(x->color, x->lrank), j);
        MT_CHECK(MPI_Isend(sb + (size_t)j * n, (int)n, MPI_BYTE, j, tag,
                           x->comm, &req[j]));
    }
    for (int j = 0; j < x->rsize; j++) {
        MPI_Status st;
        int src;
        MT_CHECK(MPI_Recv(rb, (int)n, MPI_BYTE, wild ? MPI_ANY_SOURCE : j,
                          tag, x->comm, &st));
        src = st.MPI_SOURCE;
        mt_expect(MT_HERE, src >= 0 && src < x->rsize && !seen[src] &&
                  (wild || src == j), "intercomm recv: source %d (remote "
                  "size %d)", src, x->rsize);
        seen[src] = 1;
        mt_expect_status(MT_HERE, &st, src, tag, MPI_BYTE, (int)n);
        /* the remote rank src sent us (our local rank) its pattern */
        mt_verify(MT_HERE, rb, n, pid(1 - x->color, src), x->lrank,
                  "intercomm payload");
    }
    MT_CHECK(MPI_Waitall(x->rsize, req, MPI_STATUSES_IGNORE));
    free(req);
    free(seen);
}

/* Group 0's leader broadcasts to every rank of group 1. */
static void inter_bcast(const struct inter *x, size_t n, unsigned char *b)
{
    int root;
    if (x->color == 0)
        root = x->lrank == 0 ? MPI_ROOT : MPI_PROC_NULL;
    else
        root = 0;
    if (root == MPI_ROOT)
        mt_fill(b, n, 4242, (int)n);
    MT_CHECK(MPI_Bcast(b, (int)n, MPI_BYTE, root, x->comm));
    if (x->color == 1)
        mt_verify(MT_HERE, b, n, 4242, (int)n, "intercomm Bcast");
}

static void merged(const struct inter *x, unsigned char *sb,
                   unsigned char *rb)
{
    MPI_Comm m;
    MPI_Status st;
    int mr, ms, sum = 0, want, n = 4096;
    MT_CHECK(MPI_Intercomm_merge(x->comm, x->color, &m)); /* evens first */
    MT_CHECK(MPI_Comm_rank(m, &mr));
    MT_CHECK(MPI_Comm_size(m, &ms));
    want = x->color == 0 ? x->lrank : x->rsize + x->lrank;
    mt_expect(MT_HERE, ms == mt_size() && mr == want,
              "merged rank %d/%d, want %d/%d", mr, ms, want, mt_size());
    mt_fill(sb, (size_t)n, mr, 9);
    MT_CHECK(MPI_Sendrecv(sb, n, MPI_BYTE, (mr + 1) % ms, TAG_M, rb, n,
                          MPI_BYTE, MPI_ANY_SOURCE, TAG_M, m, &st));
    mt_expect_status(MT_HERE, &st, (mr + ms - 1) % ms, TAG_M, MPI_BYTE, n);
    mt_verify(MT_HERE, rb, (size_t)n, (mr + ms - 1) % ms, 9, "merged ring");
    MT_CHECK(MPI_Allreduce(&mt_st()->rank, &sum, 1, MPI_INT, MPI_SUM, m));
    mt_expect(MT_HERE, sum == ms * (ms - 1) / 2, "merged Allreduce %d", sum);
    MT_CHECK(MPI_Comm_free(&m));
}

int main(int argc, char **argv)
{
    struct inter x;
    unsigned char *sb, *rb;
    mt_init(&argc, &argv, "t_intercomm");
    x = make_inter();
    sb = mt_malloc((size_t)x.rsize * BIG);
    rb = mt_malloc(BIG);
    all_to_remote(&x, 64, 1, TAG_A, sb, rb);
    all_to_remote(&x, 64, 0, TAG_B, sb, rb);
    all_to_remote(&x, BIG, 1, TAG_C, sb, rb);
    all_to_remote(&x, BIG, 0, TAG_D, sb, rb);
    inter_bcast(&x, 4096, rb);
    inter_bcast(&x, BIG, rb);
    merged(&x, sb, rb);
    MT_CHECK(MPI_Comm_free(&x.comm));
    MT_CHECK(MPI_Comm_free(&x.local));
    free(sb);
    free(rb);
    return mt_finish();
}
