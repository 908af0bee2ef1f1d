/* tf_coll_han: under failstop, Open MPI's coll/han is off.  Open MPI 5
 * turns it on by default (priority 35, above tuned) for communicators that
 * span hosts; it runs the part of a collective inside a host over coll/sm's
 * shared memory, past the PML, so survivors sharing a host passed the first
 * collective after a failure (tf_fail_coll across hosts, MPI-FT 17.7).
 * failstop's collective component sets its priority to 0 when failstop is
 * the PML (src/ompi/coll.c); this reads it back through MPI_T after
 * MPI_Init.  Open MPI 4.1's default is 0 already; a build without han
 * passes with a note.
 * FS_TEST_NPS: 2
 */
#include "mpitest.h"

static int han_priority(int *value_p)
{
    int n = 0, i, len, verbosity, bind, scope, value = -1;
    char name[256], desc[16];
    MPI_Datatype type;
    MPI_T_enum enumtype;
    MPI_T_cvar_handle handle;

    MT_CHECK(MPI_T_cvar_get_num(&n));
    for (i = 0; i < n; i++) {
        int nlen = (int)sizeof(name), dlen = (int)sizeof(desc);

        if (MPI_T_cvar_get_info(i, name, &nlen, &verbosity, &type, &enumtype, desc, &dlen,
                                &bind, &scope) != MPI_SUCCESS ||
            strcmp(name, "coll_han_priority") != 0) {
            continue;
        }
        mt_expect(MT_HERE, type == MPI_INT, "coll_han_priority is not an int");
        MT_CHECK(MPI_T_cvar_handle_alloc(i, NULL, &handle, &len));
        MT_CHECK(MPI_T_cvar_read(handle, &value));
        MT_CHECK(MPI_T_cvar_handle_free(&handle));
        *value_p = value;
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int provided, value = -1;

    MT_CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    mt_init(&argc, &argv, "tf_coll_han");
    if (han_priority(&value)) {
        mt_expect(MT_HERE, value == 0, "coll_han_priority is %d under failstop, not 0",
                  value);
    } else if (mt_rank() == 0) {
        mt_note("no coll_han_priority in this Open MPI: nothing to turn off");
    }
    MT_CHECK(MPI_T_finalize());
    return mt_finish();
}
