/* Collectives over the survivors (survivors.c, survivors_vec.c): the map
 * from a validated communicator to its shadow, and the helpers both files
 * use.  Internal to src/ompi. */
#ifndef FS_OMPI_SURVIVORS_H
#define FS_OMPI_SURVIVORS_H

#include "ompi/ompi_int.h"

#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/request/request.h"

typedef struct fs_sv {
    ompi_communicator_t *shadow;
    int                  nlive;
    /* of comm's remote group (an intracommunicator's whole group): the
     * group buffers are laid out by and roots name */
    int                 *live;       /* shadow rank -> comm rank */
    int                 *shadow_of;  /* comm rank -> shadow rank, -1: recognized failed */
    int                 *ints;       /* 4 * nlive: one call's counts and displacements */
    ompi_datatype_t    **types;      /* 2 * nlive: alltoallw */
} fs_sv_t;

/* comm's survivor map (comm is validated with recognized failures). */
fs_sv_t *fs_sv(ompi_communicator_t *comm);
/* The shadow rank of comm's root, or MPI_ERR_RANK (a recognized failed
 * root); an intercommunicator's MPI_ROOT and MPI_PROC_NULL stay. */
int      fs_sv_root(const fs_sv_t *sv, int root, int *root_p);
/* This process is root (the one whose counts matter). */
int      fs_sv_is_root(ompi_communicator_t *comm, int root);
/* A nonblocking collective started on the shadow reports its errors
 * through comm's error handler. */
int      fs_sv_started(ompi_communicator_t *comm, int rc, ompi_request_t **req);
/* Every survivor's block of c elements at its place in comm's order. */
int      fs_sv_spread(const fs_sv_t *sv, int c, int *counts, int *displs);
/* The survivors' entries of comm-ordered counts and displacements. */
void     fs_sv_select(const fs_sv_t *sv, const int *cin, const int *din, int *counts,
                      int *displs);
/* survivors_vec.c: the gather, scatter, all-to-all and reduce-scatter
 * families into comm's collective table. */
void     fs_sv_install_vec(mca_coll_base_comm_coll_t *c);

#endif
