/* Collectives over the survivors (MPI-FT 17.7, 17.7.4): after a validation
 * that recognized failed members, every collective on the communicator runs
 * on its shadow -- a communicator of the survivors with a context id the
 * validation agreed, built locally (shrink.c) -- through Open MPI's own
 * collective modules, selected for the shadow as for any communicator.
 *
 * Only validated communicators with recognized failures change: their
 * collective table (comm->c_coll, after Open MPI selected the modules) gets
 * these entries.  Communicators that never saw a failure keep theirs, so
 * their collectives cost what they did before.
 *
 * Mapping: ranks and roots translate through the survivors' order; a
 * gather-type collective becomes its v-variant whose displacements are the
 * survivors' places in the caller's buffers, so the segments of the
 * recognized failed processes stay untouched; scan and exscan run over the
 * survivors, so exscan's "process 0" is the first alive process; a root
 * that is a recognized failed process is MPI_ERR_RANK; reduce_scatter
 * reduces the whole vector and keeps the caller's segment.  A newer
 * failure makes the shadow collectively inactive exactly as it makes comm
 * (the shadow's members are comm's minus the recognized), and a revoke of
 * comm revokes the shadow (src/proto/validate.c).
 *
 * Count and displacement arrays are built per call in the survivor map's
 * scratch: one collective runs per communicator at a time (MPI), and the
 * nonblocking modules (libnbc) read them when the operation starts.  Not
 * mapped: persistent and neighbourhood collectives (they run over comm and
 * fail on a failed member). */
#include "ompi/survivors.h"
#include "common/fs_bitmap.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

fs_sv_t *fs_sv(ompi_communicator_t *comm)
{
    return fs_comm_shadow_host(fs_ompi_comm(comm));
}

int fs_sv_root(const fs_sv_t *sv, int root, int *root_p)
{
    if (root < 0) {
        *root_p = root;            /* an intercommunicator's MPI_ROOT or MPI_PROC_NULL */
        return MPI_SUCCESS;
    }
    if (sv->shadow_of[root] < 0) {
        return MPI_ERR_RANK;       /* a recognized failed root: documented in SEMANTICS */
    }
    *root_p = sv->shadow_of[root];
    return MPI_SUCCESS;
}

int fs_sv_is_root(ompi_communicator_t *comm, int root)
{
    return OMPI_COMM_IS_INTER(comm) ? (root == MPI_ROOT) : (ompi_comm_rank(comm) == root);
}

int fs_sv_started(ompi_communicator_t *comm, int rc, ompi_request_t **req)
{
    if ((rc == OMPI_SUCCESS) && (*req != NULL) && ((*req)->req_type == OMPI_REQUEST_COLL)) {
        (*req)->req_mpi_object.comm = comm;
    }
    return rc;
}

int fs_sv_spread(const fs_sv_t *sv, int c, int *counts, int *displs)
{
    int i;

    for (i = 0; i < sv->nlive; ++i) {
        int64_t d = (int64_t)sv->live[i] * c;
        if (d > INT_MAX) {
            return MPI_ERR_COUNT;   /* the v-variants take int displacements */
        }
        counts[i] = c;
        displs[i] = (int)d;
    }
    return MPI_SUCCESS;
}

void fs_sv_select(const fs_sv_t *sv, const int *cin, const int *din, int *counts, int *displs)
{
    int i;

    for (i = 0; i < sv->nlive; ++i) {
        counts[i] = cin[sv->live[i]];
        displs[i] = din[sv->live[i]];
    }
}

/* ---- barrier, bcast, reductions, scans ---------------------------------- */

static int fs_sv_barrier(ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    ompi_communicator_t *s = fs_sv(comm)->shadow;

    (void)m;
    return s->c_coll->coll_barrier(s, s->c_coll->coll_barrier_module);
}

static int fs_sv_ibarrier(ompi_communicator_t *comm, ompi_request_t **req,
                          mca_coll_base_module_t *m)
{
    ompi_communicator_t *s = fs_sv(comm)->shadow;

    (void)m;
    return fs_sv_started(comm, s->c_coll->coll_ibarrier(s, req, s->c_coll->coll_ibarrier_module),
                         req);
}

static int fs_sv_bcast_any(void *buf, int count, ompi_datatype_t *dt, int root,
                           ompi_communicator_t *comm, ompi_request_t **req)
{
    fs_sv_t *sv = fs_sv(comm);
    ompi_communicator_t *s = sv->shadow;
    int r, rc = fs_sv_root(sv, root, &r);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (req == NULL) {
        return s->c_coll->coll_bcast(buf, count, dt, r, s, s->c_coll->coll_bcast_module);
    }
    return fs_sv_started(comm, s->c_coll->coll_ibcast(buf, count, dt, r, s, req,
                                                      s->c_coll->coll_ibcast_module), req);
}

