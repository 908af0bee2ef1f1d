/* t_reqfree.c: MPI_Finalize completes requests freed while active.
 * MPI_Request_free on an active request lets the operation run on, and
 * MPI_Finalize must complete it (MPI-4.0 3.7.3, 11.2.2).  Rank 0 starts,
 * and frees, a 1 MiB send to rank 1 (a rendezvous: its data is fetched
 * from rank 0's memory), and receives from rank 1 of 64 B and 1 MiB by rank
 * and by MPI_ANY_SOURCE; then it calls MPI_Finalize at once.  Rank 1 waits
 * until rank 0 is inside MPI_Finalize (a short sleep: the test holds at any
 * timing, the sleep only makes this order the likely one), receives the
 * 1 MiB, checks it, then sends the three messages with blocking sends,
 * which must succeed.  After MPI_Finalize returns, rank 0's receive buffers
 * must hold the data.  Other ranks only finalize.
 */
#include "mpitest.h"

enum { BIG = 1 << 20, SMALL = 64, TAG_S = 80, TAG_B = 81, TAG_W = 82, TAG_X = 83 };

static int finalize_and_check(const unsigned char *s, const unsigned char *b,
                              const unsigned char *w)
{
    int rc = MPI_Finalize();
    size_t i;

    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "MPITEST FAIL t_reqfree rank %d: MPI_Finalize rc %d\n", mt_rank(), rc);
        return 1;
    }
    for (i = 0; s != NULL && i < BIG; i++) {
        unsigned char want_b = mt_byte(1, 1, i);
        if ((i < SMALL && (s[i] != mt_byte(1, 0, i) || w[i] != mt_byte(1, 2, i))) ||
            b[i] != want_b) {
            fprintf(stderr, "MPITEST FAIL t_reqfree rank 0: after MPI_Finalize byte %zu "
                    "of a freed receive is wrong (small %u, big %u, wildcard %u)\n", i,
                    i < SMALL ? s[i] : 0, b[i], i < SMALL ? w[i] : 0);
            return 1;
        }
    }
    printf("MPITEST OK t_reqfree rank %d/%d\n", mt_rank(), mt_size());
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    unsigned char *out, *s = NULL, *b = NULL, *w = NULL;
    MPI_Request r;

    mt_init(&argc, &argv, "t_reqfree");
    out = mt_malloc(BIG);
    if (mt_rank() == 0) {
        s = mt_zalloc(SMALL);
        b = mt_zalloc(BIG);
        w = mt_zalloc(SMALL);
        mt_fill(out, BIG, 0, 0);
        MT_CHECK(MPI_Isend(out, BIG, MPI_BYTE, 1, TAG_X, MPI_COMM_WORLD, &r));
        MT_CHECK(MPI_Request_free(&r));
        MT_CHECK(MPI_Irecv(s, SMALL, MPI_BYTE, 1, TAG_S, MPI_COMM_WORLD, &r));
        MT_CHECK(MPI_Request_free(&r));
        MT_CHECK(MPI_Irecv(b, BIG, MPI_BYTE, 1, TAG_B, MPI_COMM_WORLD, &r));
        MT_CHECK(MPI_Request_free(&r));
        MT_CHECK(MPI_Irecv(w, SMALL, MPI_BYTE, MPI_ANY_SOURCE, TAG_W, MPI_COMM_WORLD, &r));
        MT_CHECK(MPI_Request_free(&r));
        return finalize_and_check(s, b, w);
    }
    if (mt_rank() == 1) {
        unsigned char *in = mt_zalloc(BIG);
        mt_sleep_ms(300);
        MT_CHECK(MPI_Recv(in, BIG, MPI_BYTE, 0, TAG_X, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        mt_verify(MT_HERE, in, BIG, 0, 0, "the freed 1 MiB send");
        mt_fill(out, BIG, 1, 0);
        MT_CHECK(MPI_Send(out, SMALL, MPI_BYTE, 0, TAG_S, MPI_COMM_WORLD));
        mt_fill(out, BIG, 1, 1);
        MT_CHECK(MPI_Send(out, BIG, MPI_BYTE, 0, TAG_B, MPI_COMM_WORLD));
        mt_fill(out, BIG, 1, 2);
        MT_CHECK(MPI_Send(out, SMALL, MPI_BYTE, 0, TAG_W, MPI_COMM_WORLD));
        free(in);
    }
    return finalize_and_check(NULL, NULL, NULL);
}
