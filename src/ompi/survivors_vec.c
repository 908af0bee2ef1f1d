/* Collectives over the survivors, the vector families (survivors.c has the
 * design): gather, scatter, allgather and all-to-all become their
 * v-variants on the shadow, with the survivors' places in the caller's
 * buffers; reduce_scatter reduces the whole vector into a temporary and
 * keeps the caller's segment (after completion, for the nonblocking one). */
#include "ompi/survivors.h"

#include "opal/datatype/opal_datatype.h"

#include <limits.h>
#include <stdlib.h>

/* ---- gather, scatter ------------------------------------------------- */

static int fs_sv_gatherv_any(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                             const int *rcounts, const int *displs, int rcount,
                             ompi_datatype_t *rdt, int root, ompi_communicator_t *comm,
                             ompi_request_t **req)
{
    fs_sv_t *sv = fs_sv(comm);
    ompi_communicator_t *s = sv->shadow;
    int *c = NULL, *d = NULL;
    int r, rc = fs_sv_root(sv, root, &r);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (fs_sv_is_root(comm, root)) {     /* the counts matter at the root only */
        c = sv->ints;
        d = sv->ints + sv->nlive;
        if (rcounts != NULL) {
            fs_sv_select(sv, rcounts, displs, c, d);
        } else if ((rc = fs_sv_spread(sv, rcount, c, d)) != MPI_SUCCESS) {
            return rc;
        }
    }
    if (req == NULL) {
        return s->c_coll->coll_gatherv(sbuf, scount, sdt, rbuf, c, d, rdt, r, s,
                                       s->c_coll->coll_gatherv_module);
    }
    return fs_sv_started(comm, s->c_coll->coll_igatherv(sbuf, scount, sdt, rbuf, c, d, rdt, r, s,
                                                        req, s->c_coll->coll_igatherv_module),
                         req);
}

static int fs_sv_gather(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                        int rcount, ompi_datatype_t *rdt, int root, ompi_communicator_t *comm,
                        mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_gatherv_any(sbuf, scount, sdt, rbuf, NULL, NULL, rcount, rdt, root, comm, NULL);
}

static int fs_sv_igather(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                         int rcount, ompi_datatype_t *rdt, int root, ompi_communicator_t *comm,
                         ompi_request_t **req, mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_gatherv_any(sbuf, scount, sdt, rbuf, NULL, NULL, rcount, rdt, root, comm, req);
}

static int fs_sv_gatherv(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                         const int *rcounts, const int *displs, ompi_datatype_t *rdt, int root,
                         ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_gatherv_any(sbuf, scount, sdt, rbuf, rcounts, displs, 0, rdt, root, comm, NULL);
}

static int fs_sv_igatherv(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                          const int *rcounts, const int *displs, ompi_datatype_t *rdt, int root,
                          ompi_communicator_t *comm, ompi_request_t **req,
                          mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_gatherv_any(sbuf, scount, sdt, rbuf, rcounts, displs, 0, rdt, root, comm, req);
}

static int fs_sv_scatterv_any(const void *sbuf, const int *scounts, const int *displs,
                              int scount, ompi_datatype_t *sdt, void *rbuf, int rcount,
                              ompi_datatype_t *rdt, int root, ompi_communicator_t *comm,
                              ompi_request_t **req)
{
    fs_sv_t *sv = fs_sv(comm);
    ompi_communicator_t *s = sv->shadow;
    int *c = NULL, *d = NULL;
    int r, rc = fs_sv_root(sv, root, &r);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (fs_sv_is_root(comm, root)) {
        c = sv->ints;
        d = sv->ints + sv->nlive;
        if (scounts != NULL) {
            fs_sv_select(sv, scounts, displs, c, d);
        } else if ((rc = fs_sv_spread(sv, scount, c, d)) != MPI_SUCCESS) {
            return rc;
        }
    }
    if (req == NULL) {
        return s->c_coll->coll_scatterv(sbuf, c, d, sdt, rbuf, rcount, rdt, r, s,
                                        s->c_coll->coll_scatterv_module);
    }
    return fs_sv_started(comm, s->c_coll->coll_iscatterv(sbuf, c, d, sdt, rbuf, rcount, rdt, r,
                                                         s, req,
                                                         s->c_coll->coll_iscatterv_module),
                         req);
}

