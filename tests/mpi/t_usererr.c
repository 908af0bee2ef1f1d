/* t_usererr.c: erroneous arguments under MPI_ERRORS_RETURN come back as
 * error codes of the right class (checked with MPI_Error_class) instead of
 * aborting, on MPI_COMM_WORLD and on a dup (which inherits the handler):
 *   invalid rank -> MPI_ERR_RANK, negative count -> MPI_ERR_COUNT,
 *   invalid tag -> MPI_ERR_TAG, null datatype -> MPI_ERR_TYPE,
 *   MPI_COMM_NULL -> MPI_ERR_COMM.
 * Afterwards normal traffic still works and the OK line is printed. */
#include "mpitest.h"

#include <limits.h>

static void bad_ranks(MPI_Comm c, int size)
{
    MPI_Request req;
    MPI_Status st;
    int buf = 0, flag;
    const int bad[3] = { size, size + 7, -5 };
    for (int k = 0; k < 3; k++) {
        int d = bad[k];
        mt_expect_class(MT_HERE, MPI_Send(&buf, 1, MPI_INT, d, 0, c),
                        MPI_ERR_RANK, "Send to invalid rank");
        mt_expect_class(MT_HERE, MPI_Ssend(&buf, 1, MPI_INT, d, 0, c),
                        MPI_ERR_RANK, "Ssend to invalid rank");
        mt_expect_class(MT_HERE, MPI_Isend(&buf, 1, MPI_INT, d, 0, c, &req),
                        MPI_ERR_RANK, "Isend to invalid rank");
        mt_expect_class(MT_HERE, MPI_Recv(&buf, 1, MPI_INT, d, 0, c, &st),
                        MPI_ERR_RANK, "Recv from invalid rank");
        mt_expect_class(MT_HERE, MPI_Irecv(&buf, 1, MPI_INT, d, 0, c, &req),
                        MPI_ERR_RANK, "Irecv from invalid rank");
        mt_expect_class(MT_HERE, MPI_Iprobe(d, 0, c, &flag, &st),
                        MPI_ERR_RANK, "Iprobe of invalid rank");
    }
}

static void bad_counts(MPI_Comm c)
{
    MPI_Request req;
    MPI_Status st;
    int buf[4] = { 0 }, r = mt_right(), l = mt_left();
    mt_expect_class(MT_HERE, MPI_Send(buf, -1, MPI_INT, r, 0, c),
                    MPI_ERR_COUNT, "Send count -1");
    mt_expect_class(MT_HERE, MPI_Isend(buf, -3, MPI_INT, r, 0, c, &req),
                    MPI_ERR_COUNT, "Isend count -3");
    mt_expect_class(MT_HERE, MPI_Recv(buf, -1, MPI_INT, l, 0, c, &st),
                    MPI_ERR_COUNT, "Recv count -1");
    mt_expect_class(MT_HERE, MPI_Irecv(buf, -1, MPI_INT, l, 0, c, &req),
                    MPI_ERR_COUNT, "Irecv count -1");
}

static void bad_tags(MPI_Comm c)
{
    MPI_Request req;
    MPI_Status st;
    int buf = 0, r = mt_right(), l = mt_left(), *ub = NULL, flag = 0;
    mt_expect_class(MT_HERE, MPI_Send(&buf, 1, MPI_INT, r, -5, c),
                    MPI_ERR_TAG, "Send tag -5");
    mt_expect_class(MT_HERE, MPI_Send(&buf, 1, MPI_INT, r, MPI_ANY_TAG, c),
                    MPI_ERR_TAG, "Send tag MPI_ANY_TAG");
    mt_expect_class(MT_HERE, MPI_Isend(&buf, 1, MPI_INT, r, -2, c, &req),
                    MPI_ERR_TAG, "Isend tag -2");
    mt_expect_class(MT_HERE, MPI_Recv(&buf, 1, MPI_INT, l, -5, c, &st),
                    MPI_ERR_TAG, "Recv tag -5");
    MT_CHECK(MPI_Comm_get_attr(c, MPI_TAG_UB, &ub, &flag));
    mt_expect(MT_HERE, flag && *ub >= 32767, "MPI_TAG_UB missing or small");
    if (*ub < INT_MAX)
        mt_expect_class(MT_HERE, MPI_Send(&buf, 1, MPI_INT, r, *ub + 1, c),
                        MPI_ERR_TAG, "Send tag MPI_TAG_UB + 1");
}

static void bad_type_and_comm(void)
{
    MPI_Request req;
    int buf = 0, r = mt_right();
    mt_expect_class(MT_HERE, MPI_Send(&buf, 1, MPI_DATATYPE_NULL, r, 0,
                                      MPI_COMM_WORLD),
                    MPI_ERR_TYPE, "Send MPI_DATATYPE_NULL");
    mt_expect_class(MT_HERE, MPI_Isend(&buf, 1, MPI_INT, r, 0, MPI_COMM_NULL,
                                       &req),
                    MPI_ERR_COMM, "Isend on MPI_COMM_NULL");
}

/* Valid traffic on both communicators after all the errors. */
static void still_works(MPI_Comm c, int iter)
{
    unsigned char s[256], r[256];
    MPI_Status st;
    mt_fill(s, sizeof s, mt_rank(), iter);
    MT_CHECK(MPI_Sendrecv(s, 256, MPI_BYTE, mt_right(), 3, r, 256, MPI_BYTE,
                          mt_left(), 3, c, &st));
    mt_expect_status(MT_HERE, &st, mt_left(), 3, MPI_BYTE, 256);
    mt_verify(MT_HERE, r, 256, mt_left(), iter, "after user errors");
}

int main(int argc, char **argv)
{
    MPI_Comm d;
    mt_init(&argc, &argv, "t_usererr");
    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    bad_ranks(MPI_COMM_WORLD, mt_size());
    bad_ranks(d, mt_size());
    bad_counts(MPI_COMM_WORLD);
    bad_counts(d);
    bad_tags(MPI_COMM_WORLD);
    bad_tags(d);
    bad_type_and_comm();
    still_works(MPI_COMM_WORLD, 1);
    still_works(d, 2);
    MT_CHECK(MPI_Comm_free(&d));
    return mt_finish();
}
