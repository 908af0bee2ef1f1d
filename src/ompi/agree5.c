/* coll_agree and coll_iagree for Open MPI 5 (ulfm5.c): libmpi's
 * MPIX_Comm_agree/iagree, and its MPIX_Comm_shrink (an agreement on the
 * failed group, then two on the new communicator's id, MAX and MIN), run
 * over failstop's agreement (src/proto/agreement.c) instead of
 * coll/ftagree's over ob1's BML.
 *
 * The contract (Open MPI 5.0.7 coll.h and coll/ftagree): contrib holds
 * dt_count ints, reduced with op (BAND, BOR, MAX or MIN) over the members
 * that take part; *failedgroup is the caller's acknowledged failures
 * (agree) or what it knows failed (shrink); with update_failedgroup it
 * becomes the agreed failed group, the same at every member.  The return
 * is MPI_ERR_PROC_FAILED when a failed member is not acknowledged by every
 * member, with the value agreed all the same.  It works on revoked
 * communicators.  iagree's request is an OMPI_REQUEST_COLL request whose
 * results (contrib, the group, the status' error) are in place when it
 * completes: Open MPI's communicator-id code reads them without a wait. */
#include "ompi/ompi_int.h"

#ifdef FS_OMPI_V5

#include "common/fs_bitmap.h"
#include "ompi/group/group.h"
#include "ompi/request/request.h"
#include "opal/runtime/opal_progress.h"

#include <stdlib.h>

typedef struct fs_agree5 {
    ompi_request_t        super;        /* first */
    fs_agreement_t        op;
    ompi_communicator_t  *comm;
    int                  *contrib;
    int                   count;
    int                   minmax;       /* values carried order-preserving */
    ompi_group_t        **group;        /* where the agreed group goes, or NULL */
    int                   rc;
    int                   freed;
    uint64_t             *failed;       /* the agreed failed members */
} fs_agree5_t;

/* An int as a word whose unsigned order is the int's (MAX, MIN), or its
 * bits (AND, OR). */
static uint64_t fs_agree5_word(int v, int minmax)
{
    return minmax ? (uint64_t)((uint32_t)v ^ 0x80000000u) : (uint64_t)(uint32_t)v;
}

static int fs_agree5_int(uint64_t w, int minmax)
{
    return (int)(minmax ? ((uint32_t)w ^ 0x80000000u) : (uint32_t)w);
}

/* (MPI_Op is Open MPI's ompi_op_t: the predefined handles are the ops;
 * ompi/op/op.h itself needs Fortran headers Debian does not ship) */
static int fs_agree5_op(struct ompi_op_t *op, uint8_t *fop_p, int *minmax_p)
{
    *minmax_p = 0;
    if (op == MPI_BAND) {
        *fop_p = FS_AGREE_AND;
    } else if (op == MPI_BOR) {
        *fop_p = FS_AGREE_OR;
    } else if ((op == MPI_MAX) || (op == MPI_MIN)) {
        *fop_p    = (op == MPI_MAX) ? FS_AGREE_MAX : FS_AGREE_MIN;
        *minmax_p = 1;
    } else {
        return MPI_ERR_OP;
    }
    return MPI_SUCCESS;
}

/* The members of comm in group, as bits (member i: comm's rank i). */
static int fs_agree5_bits(ompi_communicator_t *comm, ompi_group_t *group, uint64_t *bits)
{
    int n = (group != NULL) ? ompi_group_size(group) : 0, i, rc = MPI_SUCCESS;
    int *in, *out;

    if (n == 0) {
        return MPI_SUCCESS;
    }
    in  = malloc(2 * (size_t)n * sizeof(int));
    if (in == NULL) {
        return MPI_ERR_NO_MEM;
    }
    out = in + n;
    for (i = 0; i < n; ++i) {
        in[i] = i;
    }
    if (ompi_group_translate_ranks(group, n, in, comm->c_local_group, out) != OMPI_SUCCESS) {
        rc = MPI_ERR_GROUP;
    }
    for (i = 0; (i < n) && (rc == MPI_SUCCESS); ++i) {
        if (out[i] != MPI_UNDEFINED) {
            fs_bm_set(bits, (uint32_t)out[i]);
        }
    }
    free(in);
    return rc;
}

