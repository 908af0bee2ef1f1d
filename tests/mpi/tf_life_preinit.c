/* tf_life_preinit: a process killed before it calls MPI_Init (as one whose
 * start fails: a missing library, a crash in a constructor, a PMIx error
 * before failstop is loaded).  The others enter MPI_Init and wait in Open
 * MPI's modex fence for it, for ever under --enable-recovery: failstop never
 * ran in the dead process, so only failstop-run can see it.  It ends the
 * job once another rank is inside MPI_Init ("process 2 ended before
 * MPI_Init's address exchange"), with a non-zero status.  A survivor whose
 * MPI_Init returns exits 0, which fails the run ("want an aborted job"); a
 * hang fails it by the time limit.  docs/SEMANTICS.md, "Lifecycle".
 * FS_TEST_NPS: 3
 * FS_TEST_FAULT: 1
 * FS_TEST_REPEAT_MAX: 10
 * FS_TEST_EXPECT: abort
 * FS_TEST_EXPECT_OUTPUT: process 2 ended before MPI_Init's address exchange
 */
#include "faulttest.h"

#include <stdlib.h>

int main(int argc, char **argv)
{
    /* the launcher's rank: MPI cannot be asked yet */
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    char text[16];

    if ((rank != NULL) && (atoi(rank) == 2)) {
        snprintf(text, sizeof text, "%d\n", SIGKILL);
        fs_record("injected", 2, text);
        raise(SIGKILL);
    }
    MPI_Init(&argc, &argv);
    fprintf(stderr, "MPITEST FAIL tf_life_preinit: MPI_Init returned although process 2 "
            "never called it\n");
    MPI_Finalize();
    return 0;
}
