/* What differs between the two Open MPI series failstop plugs into, where
 * it is a name or a field (the runtime's differences: rte_orte.c for 4.1,
 * rte_prrte.c for 5.x).  Open MPI's mpi.h says which series this is. */
#ifndef FS_OMPI_COMPAT_H
#define FS_OMPI_COMPAT_H

#include "ompi_config.h"

#include "ompi/communicator/communicator.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/mca/pml/pml.h"

#if OMPI_MAJOR_VERSION >= 5
#include "ompi/runtime/ompi_rte.h"

#define FS_OMPI_V5 1
/* PML interface 2.1: pml_revoke_comm, no pml_ft_event, MCA 2.1 component */
typedef mca_pml_base_component_2_1_0_t fs_ompi_pml_component_t;
#define FS_OMPI_PML_BASE_VERSION  MCA_PML_BASE_VERSION_2_1_0
typedef mca_coll_base_component_2_4_0_t fs_ompi_coll_component_t;
#define FS_OMPI_COLL_BASE_VERSION MCA_COLL_BASE_VERSION_2_4_0

/* The communicator's number on the wire.  Open MPI 5 numbers communicators
 * by c_index, the same at every member unless a PML announces extended
 * ids (MCA_PML_BASE_FLAG_SUPPORTS_EXT_CID), which failstop does not: its
 * headers carry 32 bits, as pml ucx's do. */
static inline uint32_t fs_ompi_cid(const ompi_communicator_t *comm)
{
    return comm->c_index;
}

static inline void fs_ompi_set_cid(ompi_communicator_t *comm, uint32_t cid)
{
    comm->c_index                   = cid;
    comm->c_contextid.cid_base      = 0;
    comm->c_contextid.cid_sub.u64   = cid;
}

/* An intracommunicator of group's processes, errors handled as parent's. */
static inline int fs_ompi_comm_set(ompi_communicator_t **newcomm_p, ompi_communicator_t *parent,
                                   ompi_group_t *group)
{
    return ompi_comm_set(newcomm_p, parent, 0, NULL, 0, NULL, NULL, parent->error_handler,
                         group, NULL, 0);
}
#else
#include "ompi/mca/rte/rte.h"

typedef mca_pml_base_component_2_0_0_t fs_ompi_pml_component_t;
#define FS_OMPI_PML_BASE_VERSION  MCA_PML_BASE_VERSION_2_0_0
typedef mca_coll_base_component_2_0_0_t fs_ompi_coll_component_t;
#define FS_OMPI_COLL_BASE_VERSION MCA_COLL_BASE_VERSION_2_0_0

static inline uint32_t fs_ompi_cid(const ompi_communicator_t *comm)
{
    return comm->c_contextid;
}

static inline void fs_ompi_set_cid(ompi_communicator_t *comm, uint32_t cid)
{
    comm->c_contextid = cid;
}

static inline int fs_ompi_comm_set(ompi_communicator_t **newcomm_p, ompi_communicator_t *parent,
                                   ompi_group_t *group)
{
    return ompi_comm_set(newcomm_p, parent, 0, NULL, 0, NULL, NULL, parent->error_handler,
                         false, group, NULL);
}
#endif

#endif