/* The agreed failed members as a group of comm's (replacing *group). */
static int fs_agree5_group(fs_agree5_t *a)
{
    int size = ompi_comm_size(a->comm), n = 0, i;
    int *ranks = malloc(((size_t)size + 1) * sizeof(int));
    ompi_group_t *g = NULL;

    if (ranks == NULL) {
        return MPI_ERR_NO_MEM;
    }
    for (i = 0; i < size; ++i) {
        if (fs_bm_test(a->failed, (uint32_t)i)) {
            ranks[n++] = i;
        }
    }
    if (ompi_group_incl(a->comm->c_local_group, n, ranks, &g) != OMPI_SUCCESS) {
        free(ranks);
        return MPI_ERR_GROUP;
    }
    free(ranks);
    OBJ_RELEASE(*a->group);
    *a->group = g;
    return MPI_SUCCESS;
}

/* The results in place: from the agreement's completion (progress). */
static void fs_agree5_finish(fs_agree5_t *a)
{
    int i;

    if (a->op.status != FS_OK) {
        a->rc = fs_ompi_error(a->op.status);
        return;
    }
    for (i = 0; i < a->count; ++i) {
        a->contrib[i] = fs_agree5_int(a->op.v[i], a->minmax);
    }
    a->rc = a->op.unacked ? MPI_ERR_PROC_FAILED : MPI_SUCCESS;
    if (a->group != NULL) {
        int rc = fs_agree5_group(a);

        if (rc != MPI_SUCCESS) {
            a->rc = rc;
        }
    }
}

static void fs_agree5_destroy(fs_agree5_t *a)
{
    OMPI_REQUEST_FINI(&a->super);
    OBJ_DESTRUCT(&a->super);
    free(a->failed);
    free(a);
}

static void fs_agree5_done(fs_agreement_t *op)
{
    fs_agree5_t *a = op->host;

    fs_agree5_finish(a);
    if (a->freed) {
        fs_agree5_destroy(a);
        return;
    }
    a->super.req_status.MPI_ERROR = a->rc;
    ompi_request_complete(&a->super, true);
}

