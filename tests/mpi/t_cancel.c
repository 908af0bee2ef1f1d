/* t_cancel.c: MPI_Cancel of receives.
 *   - a posted receive that never matched: cancellation succeeds, the buffer
 *     is untouched, and a later message with the same envelope goes to a
 *     later receive (the cancelled one must not swallow it);
 *   - the same for a persistent receive, which can then be restarted, and
 *     for a batch of wildcard receives;
 *   - a receive that already matched (completed, or matched by a completed
 *     synchronous send): cancellation fails and the data is intact. */
#include "mpitest.h"

enum { TAG_LATE = 10, TAG_PERS = 11, TAG_WILD = 12, TAG_DONE = 13,
       TAG_DATA = 14 };
enum { SMALL = 64, BIG = 4 << 20 };

static void expect_cancelled(mt_loc at, MPI_Request *req, int want,
                             const char *what)
{
    MPI_Status st;
    int c = -1;
    /* a cancelled receive must complete locally */
    mt_test_until(at, req, &st, 10.0, what);
    MT_CHECK(MPI_Test_cancelled(&st, &c));
    mt_expect(at, c == want, "%s: MPI_Test_cancelled says %d, want %d", what,
              c, want);
}

static void expect_untouched(mt_loc at, const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mt_expect(at, b[i] == 0xC5, "cancelled receive wrote byte %zu", i);
}

/* Cancel a posted receive before anything is sent, then send a message that
 * would have matched it; a fresh receive must get that message. */
static void cancel_unmatched(unsigned char *a, unsigned char *b)
{
    MPI_Request req;
    MPI_Status st;
    memset(a, 0xC5, SMALL);
    MT_CHECK(MPI_Irecv(a, SMALL, MPI_BYTE, mt_left(), TAG_LATE,
                       MPI_COMM_WORLD, &req));
    MT_CHECK(MPI_Cancel(&req));
    expect_cancelled(MT_HERE, &req, 1, "unmatched Irecv");
    mt_expect(MT_HERE, req == MPI_REQUEST_NULL, "request not freed");
    /* everyone cancelled before anyone sends */
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    mt_fill(b, SMALL, mt_rank(), TAG_LATE);
    MT_CHECK(MPI_Sendrecv(b, SMALL, MPI_BYTE, mt_right(), TAG_LATE, b + SMALL,
                          SMALL, MPI_BYTE, mt_left(), TAG_LATE,
                          MPI_COMM_WORLD, &st));
    mt_verify(MT_HERE, b + SMALL, SMALL, mt_left(), TAG_LATE, "after cancel");
    expect_untouched(MT_HERE, a, SMALL);
}

/* A persistent receive: start, cancel, restart, then really receive. */
static void cancel_persistent(unsigned char *a, unsigned char *b)
{
    MPI_Request req;
    MPI_Status st;
    memset(a, 0xC5, SMALL);
    MT_CHECK(MPI_Recv_init(a, SMALL, MPI_BYTE, MPI_ANY_SOURCE, TAG_PERS,
                           MPI_COMM_WORLD, &req));
    for (int k = 0; k < 3; k++) {
        MT_CHECK(MPI_Start(&req));
        MT_CHECK(MPI_Cancel(&req));
        expect_cancelled(MT_HERE, &req, 1, "persistent Irecv");
        mt_expect(MT_HERE, req != MPI_REQUEST_NULL, "persistent freed");
    }
    expect_untouched(MT_HERE, a, SMALL);
    MT_CHECK(MPI_Start(&req));
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    mt_fill(b, SMALL, mt_rank(), TAG_PERS);
    MT_CHECK(MPI_Send(b, SMALL, MPI_BYTE, mt_right(), TAG_PERS,
                      MPI_COMM_WORLD));
    MT_CHECK(MPI_Wait(&req, &st));
    mt_expect_status(MT_HERE, &st, mt_left(), TAG_PERS, MPI_BYTE, SMALL);
    mt_verify(MT_HERE, a, SMALL, mt_left(), TAG_PERS, "restarted recv");
    MT_CHECK(MPI_Request_free(&req));
}

