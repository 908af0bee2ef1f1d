/* Uniformly returning collectives (MPI-FT 17.7, advice to implementors),
 * opt-in with pml_failstop_uniform_collectives=1: every process returns the
 * same outcome from each blocking collective.  Without it a failure during
 * a collective can leave some processes with success and others with the
 * class (a process that got every contribution it needed before the death
 * returns success); with it, the collective is followed by an agreement on
 * its outcome -- the MAX of success, failure, revoked, other error -- and
 * every process returns what was agreed.  The cost is one agreement per
 * collective.  Nonblocking collectives are not covered (their completion
 * is Open MPI's, not a call of this layer).
 *
 * The collective component (coll.c) is then selected for every
 * intracommunicator except the survivors' shadows; its module keeps the
 * entries Open MPI selected below it (inner) and offers these in their
 * place.  A later validation installs its survivors' entries under it, so
 * the agreement stays outermost (survivors.c, fs_ompi_uniform_rewrap). */
#include "ompi/ompi_int.h"

#include "ompi/communicator/communicator.h"
#include "ompi/mca/coll/coll.h"
#include "opal/runtime/opal_progress.h"

typedef struct fs_uni_module {
    mca_coll_base_module_t    super;
    mca_coll_base_comm_coll_t inner;    /* what runs the collectives */
} fs_uni_module_t;

static OBJ_CLASS_INSTANCE(fs_uni_module_t, mca_coll_base_module_t, NULL, NULL);

enum { FS_UNI_OK = 0, FS_UNI_FAILED, FS_UNI_REVOKED, FS_UNI_OTHER };

/* The outcome every process returns: agreed from each one's rc. */
static int fs_uni_outcome(ompi_communicator_t *comm, int rc)
{
    fs_agree_input_t in = { .nv = 1, .op = { FS_AGREE_MAX } };
    fs_agreement_t op = { .failed = NULL, .complete = NULL };
    fs_status_t st;

    in.v[0] = (rc == MPI_SUCCESS) ? FS_UNI_OK :
              (rc == fs_ompi.errors.fail_stop_class) ? FS_UNI_FAILED :
              (rc == fs_ompi.errors.revoked_class) ? FS_UNI_REVOKED : FS_UNI_OTHER;
    fs_ompi_lock();
    st = fs_comm_agree_start(fs_ompi_comm(comm), &in, &op);
    fs_ompi_unlock();
    if (st != FS_OK) {
        return (rc != MPI_SUCCESS) ? rc : fs_ompi_error(st);
    }
    while (!__atomic_load_n(&op.done, __ATOMIC_ACQUIRE)) {
        opal_progress();
    }
    if (op.status != FS_OK) {
        return (rc != MPI_SUCCESS) ? rc : fs_ompi_error(op.status);
    }
    switch ((int)op.v[0]) {
    case FS_UNI_OK:      return MPI_SUCCESS;
    case FS_UNI_FAILED:  return fs_ompi.errors.fail_stop_class;
    case FS_UNI_REVOKED: return fs_ompi.errors.revoked_class;
    default:             return (rc != MPI_SUCCESS) ? rc : MPI_ERR_OTHER;
    }
}

static mca_coll_base_comm_coll_t *fs_uni_inner(mca_coll_base_module_t *m)
{
    return &((fs_uni_module_t *)m)->inner;
}

static int fs_uni_barrier(ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    mca_coll_base_comm_coll_t *c = fs_uni_inner(m);

    return fs_uni_outcome(comm, c->coll_barrier(comm, c->coll_barrier_module));
}

static int fs_uni_bcast(void *buf, int count, ompi_datatype_t *dt, int root,
                        ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    mca_coll_base_comm_coll_t *c = fs_uni_inner(m);

    return fs_uni_outcome(comm, c->coll_bcast(buf, count, dt, root, comm, c->coll_bcast_module));
}

static int fs_uni_reduce(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dt,
                         struct ompi_op_t *op, int root, ompi_communicator_t *comm,
                         mca_coll_base_module_t *m)
{
    mca_coll_base_comm_coll_t *c = fs_uni_inner(m);

    return fs_uni_outcome(comm, c->coll_reduce(sbuf, rbuf, count, dt, op, root, comm,
                                               c->coll_reduce_module));
}

