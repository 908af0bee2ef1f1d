/* t_datatype.c: non-contiguous datatypes on the wire.
 *   - MPI_Type_vector and MPI_Type_indexed against contiguous MPI_INT and
 *     against each other with different layouts, small and > 1 MiB packed,
 *     blocking and nonblocking: every element lands where the receive type
 *     says and the gaps of the receive buffer are never written;
 *   - a struct type with holes (padding is not transferred nor touched),
 *     also against MPI_Pack/MPI_Unpack with MPI_PACKED on the other side;
 *   - MPI_Get_count / MPI_Get_elements for whole and partial derived types.
 */
#include "mpitest.h"

#include <stddef.h>

enum { SENTINEL = -7, TAG_L = 50, TAG_S = 51, TAG_P = 52, TAG_E = 53 };

/* A typed buffer description: element i of the message (in type-map order)
 * lives at int offset off[i]; the buffer spans span ints. */
struct layout {
    MPI_Datatype type;
    int count;
    size_t nelem, span;
    size_t *off;
};

static struct layout make_contig(size_t n)
{
    struct layout l = { MPI_INT, (int)n, n, n, mt_malloc(n * sizeof(size_t)) };
    for (size_t i = 0; i < n; i++)
        l.off[i] = i;
    return l;
}

static struct layout make_vector(int count, int bl, int stride)
{
    struct layout l = { MPI_DATATYPE_NULL, 1, (size_t)count * (size_t)bl,
                        (size_t)(count - 1) * (size_t)stride + (size_t)bl,
                        NULL };
    l.off = mt_malloc(l.nelem * sizeof(size_t));
    for (size_t i = 0; i < l.nelem; i++)
        l.off[i] = (i / (size_t)bl) * (size_t)stride + i % (size_t)bl;
    MT_CHECK(MPI_Type_vector(count, bl, stride, MPI_INT, &l.type));
    MT_CHECK(MPI_Type_commit(&l.type));
    return l;
}

/* reps consecutive copies of an irregular, non-monotonic indexed type */
static struct layout make_indexed(int reps)
{
    enum { NB = 8, EXT = 80 };
    int bl[NB] = { 3, 1, 4, 1, 5, 9, 2, 6 };
    int dis[NB] = { 40, 0, 10, 70, 20, 50, 5, 30 };
    struct layout l = { MPI_DATATYPE_NULL, reps, 0, (size_t)reps * EXT, NULL };
    MPI_Datatype t;
    size_t per = 0, k = 0;
    for (int b = 0; b < NB; b++)
        per += (size_t)bl[b];
    l.nelem = per * (size_t)reps;
    l.off = mt_malloc(l.nelem * sizeof(size_t));
    for (int r = 0; r < reps; r++)
        for (int b = 0; b < NB; b++)
            for (int j = 0; j < bl[b]; j++)
                l.off[k++] = (size_t)r * EXT + (size_t)dis[b] + (size_t)j;
    MT_CHECK(MPI_Type_indexed(NB, bl, dis, MPI_INT, &t));
    MT_CHECK(MPI_Type_create_resized(t, 0, EXT * (MPI_Aint)sizeof(int),
                                     &l.type));
    MT_CHECK(MPI_Type_commit(&l.type));
    MT_CHECK(MPI_Type_free(&t));
    return l;
}

static void free_layout(struct layout *l)
{
    if (l->type != MPI_INT)
        MT_CHECK(MPI_Type_free(&l->type));
    free(l->off);
}

static void check_layout(const struct layout *s, const struct layout *r,
                         const int *rb, int iter)
{
    unsigned char *hit = calloc(r->span, 1);
    mt_expect(MT_HERE, hit != NULL, "calloc");
    for (size_t i = 0; i < r->nelem; i++) {
        int want = mt_ival(mt_left(), iter, s->off[i]);
        mt_expect(MT_HERE, rb[r->off[i]] == want, "element %zu of %zu "
                  "(at int %zu): got %d want %d", i, r->nelem, r->off[i],
                  rb[r->off[i]], want);
        hit[r->off[i]] = 1;
    }
    for (size_t i = 0; i < r->span; i++)
        mt_expect(MT_HERE, hit[i] || rb[i] == SENTINEL,
                  "gap at int %zu of the receive buffer was written", i);
    free(hit);
}

