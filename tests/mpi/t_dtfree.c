/* t_dtfree.c: a datatype freed while operations using it are pending.
 * MPI_Type_free only marks the type; it lives on until the pending
 * operations complete (MPI-4.0 5.1.10), so data must still land in its
 * layout.  Each case frees the type right after starting the operation,
 * then creates and frees other types and churns the heap so that freed
 * memory is reused, and only then lets the peer act:
 *   - a posted receive with a vector type (eager and rendezvous sizes);
 *   - a nonblocking send with a vector type, received later;
 *   - persistent send and receive requests started three times;
 *   - MPI_Ibcast with a vector type on every rank.
 * Rank 0 and rank 1 exchange; the others take part in the broadcasts.
 */
#include "mpitest.h"

enum { SENTINEL = -7, TAG_GO = 60, TAG_DATA = 61, ROUNDS = 3 };

/* A strided layout: block b of bl ints at b * stride. */
struct vec {
    int count, bl, stride;
};

static size_t vec_nelem(struct vec v) { return (size_t)v.count * (size_t)v.bl; }
static size_t vec_span(struct vec v)
{
    return (size_t)(v.count - 1) * (size_t)v.stride + (size_t)v.bl;
}
static size_t vec_off(struct vec v, size_t i)
{
    return (i / (size_t)v.bl) * (size_t)v.stride + i % (size_t)v.bl;
}

static MPI_Datatype vec_type(struct vec v)
{
    MPI_Datatype t;
    MT_CHECK(MPI_Type_vector(v.count, v.bl, v.stride, MPI_INT, &t));
    MT_CHECK(MPI_Type_commit(&t));
    return t;
}

static int value(int iter, size_t i) { return (int)(i * 7 + 1) + iter * 1000003; }

/* Creates, uses and frees other datatypes and heap blocks, so that memory
 * a freed type released is likely to be handed out again. */
static void churn(void)
{
    enum { N = 64 };
    MPI_Datatype t[N];
    void *p[N];
    for (int i = 0; i < N; i++) {
        int bl[3] = { 1 + i % 5, 2, 3 }, dis[3] = { 0, 11 + i, 29 + 2 * i };
        MT_CHECK(MPI_Type_indexed(3, bl, dis, MPI_DOUBLE, &t[i]));
        MT_CHECK(MPI_Type_commit(&t[i]));
        p[i] = mt_malloc((size_t)(32 + 48 * (i % 8)));
        memset(p[i], 0x5a, (size_t)(32 + 48 * (i % 8)));
    }
    for (int i = 0; i < N; i++) {
        MT_CHECK(MPI_Type_free(&t[i]));
        free(p[i]);
    }
}

/* buf (span ints) must hold value(iter, i) at each element offset and the
 * sentinel everywhere else. */
static void verify_vec(mt_loc at, const int *buf, struct vec v, int iter, const char *what)
{
    size_t span = vec_span(v), e = 0;
    for (size_t k = 0; k < span; k++) {
        int want = SENTINEL;
        if (e < vec_nelem(v) && vec_off(v, e) == k)
            want = value(iter, e++);
        mt_expect(at, buf[k] == want, "%s: int %zu is %d, want %d", what, k, buf[k], want);
    }
}

static void verify_contig(mt_loc at, const int *buf, size_t n, int iter, const char *what)
{
    for (size_t i = 0; i < n; i++)
        mt_expect(at, buf[i] == value(iter, i), "%s: int %zu is %d, want %d", what, i,
                  buf[i], value(iter, i));
}

static int *vec_buf(struct vec v, int iter, int fill)
{
    int *b = mt_malloc(vec_span(v) * sizeof(int));
    for (size_t k = 0; k < vec_span(v); k++)
        b[k] = SENTINEL;
    if (fill)
        for (size_t i = 0; i < vec_nelem(v); i++)
            b[vec_off(v, i)] = value(iter, i);
    return b;
}