static int fs_sv_scatter(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                         int rcount, ompi_datatype_t *rdt, int root, ompi_communicator_t *comm,
                         mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_scatterv_any(sbuf, NULL, NULL, scount, sdt, rbuf, rcount, rdt, root, comm, NULL);
}

static int fs_sv_iscatter(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                          int rcount, ompi_datatype_t *rdt, int root, ompi_communicator_t *comm,
                          ompi_request_t **req, mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_scatterv_any(sbuf, NULL, NULL, scount, sdt, rbuf, rcount, rdt, root, comm, req);
}

static int fs_sv_scatterv(const void *sbuf, const int *scounts, const int *displs,
                          ompi_datatype_t *sdt, void *rbuf, int rcount, ompi_datatype_t *rdt,
                          int root, ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_scatterv_any(sbuf, scounts, displs, 0, sdt, rbuf, rcount, rdt, root, comm,
                              NULL);
}

static int fs_sv_iscatterv(const void *sbuf, const int *scounts, const int *displs,
                           ompi_datatype_t *sdt, void *rbuf, int rcount, ompi_datatype_t *rdt,
                           int root, ompi_communicator_t *comm, ompi_request_t **req,
                           mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_scatterv_any(sbuf, scounts, displs, 0, sdt, rbuf, rcount, rdt, root, comm,
                              req);
}

/* ---- allgather ------------------------------------------------------- */

static int fs_sv_allgatherv_any(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                                const int *rcounts, const int *displs, int rcount,
                                ompi_datatype_t *rdt, ompi_communicator_t *comm,
                                ompi_request_t **req)
{
    fs_sv_t *sv = fs_sv(comm);
    ompi_communicator_t *s = sv->shadow;
    int *c = sv->ints, *d = sv->ints + sv->nlive;
    int rc;

    if (rcounts != NULL) {
        fs_sv_select(sv, rcounts, displs, c, d);
    } else if ((rc = fs_sv_spread(sv, rcount, c, d)) != MPI_SUCCESS) {
        return rc;
    }
    if (req == NULL) {
        return s->c_coll->coll_allgatherv(sbuf, scount, sdt, rbuf, c, d, rdt, s,
                                          s->c_coll->coll_allgatherv_module);
    }
    return fs_sv_started(comm, s->c_coll->coll_iallgatherv(sbuf, scount, sdt, rbuf, c, d, rdt,
                                                           s, req,
                                                           s->c_coll->coll_iallgatherv_module),
                         req);
}

/* The one exception to "segments of failed processes stay untouched": a
 * blocking allgather of MPI_INT gets MPI_UNDEFINED there.  Open MPI builds
 * MPI_Comm_split on exactly that call (colour and key of every process),
 * and a recognized failed process must supply the colour MPI_UNDEFINED
 * (17.8.2) so that split yields a communicator of the alive processes. */
static void fs_sv_undefined_segments(const fs_sv_t *sv, int *rbuf, int rcount, int n)
{
    int r, j;

    for (r = 0; r < n; ++r) {
        if (sv->shadow_of[r] < 0) {
            for (j = 0; j < rcount; ++j) {
                rbuf[(size_t)r * (size_t)rcount + (size_t)j] = MPI_UNDEFINED;
            }
        }
    }
}

static int fs_sv_allgather(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                           int rcount, ompi_datatype_t *rdt, ompi_communicator_t *comm,
                           mca_coll_base_module_t *m)
{
    int rc = fs_sv_allgatherv_any(sbuf, scount, sdt, rbuf, NULL, NULL, rcount, rdt, comm, NULL);

    (void)m;
    if ((rc == MPI_SUCCESS) && (rdt == MPI_INT)) {
        fs_sv_undefined_segments(fs_sv(comm), rbuf, rcount, fs_ompi_peer_size(comm));
    }
    return rc;
}

static int fs_sv_iallgather(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                            int rcount, ompi_datatype_t *rdt, ompi_communicator_t *comm,
                            ompi_request_t **req, mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_allgatherv_any(sbuf, scount, sdt, rbuf, NULL, NULL, rcount, rdt, comm, req);
}

static int fs_sv_allgatherv(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                            const int *rcounts, const int *displs, ompi_datatype_t *rdt,
                            ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_allgatherv_any(sbuf, scount, sdt, rbuf, rcounts, displs, 0, rdt, comm, NULL);
}