/* Many wildcard receives cancelled together, then traffic still flows. */
static void cancel_many_wild(unsigned char *a, unsigned char *b)
{
    enum { K = 16 };
    MPI_Request req[K];
    MPI_Status st[K];
    for (int k = 0; k < K; k++)
        MT_CHECK(MPI_Irecv(a + k * 8, 8, MPI_BYTE, MPI_ANY_SOURCE,
                           k % 2 ? MPI_ANY_TAG : TAG_WILD, MPI_COMM_WORLD,
                           &req[k]));
    for (int k = K - 1; k >= 0; k--)
        MT_CHECK(MPI_Cancel(&req[k]));
    MT_CHECK(MPI_Waitall(K, req, st));
    for (int k = 0; k < K; k++) {
        int c = 0;
        MT_CHECK(MPI_Test_cancelled(&st[k], &c));
        mt_expect(MT_HERE, c, "wildcard receive %d not cancelled", k);
    }
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    mt_fill(b, SMALL, mt_rank(), TAG_WILD);
    MT_CHECK(MPI_Sendrecv(b, SMALL, MPI_BYTE, mt_right(), TAG_WILD, a, SMALL,
                          MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                          MPI_COMM_WORLD, &st[0]));
    mt_expect_status(MT_HERE, &st[0], mt_left(), TAG_WILD, MPI_BYTE, SMALL);
    mt_verify(MT_HERE, a, SMALL, mt_left(), TAG_WILD, "after wild cancel");
}

/* The receive completed (seen through MPI_Request_get_status, which does not
 * free it): cancelling it now must fail and leave the data alone. */
static void cancel_completed(unsigned char *a, unsigned char *b, size_t n)
{
    MPI_Request req;
    MPI_Status st;
    int flag = 0, iter = 100 + (int)(n & 0xff);
    double end = mt_now() + 20.0;
    MT_CHECK(MPI_Irecv(a, (int)n, MPI_BYTE, mt_left(), TAG_DATA,
                       MPI_COMM_WORLD, &req));
    mt_fill(b, n, mt_rank(), iter);
    MT_CHECK(MPI_Send(b, (int)n, MPI_BYTE, mt_right(), TAG_DATA,
                      MPI_COMM_WORLD));
    while (!flag) {
        MT_CHECK(MPI_Request_get_status(req, &flag, &st));
        mt_expect(MT_HERE, flag || mt_now() < end, "receive never completed");
    }
    MT_CHECK(MPI_Cancel(&req));
    expect_cancelled(MT_HERE, &req, 0, "completed Irecv");
    mt_verify(MT_HERE, a, n, mt_left(), iter, "cancel after completion");
}

/* The left neighbour's Ssend returned, so our receive has matched; only then
 * (told by a second message) do we cancel it: it must not be cancelled. */
static void cancel_matched_ssend(unsigned char *a, unsigned char *b,
                                 size_t n)
{
    MPI_Request req, sreq;
    int iter = 200 + (int)(n & 0xff);
    MT_CHECK(MPI_Irecv(a, (int)n, MPI_BYTE, mt_left(), TAG_DATA,
                       MPI_COMM_WORLD, &req));
    mt_fill(b, n, mt_rank(), iter);
    /* nonblocking, so the ring cannot deadlock on the synchronous send */
    MT_CHECK(MPI_Issend(b, (int)n, MPI_BYTE, mt_right(), TAG_DATA,
                        MPI_COMM_WORLD, &sreq));
    MT_CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    MT_CHECK(MPI_Sendrecv(NULL, 0, MPI_BYTE, mt_right(), TAG_DONE, NULL, 0,
                          MPI_BYTE, mt_left(), TAG_DONE, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
    MT_CHECK(MPI_Cancel(&req));
    expect_cancelled(MT_HERE, &req, 0, "matched Irecv");
    mt_verify(MT_HERE, a, n, mt_left(), iter, "cancel after match");
}

int main(int argc, char **argv)
{
    unsigned char *a, *b;
    mt_init(&argc, &argv, "t_cancel");
    a = mt_malloc(BIG);
    b = mt_malloc(BIG);
    cancel_unmatched(a, b);
    cancel_persistent(a, b);
    cancel_many_wild(a, b);
    cancel_completed(a, b, 8);
    cancel_completed(a, b, BIG);
    cancel_matched_ssend(a, b, 8);
    cancel_matched_ssend(a, b, BIG);
    free(a);
    free(b);
    return mt_finish();
}
