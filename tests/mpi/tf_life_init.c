/* tf_life_init: a process killed inside MPI_Init, before the address
 * exchange (pml_failstop_inject 2:at=init: failstop has published its
 * address, Open MPI's modex fence has not run).  The others are in MPI_Init
 * too.  Open MPI's runtime completes the fence without the dead process, so
 * its address never reaches anybody, and MPI_Init cannot build
 * MPI_COMM_WORLD: the outcome is a prompt, non-zero end of the job whose
 * output names the process (failstop's "no failstop address for process
 * 2"), then Open MPI's "MPI_INIT failed" and MPI_ERRORS_ARE_FATAL abort.
 * Never a hang: PMIx would wait for ever for the address (tcp: most runs),
 * so failstop looks it up locally after the exchange (src/ompi/pml.c,
 * fs_ompi_modex_recv); and Open MPI's fence itself sometimes waits for ever
 * for the dead process (1 run in 20 or 40), so failstop-run ends the job
 * when a rank that wrote init.R ends before up.R ("process 2 ended before
 * MPI_Init's address exchange").  A survivor whose MPI_Init returns exits 0, which
 * fails the run ("want an aborted job").  docs/SEMANTICS.md, "Lifecycle".
 * FS_TEST_NPS: 3
 * FS_TEST_OPTS: --mca pml_failstop_inject 2:at=init
 * FS_TEST_FAULT: 1
 * FS_TEST_EXPECT: abort
 * FS_TEST_EXPECT_OUTPUT: (no failstop address for )?process 2:? (it )?ended (in|before) MPI_Init
 */
#include "faulttest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    fprintf(stderr, "MPITEST FAIL tf_life_init: MPI_Init returned although process 2 "
            "died before the address exchange\n");
    MPI_Finalize();
    return 0;
}