static int fs_sv_iallgatherv(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                             const int *rcounts, const int *displs, ompi_datatype_t *rdt,
                             ompi_communicator_t *comm, ompi_request_t **req,
                             mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_allgatherv_any(sbuf, scount, sdt, rbuf, rcounts, displs, 0, rdt, comm, req);
}

/* ---- all-to-all ------------------------------------------------------ */

/* One side (send or receive) of an all-to-all: v arrays, or blocks of c. */
static int fs_sv_side(const fs_sv_t *sv, const int *counts, const int *displs, int c,
                      int *c_out, int *d_out)
{
    if (counts != NULL) {
        fs_sv_select(sv, counts, displs, c_out, d_out);
        return MPI_SUCCESS;
    }
    return fs_sv_spread(sv, c, c_out, d_out);
}

typedef struct fs_sv_a2a {
    const void      *sbuf;
    const int       *scounts, *sdispls;
    int              scount;
    ompi_datatype_t *sdt;
    void            *rbuf;
    const int       *rcounts, *rdispls;
    int              rcount;
    ompi_datatype_t *rdt;
} fs_sv_a2a_t;

static int fs_sv_alltoallv_any(const fs_sv_a2a_t *a, ompi_communicator_t *comm,
                               ompi_request_t **req)
{
    fs_sv_t *sv = fs_sv(comm);
    ompi_communicator_t *s = sv->shadow;
    int n = sv->nlive, *sc = sv->ints, *sd = sc + n, *rc_ = sd + n, *rd = rc_ + n;
    int rc;

    /* in place, the send side is the receive side (MPI ignores the former) */
    if ((a->sbuf != MPI_IN_PLACE) &&
        ((rc = fs_sv_side(sv, a->scounts, a->sdispls, a->scount, sc, sd)) != MPI_SUCCESS)) {
        return rc;
    }
    if ((rc = fs_sv_side(sv, a->rcounts, a->rdispls, a->rcount, rc_, rd)) != MPI_SUCCESS) {
        return rc;
    }
    if (req == NULL) {
        return s->c_coll->coll_alltoallv(a->sbuf, sc, sd, a->sdt, a->rbuf, rc_, rd, a->rdt, s,
                                         s->c_coll->coll_alltoallv_module);
    }
    return fs_sv_started(comm, s->c_coll->coll_ialltoallv(a->sbuf, sc, sd, a->sdt, a->rbuf, rc_,
                                                          rd, a->rdt, s, req,
                                                          s->c_coll->coll_ialltoallv_module),
                         req);
}

static int fs_sv_alltoall(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                          int rcount, ompi_datatype_t *rdt, ompi_communicator_t *comm,
                          mca_coll_base_module_t *m)
{
    fs_sv_a2a_t a = { sbuf, NULL, NULL, scount, sdt, rbuf, NULL, NULL, rcount, rdt };

    (void)m;
    return fs_sv_alltoallv_any(&a, comm, NULL);
}

static int fs_sv_ialltoall(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                           int rcount, ompi_datatype_t *rdt, ompi_communicator_t *comm,
                           ompi_request_t **req, mca_coll_base_module_t *m)
{
    fs_sv_a2a_t a = { sbuf, NULL, NULL, scount, sdt, rbuf, NULL, NULL, rcount, rdt };

    (void)m;
    return fs_sv_alltoallv_any(&a, comm, req);
}

static int fs_sv_alltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                           ompi_datatype_t *sdt, void *rbuf, const int *rcounts,
                           const int *rdispls, ompi_datatype_t *rdt, ompi_communicator_t *comm,
                           mca_coll_base_module_t *m)
{
    fs_sv_a2a_t a = { sbuf, scounts, sdispls, 0, sdt, rbuf, rcounts, rdispls, 0, rdt };

    (void)m;
    return fs_sv_alltoallv_any(&a, comm, NULL);
}

static int fs_sv_ialltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                            ompi_datatype_t *sdt, void *rbuf, const int *rcounts,
                            const int *rdispls, ompi_datatype_t *rdt, ompi_communicator_t *comm,
                            ompi_request_t **req, mca_coll_base_module_t *m)
{
    fs_sv_a2a_t a = { sbuf, scounts, sdispls, 0, sdt, rbuf, rcounts, rdispls, 0, rdt };

    (void)m;
    return fs_sv_alltoallv_any(&a, comm, req);
}