static int fs_uni_allreduce(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dt,
                            struct ompi_op_t *op, ompi_communicator_t *comm,
                            mca_coll_base_module_t *m)
{
    mca_coll_base_comm_coll_t *c = fs_uni_inner(m);

    return fs_uni_outcome(comm, c->coll_allreduce(sbuf, rbuf, count, dt, op, comm,
                                                  c->coll_allreduce_module));
}

static int fs_uni_scan(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dt,
                       struct ompi_op_t *op, ompi_communicator_t *comm,
                       mca_coll_base_module_t *m)
{
    mca_coll_base_comm_coll_t *c = fs_uni_inner(m);

    return fs_uni_outcome(comm, c->coll_scan(sbuf, rbuf, count, dt, op, comm,
                                             c->coll_scan_module));
}

static int fs_uni_exscan(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dt,
                         struct ompi_op_t *op, ompi_communicator_t *comm,
                         mca_coll_base_module_t *m)
{
    mca_coll_base_comm_coll_t *c = fs_uni_inner(m);

    return fs_uni_outcome(comm, c->coll_exscan(sbuf, rbuf, count, dt, op, comm,
                                               c->coll_exscan_module));
}

static int fs_uni_gather(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                         int rcount, ompi_datatype_t *rdt, int root, ompi_communicator_t *comm,
                         mca_coll_base_module_t *m)
{
    mca_coll_base_comm_coll_t *c = fs_uni_inner(m);

    return fs_uni_outcome(comm, c->coll_gather(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm,
                                               c->coll_gather_module));
}

static int fs_uni_gatherv(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                          const int *rcounts, const int *displs, ompi_datatype_t *rdt,
                          int root, ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    mca_coll_base_comm_coll_t *c = fs_uni_inner(m);

    return fs_uni_outcome(comm, c->coll_gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt,
                                                root, comm, c->coll_gatherv_module));
}

static int fs_uni_scatter(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                          int rcount, ompi_datatype_t *rdt, int root, ompi_communicator_t *comm,
                          mca_coll_base_module_t *m)
{
    mca_coll_base_comm_coll_t *c = fs_uni_inner(m);

    return fs_uni_outcome(comm, c->coll_scatter(sbuf, scount, sdt, rbuf, rcount, rdt, root,
                                                comm, c->coll_scatter_module));
}

static int fs_uni_scatterv(const void *sbuf, const int *scounts, const int *displs,
                           ompi_datatype_t *sdt, void *rbuf, int rcount, ompi_datatype_t *rdt,
                           int root, ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    mca_coll_base_comm_coll_t *c = fs_uni_inner(m);

    return fs_uni_outcome(comm, c->coll_scatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt,
                                                 root, comm, c->coll_scatterv_module));
}

static int fs_uni_allgather(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                            int rcount, ompi_datatype_t *rdt, ompi_communicator_t *comm,
                            mca_coll_base_module_t *m)
{
    mca_coll_base_comm_coll_t *c = fs_uni_inner(m);

    return fs_uni_outcome(comm, c->coll_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm,
                                                  c->coll_allgather_module));
}

static int fs_uni_allgatherv(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                             const int *rcounts, const int *displs, ompi_datatype_t *rdt,
                             ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    mca_coll_base_comm_coll_t *c = fs_uni_inner(m);

    return fs_uni_outcome(comm, c->coll_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs,
                                                   rdt, comm, c->coll_allgatherv_module));
}

static int fs_uni_alltoall(const void *sbuf, int scount, ompi_datatype_t *sdt, void *rbuf,
                           int rcount, ompi_datatype_t *rdt, ompi_communicator_t *comm,
                           mca_coll_base_module_t *m)
{
    mca_coll_base_comm_coll_t *c = fs_uni_inner(m);

    return fs_uni_outcome(comm, c->coll_alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm,
                                                 c->coll_alltoall_module));
}

static int fs_uni_alltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                            ompi_datatype_t *sdt, void *rbuf, const int *rcounts,
                            const int *rdispls, ompi_datatype_t *rdt, ompi_communicator_t *comm,
                            mca_coll_base_module_t *m)
{
    mca_coll_base_comm_coll_t *c = fs_uni_inner(m);

    return fs_uni_outcome(comm, c->coll_alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts,
                                                  rdispls, rdt, comm, c->coll_alltoallv_module));
}

static int fs_uni_alltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                            ompi_datatype_t *const *sdts, void *rbuf, const int *rcounts,
                            const int *rdispls, ompi_datatype_t *const *rdts,
                            ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    mca_coll_base_comm_coll_t *c = fs_uni_inner(m);

    return fs_uni_outcome(comm, c->coll_alltoallw(sbuf, scounts, sdispls, sdts, rbuf, rcounts,
                                                  rdispls, rdts, comm, c->coll_alltoallw_module));
}