/* Ring transfer: send layout s to the right, receive layout r from left. */
static void transfer(const struct layout *s, const struct layout *r,
                     int nb, int iter)
{
    int *sb = mt_malloc(s->span * sizeof(int));
    int *rb = mt_malloc(r->span * sizeof(int));
    MPI_Request req[2];
    MPI_Status st;
    int c = -1, e = -1;
    mt_expect(MT_HERE, s->nelem == r->nelem, "layout mismatch");
    for (size_t i = 0; i < s->span; i++)
        sb[i] = mt_ival(mt_rank(), iter, i);
    for (size_t i = 0; i < r->span; i++)
        rb[i] = SENTINEL;
    MT_CHECK(MPI_Irecv(rb, r->count, r->type, mt_left(), TAG_L,
                       MPI_COMM_WORLD, &req[0]));
    if (nb) {
        MT_CHECK(MPI_Isend(sb, s->count, s->type, mt_right(), TAG_L,
                           MPI_COMM_WORLD, &req[1]));
        MT_CHECK(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
    } else {
        MT_CHECK(MPI_Send(sb, s->count, s->type, mt_right(), TAG_L,
                          MPI_COMM_WORLD));
    }
    MT_CHECK(MPI_Wait(&req[0], &st));
    MT_CHECK(MPI_Get_count(&st, r->type, &c));
    MT_CHECK(MPI_Get_elements(&st, r->type, &e));
    mt_expect(MT_HERE, st.MPI_SOURCE == mt_left() && c == r->count &&
              e == (int)r->nelem, "status: source %d count %d elements %d, "
              "want %d/%d/%zu", st.MPI_SOURCE, c, e, mt_left(), r->count,
              r->nelem);
    check_layout(s, r, rb, iter);
    free(sb);
    free(rb);
}

static void all_layout_pairs(void)
{
    /* small, and > 1 MiB packed (70000 * 4 ints, 31 * 10000 ints) */
    const int vcount[2] = { 10, 70000 }, ireps[2] = { 1, 10000 };
    int iter = 0;
    for (int big = 0; big < 2; big++) {
        struct layout v1 = make_vector(vcount[big], 4, 7);
        struct layout v2 = make_vector(vcount[big] * 2, 2, 3);
        struct layout vc = make_contig(v1.nelem);
        struct layout ix = make_indexed(ireps[big]);
        struct layout ic = make_contig(ix.nelem);
        for (int nb = 0; nb < 2; nb++) {
            transfer(&v1, &vc, nb, iter++); /* vector -> contiguous */
            transfer(&vc, &v1, nb, iter++); /* contiguous -> vector */
            transfer(&v1, &v2, nb, iter++); /* vector -> other vector */
            transfer(&ix, &ic, nb, iter++);
            transfer(&ic, &ix, nb, iter++);
        }
        free_layout(&v1), free_layout(&v2), free_layout(&vc);
        free_layout(&ix), free_layout(&ic);
    }
}

/* ---- struct with holes ------------------------------------------------- */

struct rec {
    char c;   /* 7 bytes of padding follow */
    double d;
    int i[3];
    short s;  /* padding at the end */
};

static MPI_Datatype rec_type(void)
{
    int bl[4] = { 1, 1, 3, 1 };
    MPI_Aint dis[4] = { offsetof(struct rec, c), offsetof(struct rec, d),
                        offsetof(struct rec, i), offsetof(struct rec, s) };
    MPI_Datatype ty[4] = { MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_SHORT }, t, r;
    MT_CHECK(MPI_Type_create_struct(4, bl, dis, ty, &t));
    MT_CHECK(MPI_Type_create_resized(t, 0, sizeof(struct rec), &r));
    MT_CHECK(MPI_Type_commit(&r));
    MT_CHECK(MPI_Type_free(&t));
    return r;
}

/* Field values of element k sent by (rank, iter). */
static struct rec rec_want(int rank, int iter, int k)
{
    struct rec r;
    memset(&r, 0x33, sizeof r); /* sender padding: noise */
    r.c = (char)mt_ival(rank, iter, (size_t)k);
    r.d = (double)mt_ival(rank, iter + 1, (size_t)k) / 7.0;
    for (int j = 0; j < 3; j++)
        r.i[j] = mt_ival(rank, iter + 2 + j, (size_t)k);
    r.s = (short)mt_ival(rank, iter + 5, (size_t)k);
    return r;
}

/* Fields equal the sender's; the padding still holds our 0xEE fill. */
static void rec_check(const struct rec *a, int n, int rank, int iter)
{
    const size_t tail = offsetof(struct rec, s) + sizeof(short);
    for (int k = 0; k < n; k++) {
        const unsigned char *p = (const unsigned char *)&a[k];
        struct rec w = rec_want(rank, iter, k);
        mt_expect(MT_HERE, a[k].c == w.c && a[k].d == w.d && a[k].s == w.s &&
                  !memcmp(a[k].i, w.i, sizeof w.i),
                  "struct element %d of %d differs", k, n);
        for (size_t b = 1; b < offsetof(struct rec, d); b++)
            mt_expect(MT_HERE, p[b] == 0xEE, "hole after c written (%d)", k);
        for (size_t b = tail; b < sizeof(struct rec); b++)
            mt_expect(MT_HERE, p[b] == 0xEE, "tail hole written (%d)", k);
    }
}

/* mode 0: struct -> struct; 1: MPI_Pack'ed -> struct; 2: struct ->
 * MPI_PACKED then MPI_Unpack. */
static void struct_transfer(MPI_Datatype rt, int n, int mode, int iter)
{
    struct rec *sa = mt_malloc(sizeof *sa * (size_t)n);
    struct rec *ra = mt_malloc(sizeof *ra * (size_t)n);
    int psize = 0, pos = 0, c = -1, e = -1;
    unsigned char *pk;
    MPI_Request req;
    MPI_Status st;
    MPI_Comm w = MPI_COMM_WORLD;

    for (int k = 0; k < n; k++)
        sa[k] = rec_want(mt_rank(), iter, k);
    memset(ra, 0xEE, sizeof *ra * (size_t)n);
    MT_CHECK(MPI_Pack_size(n, rt, w, &psize));
    pk = mt_malloc((size_t)psize);
    if (mode == 2)
        MT_CHECK(MPI_Irecv(pk, psize, MPI_PACKED, mt_left(), TAG_S, w, &req));
    else
        MT_CHECK(MPI_Irecv(ra, n, rt, mt_left(), TAG_S, w, &req));
    if (mode == 1) {
        MT_CHECK(MPI_Pack(sa, n, rt, pk, psize, &pos, w));
        MT_CHECK(MPI_Send(pk, pos, MPI_PACKED, mt_right(), TAG_S, w));
    } else {
        MT_CHECK(MPI_Send(sa, n, rt, mt_right(), TAG_S, w));
    }
    MT_CHECK(MPI_Wait(&req, &st));
    if (mode == 2) {
        MT_CHECK(MPI_Get_count(&st, MPI_PACKED, &pos));
        c = pos;
        pos = 0;
        MT_CHECK(MPI_Unpack(pk, c, &pos, ra, n, rt, w));
    } else {
        MT_CHECK(MPI_Get_count(&st, rt, &c));
        MT_CHECK(MPI_Get_elements(&st, rt, &e));
        mt_expect(MT_HERE, c == n && e == 6 * n, "struct count %d elements "
                  "%d, want %d/%d", c, e, n, 6 * n);
    }
    rec_check(ra, n, mt_left(), iter);
    free(sa), free(ra), free(pk);
}

/* 2.5 vectors' worth of ints received with a vector type: Get_count must
 * be MPI_UNDEFINED and Get_elements the number of ints. */
static void partial_elements(void)
{
    MPI_Datatype v;
    MPI_Status st;
    int sb[20], rb[3 * 12], c = 0, e = 0;
    for (int i = 0; i < 20; i++)
        sb[i] = mt_ival(mt_rank(), 77, (size_t)i);
    MT_CHECK(MPI_Type_vector(4, 2, 3, MPI_INT, &v)); /* 8 ints per vector */
    MT_CHECK(MPI_Type_commit(&v));
    MT_CHECK(MPI_Sendrecv(sb, 20, MPI_INT, mt_right(), TAG_E, rb, 3, v,
                          mt_left(), TAG_E, MPI_COMM_WORLD, &st));
    MT_CHECK(MPI_Get_count(&st, v, &c));
    MT_CHECK(MPI_Get_elements(&st, v, &e));
    mt_expect(MT_HERE, c == MPI_UNDEFINED && e == 20,
              "partial vector: count %d (want MPI_UNDEFINED) elements %d", c,
              e);
    /* extent 11 ints; int 19 is element 3 (offset 4) of vector 2: 22 + 4 */
    mt_expect(MT_HERE, rb[26] == mt_ival(mt_left(), 77, 19) &&
              rb[0] == mt_ival(mt_left(), 77, 0), "partial vector data");
    MT_CHECK(MPI_Type_free(&v));
}

int main(int argc, char **argv)
{
    MPI_Datatype rt;
    mt_init(&argc, &argv, "t_datatype");
    all_layout_pairs();
    rt = rec_type();
    for (int mode = 0; mode < 3; mode++) {
        struct_transfer(rt, 3, mode, 1000 + 10 * mode);
        struct_transfer(rt, 50000, mode, 2000 + 10 * mode);
    }
    MT_CHECK(MPI_Type_free(&rt));
    partial_elements();
    return mt_finish();
}