static int fs_sv_bcast(void *buf, int count, ompi_datatype_t *dt, int root,
                       ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_bcast_any(buf, count, dt, root, comm, NULL);
}

static int fs_sv_ibcast(void *buf, int count, ompi_datatype_t *dt, int root,
                        ompi_communicator_t *comm, ompi_request_t **req,
                        mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_bcast_any(buf, count, dt, root, comm, req);
}

static int fs_sv_reduce_any(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dt,
                            struct ompi_op_t *op, int root, ompi_communicator_t *comm,
                            ompi_request_t **req)
{
    fs_sv_t *sv = fs_sv(comm);
    ompi_communicator_t *s = sv->shadow;
    int r, rc = fs_sv_root(sv, root, &r);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (req == NULL) {
        return s->c_coll->coll_reduce(sbuf, rbuf, count, dt, op, r, s,
                                      s->c_coll->coll_reduce_module);
    }
    return fs_sv_started(comm, s->c_coll->coll_ireduce(sbuf, rbuf, count, dt, op, r, s, req,
                                                       s->c_coll->coll_ireduce_module), req);
}

static int fs_sv_reduce(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dt,
                        struct ompi_op_t *op, int root, ompi_communicator_t *comm,
                        mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_reduce_any(sbuf, rbuf, count, dt, op, root, comm, NULL);
}

static int fs_sv_ireduce(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dt,
                         struct ompi_op_t *op, int root, ompi_communicator_t *comm,
                         ompi_request_t **req, mca_coll_base_module_t *m)
{
    (void)m;
    return fs_sv_reduce_any(sbuf, rbuf, count, dt, op, root, comm, req);
}

static int fs_sv_allreduce(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dt,
                           struct ompi_op_t *op, ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    ompi_communicator_t *s = fs_sv(comm)->shadow;

    (void)m;
    return s->c_coll->coll_allreduce(sbuf, rbuf, count, dt, op, s,
                                     s->c_coll->coll_allreduce_module);
}

static int fs_sv_iallreduce(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dt,
                            struct ompi_op_t *op, ompi_communicator_t *comm, ompi_request_t **req,
                            mca_coll_base_module_t *m)
{
    ompi_communicator_t *s = fs_sv(comm)->shadow;

    (void)m;
    return fs_sv_started(comm, s->c_coll->coll_iallreduce(sbuf, rbuf, count, dt, op, s, req,
                                                          s->c_coll->coll_iallreduce_module),
                         req);
}

static int fs_sv_scan(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dt,
                      struct ompi_op_t *op, ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    ompi_communicator_t *s = fs_sv(comm)->shadow;

    (void)m;
    return s->c_coll->coll_scan(sbuf, rbuf, count, dt, op, s, s->c_coll->coll_scan_module);
}

static int fs_sv_iscan(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dt,
                       struct ompi_op_t *op, ompi_communicator_t *comm, ompi_request_t **req,
                       mca_coll_base_module_t *m)
{
    ompi_communicator_t *s = fs_sv(comm)->shadow;

    (void)m;
    return fs_sv_started(comm, s->c_coll->coll_iscan(sbuf, rbuf, count, dt, op, s, req,
                                                     s->c_coll->coll_iscan_module), req);
}

static int fs_sv_exscan(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dt,
                        struct ompi_op_t *op, ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    ompi_communicator_t *s = fs_sv(comm)->shadow;

    (void)m;
    return s->c_coll->coll_exscan(sbuf, rbuf, count, dt, op, s, s->c_coll->coll_exscan_module);
}

static int fs_sv_iexscan(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dt,
                         struct ompi_op_t *op, ompi_communicator_t *comm, ompi_request_t **req,
                         mca_coll_base_module_t *m)
{
    ompi_communicator_t *s = fs_sv(comm)->shadow;

    (void)m;
    return fs_sv_started(comm, s->c_coll->coll_iexscan(sbuf, rbuf, count, dt, op, s, req,
                                                       s->c_coll->coll_iexscan_module), req);
}

/* ---- install and release -------------------------------------------- */

static void fs_sv_free(fs_sv_t *sv)
{
    if (sv == NULL) {
        return;
    }
    if (sv->shadow != NULL) {
        fs_ompi_comm_survivors_free(sv->shadow);
    }
    free(sv->live);
    free(sv->shadow_of);
    free(sv->ints);
    free(sv->types);
    free(sv);
}

