/* t_truncate.c: a message longer than the receive buffer is an error of
 * class MPI_ERR_TRUNCATE (under MPI_ERRORS_RETURN), for eager and rendezvous
 * sizes, through MPI_Recv, MPI_Wait, MPI_Waitall (MPI_ERR_IN_STATUS with
 * per-request errors) and MPI_Mrecv; the sender is unaffected and the same
 * envelope works normally afterwards.  A second pass also requires that
 * nothing past the receive buffer is written (guard bytes). */
#include "mpitest.h"

/* Set for the second pass only.  The receive buffers always sit inside
 * allocations big enough for the whole message, so an implementation that
 * overflows them is reported by the guard check rather than crashing. */
static int check_guards;

enum { GUARD = 4096, TAG_T = 40, TAG_ALL = 41, TAG_M = 42 };
enum { MAXSZ = 4 << 20 };

struct trunc_case {
    size_t sent, room;
};
static const struct trunc_case cases[] = {
    { 16, 8 }, { 1, 0 }, { 65536, 100 }, { 1 << 20, 65536 },
    { 4 << 20, 1 << 20 }, { 4 << 20, 0 },
};
enum { NCASES = sizeof cases / sizeof cases[0] };

static void guard_set(unsigned char *b, size_t room)
{
    memset(b + room, 0x5A, GUARD);
}

static void guard_check(mt_loc at, const unsigned char *b, size_t room)
{
    if (!check_guards)
        return;
    for (size_t i = room; i < room + GUARD; i++)
        mt_expect(at, b[i] == 0x5A, "truncated receive of %zu B wrote "
                  "past its buffer (byte %zu)", room, i);
}

/* After a truncation, an exactly sized message with the same envelope. */
static void follow_up(unsigned char *sb, unsigned char *rb, int tag, int it)
{
    MPI_Status st;
    mt_fill(sb, 1000, mt_rank(), it);
    MT_CHECK(MPI_Sendrecv(sb, 1000, MPI_BYTE, mt_right(), tag, rb, 1000,
                          MPI_BYTE, mt_left(), tag, MPI_COMM_WORLD, &st));
    mt_expect_status(MT_HERE, &st, mt_left(), tag, MPI_BYTE, 1000);
    mt_verify(MT_HERE, rb, 1000, mt_left(), it, "after truncation");
}

/* Blocking MPI_Recv (nb == 0) or MPI_Irecv + MPI_Wait (nb == 1). */
static void trunc_one(const struct trunc_case *c, int nb, unsigned char *sb,
                      unsigned char *rb, int it)
{
    MPI_Request sreq, rreq;
    MPI_Status st;
    int rc;
    mt_fill(sb, c->sent, mt_rank(), it);
    guard_set(rb, c->room);
    MT_CHECK(MPI_Isend(sb, (int)c->sent, MPI_BYTE, mt_right(), TAG_T,
                       MPI_COMM_WORLD, &sreq));
    if (nb) {
        MT_CHECK(MPI_Irecv(rb, (int)c->room, MPI_BYTE, mt_left(), TAG_T,
                           MPI_COMM_WORLD, &rreq));
        rc = MPI_Wait(&rreq, &st);
    } else {
        rc = MPI_Recv(rb, (int)c->room, MPI_BYTE, mt_left(), TAG_T,
                      MPI_COMM_WORLD, &st);
    }
    mt_expect_class(MT_HERE, rc, MPI_ERR_TRUNCATE,
                    nb ? "MPI_Wait on truncated Irecv" : "truncated MPI_Recv");
    guard_check(MT_HERE, rb, c->room);
    /* truncation is the receiver's error: the send completes normally */
    MT_CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    follow_up(sb, rb, TAG_T, it + 1);
}

/* Three receives, the middle one too small: MPI_Waitall reports
 * MPI_ERR_IN_STATUS, the per-request errors say which, and the two others
 * are delivered intact. */