static int fs_sv_alltoallw_any(const void *sbuf, const int *scounts, const int *sdispls,
                               ompi_datatype_t *const *sdts, void *rbuf, const int *rcounts,
                               const int *rdispls, ompi_datatype_t *const *rdts,
                               ompi_communicator_t *comm, ompi_request_t **req)
{
    fs_sv_t *sv = fs_sv(comm);
    ompi_communicator_t *s = sv->shadow;
    int n = sv->nlive, *sc = sv->ints, *sd = sc + n, *rc = sd + n, *rd = rc + n, i;
    ompi_datatype_t **st = sv->types, **rt = sv->types + n;

    if (sbuf != MPI_IN_PLACE) {
        fs_sv_select(sv, scounts, sdispls, sc, sd);
    }
    fs_sv_select(sv, rcounts, rdispls, rc, rd);
    for (i = 0; i < n; ++i) {
        st[i] = (sbuf != MPI_IN_PLACE) ? sdts[sv->live[i]] : NULL;
        rt[i] = rdts[sv->live[i]];
    }
    if (req == NULL) {
        return s->c_coll->coll_alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, s,
                                         s->c_coll->coll_alltoallw_module);
    }
    return fs_sv_started(comm, s->c_coll->coll_ialltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, s,
                                                          req,
                                                          s->c_coll->coll_ialltoallw_module),
                         req);
}

static int fs_sv_alltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                           ompi_datatype_t *const *sdts, void *rbuf, const int *rcounts,
                           const int *rdispls, ompi_datatype_t *const *rdts,
                           ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_alltoallw_any(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, comm,
                               NULL);
}

static int fs_sv_ialltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                            ompi_datatype_t *const *sdts, void *rbuf, const int *rcounts,
                            const int *rdispls, ompi_datatype_t *const *rdts,
                            ompi_communicator_t *comm, ompi_request_t **req,
                            mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_alltoallw_any(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, comm,
                               req);
}

/* ---- reduce_scatter -------------------------------------------------- */

typedef struct fs_sv_rs {
    char            *tmp;        /* the whole reduced vector (malloc'd) */
    char            *mine;       /* the caller's segment in it */
    void            *rbuf;
    int              count;
    ompi_datatype_t *dt;
    int              claimed;    /* the segment copied and tmp freed, once */
} fs_sv_rs_t;

static int fs_sv_rs_finish(fs_sv_rs_t *rs, int ok)
{
    int rc = MPI_SUCCESS;

    if (__atomic_exchange_n(&rs->claimed, 1, __ATOMIC_ACQ_REL)) {
        return MPI_SUCCESS;
    }
    if (ok) {
        rc = ompi_datatype_copy_content_same_ddt(rs->dt, rs->count, rs->rbuf, rs->mine);
    }
    OBJ_RELEASE(rs->dt);
    free(rs->tmp);
    free(rs);
    return rc;
}

static int fs_sv_rs_complete(ompi_request_t *req)
{
    fs_sv_rs_t *rs = req->req_complete_cb_data;
    int rc = fs_sv_rs_finish(rs, req->req_status.MPI_ERROR == MPI_SUCCESS);

    if ((rc != MPI_SUCCESS) && (req->req_status.MPI_ERROR == MPI_SUCCESS)) {
        req->req_status.MPI_ERROR = rc;
    }
    return 0;
}

/* The whole vector is summed over comm's order (the segments of recognized
 * failed processes included, then dropped), so every survivor passes the
 * same count. */