static void go(int to) { MT_CHECK(MPI_Send(NULL, 0, MPI_INT, to, TAG_GO, MPI_COMM_WORLD)); }
static void wait_go(int from)
{
    MT_CHECK(MPI_Recv(NULL, 0, MPI_INT, from, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

/* The plain side of a case: after the peer's go, sends n ints of iteration
 * iter, or receives them (once more churned) and checks them. */
static void plain_side(int peer, int send, size_t n, int iter, const char *what)
{
    int *b = mt_malloc(n * sizeof(int));

    wait_go(peer);
    if (send) {
        for (size_t i = 0; i < n; i++)
            b[i] = value(iter, i);
        MT_CHECK(MPI_Send(b, (int)n, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD));
    } else {
        churn();
        MT_CHECK(MPI_Recv(b, (int)n, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
        verify_contig(MT_HERE, b, n, iter, what);
    }
    free(b);
}

/* Rank 1 posts a receive with a vector type and frees the type. */
static void posted_recv(struct vec v, const char *what)
{
    if (mt_rank() == 1) {
        MPI_Datatype t = vec_type(v);
        MPI_Request r;
        int *buf = vec_buf(v, 0, 0);
        MT_CHECK(MPI_Irecv(buf, 1, t, 0, TAG_DATA, MPI_COMM_WORLD, &r));
        MT_CHECK(MPI_Type_free(&t));
        churn();
        go(0);
        MT_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        verify_vec(MT_HERE, buf, v, 0, what);
        free(buf);
    } else if (mt_rank() == 0) {
        plain_side(1, 1, vec_nelem(v), 0, what);
    }
}

/* Rank 0 sends with a vector type and frees it; rank 1 receives later. */
static void pending_send(struct vec v, const char *what)
{
    if (mt_rank() == 0) {
        MPI_Datatype t = vec_type(v);
        MPI_Request r;
        int *buf = vec_buf(v, 1, 1);
        MT_CHECK(MPI_Isend(buf, 1, t, 1, TAG_DATA, MPI_COMM_WORLD, &r));
        MT_CHECK(MPI_Type_free(&t));
        churn();
        go(1);
        MT_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        free(buf);
    } else if (mt_rank() == 1) {
        plain_side(0, 0, vec_nelem(v), 1, what);
    }
}

/* Persistent requests whose types are freed before the first start. */
static void persistent(struct vec v, const char *what)
{
    MPI_Datatype t;
    MPI_Request r;
    int *buf;
    if (mt_rank() > 1)
        return;
    t = vec_type(v);
    buf = vec_buf(v, 0, 0);
    if (mt_rank() == 0)
        MT_CHECK(MPI_Send_init(buf, 1, t, 1, TAG_DATA, MPI_COMM_WORLD, &r));
    else
        MT_CHECK(MPI_Recv_init(buf, 1, t, 0, TAG_DATA, MPI_COMM_WORLD, &r));
    MT_CHECK(MPI_Type_free(&t));
    churn();
    for (int iter = 2; iter < 2 + ROUNDS; iter++) {
        for (size_t k = 0; k < vec_span(v); k++)
            buf[k] = SENTINEL;
        if (mt_rank() == 0)
            for (size_t i = 0; i < vec_nelem(v); i++)
                buf[vec_off(v, i)] = value(iter, i);
        MT_CHECK(MPI_Start(&r));
        churn();
        MT_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        if (mt_rank() == 1)
            verify_vec(MT_HERE, buf, v, iter, what);
        MT_CHECK(MPI_Sendrecv(NULL, 0, MPI_INT, 1 - mt_rank(), TAG_GO, NULL, 0, MPI_INT,
                              1 - mt_rank(), TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    MT_CHECK(MPI_Request_free(&r));
    free(buf);
}

/* Every rank frees the type of a pending MPI_Ibcast from rank 0. */
static void ibcast(struct vec v, const char *what)
{
    MPI_Datatype t = vec_type(v);
    MPI_Request r;
    int *buf = vec_buf(v, 9, mt_rank() == 0);
    MT_CHECK(MPI_Ibcast(buf, 1, t, 0, MPI_COMM_WORLD, &r));
    MT_CHECK(MPI_Type_free(&t));
    churn();
    MT_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    verify_vec(MT_HERE, buf, v, 9, what);
    free(buf);
}

int main(int argc, char **argv)
{
    const struct vec small = { 16, 1, 3 };          /* 64 B of data: eager */
    const struct vec large = { 32768, 4, 7 };       /* 512 KiB: rendezvous */

    mt_init(&argc, &argv, "t_dtfree");
    posted_recv(small, "posted receive, small");
    posted_recv(large, "posted receive, large");
    pending_send(small, "pending send, small");
    pending_send(large, "pending send, large");
    persistent(small, "persistent, small");
    persistent(large, "persistent, large");
    ibcast(small, "ibcast, small");
    ibcast(large, "ibcast, large");
    return mt_finish();
}