/* The map is of the group parent's buffers and roots are ranks of: the
 * remote group (an intracommunicator's whole group); failed: bits by rank
 * there. */
static fs_sv_t *fs_sv_new(ompi_communicator_t *shadow, ompi_communicator_t *parent,
                          const uint64_t *failed)
{
    int n = fs_ompi_peer_size(parent), nlive = fs_ompi_peer_size(shadow), r, i = 0;
    fs_sv_t *sv = calloc(1, sizeof(*sv));

    if (sv == NULL) {
        return NULL;
    }
    sv->shadow    = shadow;
    sv->nlive     = nlive;
    sv->live      = malloc((size_t)nlive * sizeof(int));
    sv->shadow_of = malloc((size_t)n * sizeof(int));
    sv->ints      = malloc(4 * (size_t)nlive * sizeof(int));
    sv->types     = malloc(2 * (size_t)nlive * sizeof(ompi_datatype_t *));
    if ((sv->live == NULL) || (sv->shadow_of == NULL) || (sv->ints == NULL) ||
        (sv->types == NULL)) {
        sv->shadow = NULL;          /* the caller releases it */
        fs_sv_free(sv);
        return NULL;
    }
    for (r = 0; r < n; ++r) {
        if (fs_bm_test(failed, (uint32_t)r)) {
            sv->shadow_of[r] = -1;
        } else {
            sv->shadow_of[r] = i;
            sv->live[i++]    = r;
        }
    }
    return sv;
}

static void fs_sv_install_table(mca_coll_base_comm_coll_t *c)
{
    c->coll_barrier    = fs_sv_barrier;
    c->coll_ibarrier   = fs_sv_ibarrier;
    c->coll_bcast      = fs_sv_bcast;
    c->coll_ibcast     = fs_sv_ibcast;
    c->coll_reduce     = fs_sv_reduce;
    c->coll_ireduce    = fs_sv_ireduce;
    c->coll_allreduce  = fs_sv_allreduce;
    c->coll_iallreduce = fs_sv_iallreduce;
    c->coll_scan       = fs_sv_scan;
    c->coll_iscan      = fs_sv_iscan;
    c->coll_exscan     = fs_sv_exscan;
    c->coll_iexscan    = fs_sv_iexscan;
    fs_sv_install_vec(c);
}

int fs_ompi_survivors_install(ompi_communicator_t *parent, const uint64_t *failed,
                              uint32_t cid, uint32_t local_cid)
{
    fs_comm_t *fcomm = fs_ompi_comm(parent);
    fs_sv_t *old = fs_comm_shadow_host(fcomm), *sv = NULL;
    ompi_communicator_t *shadow;
    uint32_t nr = (uint32_t)fs_ompi_peer_size(parent);
    uint64_t *bits = malloc(fs_bm_words(nr) * sizeof(*bits));
    int rc = (bits == NULL) ? MPI_ERR_NO_MEM :
             fs_ompi_comm_survivors(parent, failed, cid, local_cid, 0, "failstop survivors",
                                    &shadow);

    if (rc == MPI_SUCCESS) {
        fs_ompi_group_bits(fcomm, failed, FS_COMM_REMOTE, bits, nr);
        sv = fs_sv_new(shadow, parent, bits);
        if (sv == NULL) {
            fs_ompi_comm_survivors_free(shadow);
            rc = MPI_ERR_NO_MEM;
        }
    }
    free(bits);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    fs_ompi_lock();
    fs_comm_set_shadow(fcomm, fs_ompi_comm(shadow), sv);
    fs_ompi_unlock();
    if (old == NULL) {
        mca_coll_base_module_t *uni = fs_ompi_uniform_of(parent);

        fs_sv_install_table(parent->c_coll);     /* the entries look the map up */
        if (uni != NULL) {
            fs_ompi_uniform_rewrap(uni, parent);  /* the agreement stays on top */
        }
    }
    fs_sv_free(old);
    return MPI_SUCCESS;
}

void fs_ompi_survivors_release(ompi_communicator_t *parent)
{
    fs_comm_t *fcomm = fs_ompi_comm(parent);
    fs_sv_t *sv;

    if (fcomm == NULL) {
        return;
    }
    sv = fs_comm_shadow_host(fcomm);
    if (sv != NULL) {
        fs_ompi_lock();
        fs_comm_set_shadow(fcomm, NULL, NULL);
        fs_ompi_unlock();
        fs_sv_free(sv);
    }
}