static void trunc_waitall(size_t n, unsigned char *sb, unsigned char *rb,
                          int it)
{
    MPI_Request req[6];
    MPI_Status st[3];
    size_t room[3] = { n, n / 2, n };
    int rc;
    for (int k = 0; k < 3; k++)
        MT_CHECK(MPI_Irecv(rb + k * (n + GUARD), (int)room[k], MPI_BYTE,
                           mt_left(), TAG_ALL, MPI_COMM_WORLD, &req[k]));
    for (int k = 0; k < 3; k++) {
        guard_set(rb + k * (n + GUARD), room[k]);
        mt_fill(sb + k * n, n, mt_rank(), it + k);
        MT_CHECK(MPI_Isend(sb + k * n, (int)n, MPI_BYTE, mt_right(), TAG_ALL,
                           MPI_COMM_WORLD, &req[3 + k]));
    }
    for (int k = 0; k < 3; k++)
        st[k].MPI_ERROR = -12345;
    rc = MPI_Waitall(3, req, st);
    mt_expect_class(MT_HERE, rc, MPI_ERR_IN_STATUS, "Waitall");
    mt_expect_class(MT_HERE, st[1].MPI_ERROR, MPI_ERR_TRUNCATE,
                    "Waitall status[1]");
    for (int k = 0; k < 3; k += 2) {
        /* MPI_ERR_PENDING: neither failed nor completed yet (allowed), so
         * the request must still be there to be completed */
        if (st[k].MPI_ERROR == MPI_ERR_PENDING) {
            mt_expect(MT_HERE, req[k] != MPI_REQUEST_NULL, "Waitall said "
                      "MPI_ERR_PENDING for request %d but freed it", k);
            MT_CHECK(MPI_Wait(&req[k], &st[k]));
        } else
            mt_expect(MT_HERE, st[k].MPI_ERROR == MPI_SUCCESS,
                      "Waitall status[%d].MPI_ERROR = %d", k,
                      st[k].MPI_ERROR);
        mt_expect_status(MT_HERE, &st[k], mt_left(), TAG_ALL, MPI_BYTE,
                         (int)n);
        mt_verify(MT_HERE, rb + k * (n + GUARD), n, mt_left(), it + k,
                  "Waitall neighbour of a truncation");
    }
    for (int k = 0; k < 3; k++)
        guard_check(MT_HERE, rb + k * (n + GUARD), room[k]);
    MT_CHECK(MPI_Waitall(3, req + 3, MPI_STATUSES_IGNORE));
    follow_up(sb, rb, TAG_ALL, it + 10);
}

/* A matched probe, then MPI_Mrecv with too small a buffer. */
static void trunc_mrecv(size_t n, unsigned char *sb, unsigned char *rb,
                        int it)
{
    MPI_Request sreq;
    MPI_Message msg;
    MPI_Status st;
    int rc;
    mt_fill(sb, n, mt_rank(), it);
    MT_CHECK(MPI_Isend(sb, (int)n, MPI_BYTE, mt_right(), TAG_M,
                       MPI_COMM_WORLD, &sreq));
    MT_CHECK(MPI_Mprobe(mt_left(), TAG_M, MPI_COMM_WORLD, &msg, &st));
    mt_expect_status(MT_HERE, &st, mt_left(), TAG_M, MPI_BYTE, (int)n);
    guard_set(rb, n - 1);
    rc = MPI_Mrecv(rb, (int)n - 1, MPI_BYTE, &msg, &st);
    mt_expect_class(MT_HERE, rc, MPI_ERR_TRUNCATE, "truncated MPI_Mrecv");
    guard_check(MT_HERE, rb, n - 1);
    MT_CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    follow_up(sb, rb, TAG_M, it + 1);
}

int main(int argc, char **argv)
{
    unsigned char *sb, *rb;
    int it = 0;
    mt_init(&argc, &argv, "t_truncate");
    sb = mt_malloc(3 * MAXSZ);
    rb = mt_malloc(3 * (MAXSZ + GUARD));
    for (check_guards = 0; check_guards < 2; check_guards++) {
        for (int nb = 0; nb < 2; nb++)
            for (int c = 0; c < NCASES; c++, it += 2)
                trunc_one(&cases[c], nb, sb, rb, it);
        trunc_waitall(64, sb, rb, 100);
        trunc_waitall(MAXSZ, sb, rb, 200);
        trunc_mrecv(64, sb, rb, 300);
        trunc_mrecv(MAXSZ, sb, rb, 400);
    }
    free(sb);
    free(rb);
    return mt_finish();
}