static int fs_sv_rs_any(const void *sbuf, void *rbuf, const int *rcounts, int rcount,
                        ompi_datatype_t *dt, struct ompi_op_t *op, ompi_communicator_t *comm,
                        ompi_request_t **req)
{
    ompi_communicator_t *s = fs_sv(comm)->shadow;
    int n = ompi_comm_size(comm), me = ompi_comm_rank(comm), r, rc;
    size_t total = 0, before = 0;
    ptrdiff_t gap, ext;
    fs_sv_rs_t *rs;

    for (r = 0; r < n; ++r) {
        size_t c = (size_t)(rcounts != NULL ? rcounts[r] : rcount);
        before += (r < me) ? c : 0;
        total  += c;
    }
    if (total > INT_MAX) {
        return MPI_ERR_COUNT;
    }
    rs = calloc(1, sizeof(*rs));
    if (rs != NULL) {
        rs->tmp = malloc((size_t)opal_datatype_span(&dt->super, total, &gap) + 1);
    }
    if ((rs == NULL) || (rs->tmp == NULL)) {
        free(rs);
        return MPI_ERR_NO_MEM;
    }
    ompi_datatype_type_extent(dt, &ext);
    rs->mine  = rs->tmp - gap + (ptrdiff_t)before * ext;
    rs->rbuf  = rbuf;
    rs->count = (rcounts != NULL) ? rcounts[me] : rcount;
    rs->dt    = dt;
    OBJ_RETAIN(dt);
    sbuf = (sbuf == MPI_IN_PLACE) ? rbuf : sbuf;
    if (req == NULL) {
        rc = s->c_coll->coll_allreduce(sbuf, rs->tmp - gap, (int)total, dt, op, s,
                                       s->c_coll->coll_allreduce_module);
        r  = fs_sv_rs_finish(rs, rc == MPI_SUCCESS);
        return (rc != MPI_SUCCESS) ? rc : r;
    }
    rc = s->c_coll->coll_iallreduce(sbuf, rs->tmp - gap, (int)total, dt, op, s, req,
                                    s->c_coll->coll_iallreduce_module);
    if (rc != MPI_SUCCESS) {
        fs_sv_rs_finish(rs, 0);
        return rc;
    }
    (*req)->req_complete_cb_data = rs;
    __atomic_store_n(&(*req)->req_complete_cb, fs_sv_rs_complete, __ATOMIC_SEQ_CST);
    if (REQUEST_COMPLETE(*req)) {       /* completed before the callback was set */
        r = fs_sv_rs_finish(rs, (*req)->req_status.MPI_ERROR == MPI_SUCCESS);
        if ((r != MPI_SUCCESS) && ((*req)->req_status.MPI_ERROR == MPI_SUCCESS)) {
            (*req)->req_status.MPI_ERROR = r;
        }
    }
    return fs_sv_started(comm, rc, req);
}

static int fs_sv_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                                ompi_datatype_t *dt, struct ompi_op_t *op, ompi_communicator_t *comm,
                                mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_rs_any(sbuf, rbuf, rcounts, 0, dt, op, comm, NULL);
}

static int fs_sv_ireduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                                 ompi_datatype_t *dt, struct ompi_op_t *op, ompi_communicator_t *comm,
                                 ompi_request_t **req, mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_rs_any(sbuf, rbuf, rcounts, 0, dt, op, comm, req);
}

static int fs_sv_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                                      ompi_datatype_t *dt, struct ompi_op_t *op,
                                      ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_rs_any(sbuf, rbuf, NULL, rcount, dt, op, comm, NULL);
}

static int fs_sv_ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                                       ompi_datatype_t *dt, struct ompi_op_t *op,
                                       ompi_communicator_t *comm, ompi_request_t **req,
                                       mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_rs_any(sbuf, rbuf, NULL, rcount, dt, op, comm, req);
}

void fs_sv_install_vec(mca_coll_base_comm_coll_t *c)
{
    c->coll_gather                = fs_sv_gather;
    c->coll_igather               = fs_sv_igather;
    c->coll_gatherv               = fs_sv_gatherv;
    c->coll_igatherv              = fs_sv_igatherv;
    c->coll_scatter               = fs_sv_scatter;
    c->coll_iscatter              = fs_sv_iscatter;
    c->coll_scatterv              = fs_sv_scatterv;
    c->coll_iscatterv             = fs_sv_iscatterv;
    c->coll_allgather             = fs_sv_allgather;
    c->coll_iallgather            = fs_sv_iallgather;
    c->coll_allgatherv            = fs_sv_allgatherv;
    c->coll_iallgatherv           = fs_sv_iallgatherv;
    c->coll_alltoall              = fs_sv_alltoall;
    c->coll_ialltoall             = fs_sv_ialltoall;
    c->coll_alltoallv             = fs_sv_alltoallv;
    c->coll_ialltoallv            = fs_sv_ialltoallv;
    c->coll_alltoallw             = fs_sv_alltoallw;
    c->coll_ialltoallw            = fs_sv_ialltoallw;
    c->coll_reduce_scatter        = fs_sv_reduce_scatter;
    c->coll_ireduce_scatter       = fs_sv_ireduce_scatter;
    c->coll_reduce_scatter_block  = fs_sv_reduce_scatter_block;
    c->coll_ireduce_scatter_block = fs_sv_ireduce_scatter_block;
}