static int fs_uni_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                                 ompi_datatype_t *dt, struct ompi_op_t *op,
                                 ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    mca_coll_base_comm_coll_t *c = fs_uni_inner(m);

    return fs_uni_outcome(comm, c->coll_reduce_scatter(sbuf, rbuf, rcounts, dt, op, comm,
                                                       c->coll_reduce_scatter_module));
}

static int fs_uni_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                                       ompi_datatype_t *dt, struct ompi_op_t *op,
                                       ompi_communicator_t *comm, mca_coll_base_module_t *m)
{
    mca_coll_base_comm_coll_t *c = fs_uni_inner(m);

    return fs_uni_outcome(comm, c->coll_reduce_scatter_block(sbuf, rbuf, rcount, dt, op, comm,
                                                             c->coll_reduce_scatter_block_module));
}

/* The module that puts the agreement around comm's blocking collectives:
 * called from the collective component's enable, after Open MPI installed
 * the entries of every module below it in comm->c_coll. */
mca_coll_base_module_t *fs_ompi_uniform_module(void)
{
    fs_uni_module_t *u = OBJ_NEW(fs_uni_module_t);
    mca_coll_base_module_t *m;

    if (u == NULL) {
        return NULL;
    }
    m = &u->super;
    m->coll_barrier              = fs_uni_barrier;
    m->coll_bcast                = fs_uni_bcast;
    m->coll_reduce               = fs_uni_reduce;
    m->coll_allreduce            = fs_uni_allreduce;
    m->coll_scan                 = fs_uni_scan;
    m->coll_exscan               = fs_uni_exscan;
    m->coll_gather               = fs_uni_gather;
    m->coll_gatherv              = fs_uni_gatherv;
    m->coll_scatter              = fs_uni_scatter;
    m->coll_scatterv             = fs_uni_scatterv;
    m->coll_allgather            = fs_uni_allgather;
    m->coll_allgatherv           = fs_uni_allgatherv;
    m->coll_alltoall             = fs_uni_alltoall;
    m->coll_alltoallv            = fs_uni_alltoallv;
    m->coll_alltoallw            = fs_uni_alltoallw;
    m->coll_reduce_scatter       = fs_uni_reduce_scatter;
    m->coll_reduce_scatter_block = fs_uni_reduce_scatter_block;
    return m;
}

/* Enable: remember the entries below (copied before Open MPI puts these in
 * their place). */
void fs_ompi_uniform_enable(mca_coll_base_module_t *m, ompi_communicator_t *comm)
{
    ((fs_uni_module_t *)m)->inner = *comm->c_coll;
}

/* comm's uniform module, or NULL if its collectives have no agreement. */
mca_coll_base_module_t *fs_ompi_uniform_of(ompi_communicator_t *comm)
{
    return (comm->c_coll->coll_barrier == fs_uni_barrier) ? comm->c_coll->coll_barrier_module
                                                          : NULL;
}

/* Entries were installed in comm->c_coll over the agreement (a validation's
 * survivors): they go under it, and the agreement back on top. */
void fs_ompi_uniform_rewrap(mca_coll_base_module_t *m, ompi_communicator_t *comm)
{
    mca_coll_base_comm_coll_t *c = comm->c_coll;

    fs_ompi_uniform_enable(m, comm);
    c->coll_barrier              = m->coll_barrier;
    c->coll_bcast                = m->coll_bcast;
    c->coll_reduce               = m->coll_reduce;
    c->coll_allreduce            = m->coll_allreduce;
    c->coll_scan                 = m->coll_scan;
    c->coll_exscan               = m->coll_exscan;
    c->coll_gather               = m->coll_gather;
    c->coll_gatherv              = m->coll_gatherv;
    c->coll_scatter              = m->coll_scatter;
    c->coll_scatterv             = m->coll_scatterv;
    c->coll_allgather            = m->coll_allgather;
    c->coll_allgatherv           = m->coll_allgatherv;
    c->coll_alltoall             = m->coll_alltoall;
    c->coll_alltoallv            = m->coll_alltoallv;
    c->coll_alltoallw            = m->coll_alltoallw;
    c->coll_reduce_scatter       = m->coll_reduce_scatter;
    c->coll_reduce_scatter_block = m->coll_reduce_scatter_block;
}
