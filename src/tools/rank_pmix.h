/* rank_pmix: failstop-rank keeps its rank's PMIx connection open (Slurm).
 *
 * Slurm's PMIx plugin (mpi/pmix, every version to date: pmixp_client_v2.c,
 * _errhandler) kills the whole job step with SIGKILL on any PMIx error
 * event of its server, and the PMIx server raises one
 * (PMIX_ERR_LOST_CONNECTION) whenever a client's connection closes before
 * PMIx_Finalize: under srun --mpi=pmix one dead rank kills every survivor.
 * So the waiter takes a duplicate of its rank's connection to the local
 * PMIx server (pidfd_getfd) once the rank has made it: when the rank dies
 * the connection stays open, the server sees nothing, and the step goes on.
 * The waiter then holds it until the step's end: SIGUSR2 (failstop-run,
 * through srun, once every rank has ended), or TERM, INT, HUP. */
#ifndef FS_TOOLS_RANK_PMIX_H
#define FS_TOOLS_RANK_PMIX_H

#include <sys/types.h>

typedef struct {
    int port; /* the local PMIx server's TCP port; 0: nothing to hold */
    int fd;   /* the duplicate, once taken; -1 before */
    unsigned long sig;     /* the child's sockets at the last read of the table */
    double        read_at; /* when (fs_time_now) */
} fs_rank_pmix_t;

/* Whether to hold (FAILSTOP_PMIX_HOLD=1 and a PMIx server over TCP named in
 * PMIX_SERVER_URI*), into *pm; pm->port is 0 when not. */
void fs_rank_pmix_init(fs_rank_pmix_t *pm);

/* Tries to take the duplicate of CHILD's connection to the server; returns
 * 1 once held (then or before), 0 if not (yet). */
int fs_rank_pmix_take(fs_rank_pmix_t *pm, pid_t child);

/* Whether a duplicate is still wanted (a port, none taken yet). */
int fs_rank_pmix_wanted(const fs_rank_pmix_t *pm);

#endif