static int fs_agree5_free(ompi_request_t **req_p)
{
    fs_agree5_t *a = (fs_agree5_t *)*req_p;
    int done;

    fs_ompi_lock();
    done      = __atomic_load_n(&a->op.done, __ATOMIC_ACQUIRE);
    a->freed  = !done;
    fs_ompi_unlock();
    if (done) {
        fs_agree5_destroy(a);
    }
    *req_p = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

static int fs_agree5_cancel(ompi_request_t *req, int flag)
{
    (void)req;
    (void)flag;
    return OMPI_SUCCESS;        /* an agreement cannot be cancelled */
}

static fs_agree5_t *fs_agree5_new(ompi_communicator_t *comm, int *rc_p)
{
    fs_agree5_t *a = calloc(1, sizeof(*a));

    if (a != NULL) {
        a->failed = calloc(fs_comm_agree_words(fs_ompi_comm(comm)), sizeof(uint64_t));
    }
    if ((a == NULL) || (a->failed == NULL)) {
        free(a);
        *rc_p = MPI_ERR_NO_MEM;
        return NULL;
    }
    OBJ_CONSTRUCT(&a->super, ompi_request_t);
    OMPI_REQUEST_INIT(&a->super, false);
    a->super.req_type             = OMPI_REQUEST_COLL;
    a->super.req_state            = OMPI_REQUEST_ACTIVE;
    a->super.req_free             = fs_agree5_free;
    a->super.req_cancel           = fs_agree5_cancel;
    a->super.req_mpi_object.comm  = comm;
    a->comm                       = comm;
    a->op.host                    = a;
    a->op.complete                = fs_agree5_done;
    a->op.failed                  = a->failed;
    *rc_p = MPI_SUCCESS;
    return a;
}

static int fs_agree5_start(fs_agree5_t *a, int *contrib, int count, ompi_datatype_t *dt,
                           struct ompi_op_t *op, ompi_group_t **group, bool update)
{
    fs_comm_t *fcomm = fs_ompi_comm(a->comm);
    fs_agree_input_t in = { .nv = (uint32_t)count };
    uint64_t *acked;
    uint8_t fop;
    int rc, i;
    fs_status_t st;

    if ((dt != MPI_INT) || (count < 1) || (count > FS_AGREE_MAX_WORDS)) {
        return MPI_ERR_UNSUPPORTED_OPERATION;   /* Open MPI asks for ints only */
    }
    if (((rc = fs_agree5_op(op, &fop, &a->minmax)) != MPI_SUCCESS)) {
        return rc;
    }
    acked = calloc(fs_comm_agree_words(fcomm), sizeof(uint64_t));
    if (acked == NULL) {
        return MPI_ERR_NO_MEM;
    }
    rc = fs_agree5_bits(a->comm, (group != NULL) ? *group : NULL, acked);
    for (i = 0; i < count; ++i) {
        in.op[i] = fop;
        in.v[i]  = fs_agree5_word(contrib[i], a->minmax);
    }
    in.acked   = acked;
    a->contrib = contrib;
    a->count   = count;
    a->group   = update ? group : NULL;
    if (rc == MPI_SUCCESS) {
        fs_ompi_lock();
        st = fs_comm_agree_start(fcomm, &in, &a->op);
        fs_ompi_unlock();
        rc = (st == FS_OK) ? MPI_SUCCESS : fs_ompi_error(st);
    }
    free(acked);
    return rc;
}

/* A started agreement, or NULL with the MPI error in *rc_p. */
static fs_agree5_t *fs_agree5_begin(void *contrib, int dt_count, struct ompi_datatype_t *dt,
                                    struct ompi_op_t *op, struct ompi_group_t **group,
                                    bool update, struct ompi_communicator_t *comm, int *rc_p)
{
    fs_agree5_t *a = fs_agree5_new(comm, rc_p);

    if (a == NULL) {
        return NULL;
    }
    *rc_p = fs_agree5_start(a, contrib, dt_count, dt, op, group, update);
    if (*rc_p != MPI_SUCCESS) {
        fs_agree5_destroy(a);
        return NULL;
    }
    return a;
}

int fs_ompi_coll_agree(void *contrib, int dt_count, struct ompi_datatype_t *dt,
                       struct ompi_op_t *op, struct ompi_group_t **group, bool update,
                       struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    int rc;
    fs_agree5_t *a = fs_agree5_begin(contrib, dt_count, dt, op, group, update, comm, &rc);

    (void)module;
    if (a == NULL) {
        return rc;
    }
    while (!__atomic_load_n(&a->op.done, __ATOMIC_ACQUIRE)) {
        opal_progress();
    }
    rc = a->rc;
    fs_agree5_destroy(a);
    return rc;
}

int fs_ompi_coll_iagree(void *contrib, int dt_count, struct ompi_datatype_t *dt,
                        struct ompi_op_t *op, struct ompi_group_t **group, bool update,
                        struct ompi_communicator_t *comm, ompi_request_t **request,
                        mca_coll_base_module_t *module)
{
    int rc;
    fs_agree5_t *a = fs_agree5_begin(contrib, dt_count, dt, op, group, update, comm, &rc);

    (void)module;
    if (a == NULL) {
        return rc;
    }
    *request = &a->super;
    return MPI_SUCCESS;
}

#endif
