/* tf_fail_rndv: a peer dies in the middle of rendezvous and eager streams;
 * what the survivor gets is consistent with the dead-peer receive rules
 * (MPI-FT 17.6 and its advice to implementors; issue rules a-d).
 *
 * Rank 0 survives and talks to three victims in turn:
 *  A. rank 1 sends a stream of 4 MiB messages into receives rank 0 posted
 *     beforehand: KA with MPI_Send, which must arrive intact, then two
 *     more with MPI_Isend; it dies (ft_die) as soon as rank 0, having
 *     received the first KA, tells it to, i.e. while the other two are
 *     being transferred.  Each of those ends either intact or with
 *     MPIX_ERR_RANK_FAIL_STOP, never a success after a failure (in order,
 *     no gap); the receive for a message never sent ends with the class.
 *     (A completed rendezvous MPI_Send alone does not prove delivery: over
 *     TCP, UCX pushes the data and completes the send once it is queued.)
 *     Earlier, rank 1 had sent on tag E: NE eager messages, a 1 MiB one
 *     (rendezvous, never fetched: rank 0 does not receive tag E until the
 *     failure is known) and 2 more eager ones, then two eager messages on
 *     tag D.  Afterwards: the NE eager ones arrive in order (rule a), the
 *     rendezvous one fails (payload no longer fetchable), the 2 buffered
 *     eager ones after it fail too (rule c: a later receive must not
 *     overtake a failed one), tag D still gets its first message (rule d),
 *     an MPI_ANY_TAG receive fails although tag D's second message is
 *     buffered, and so does tag D after it (rule c, either side any-tag).
 *  B. rank 2 receives 4 MiB messages; pml_failstop_inject kills it when
 *     the header of the (KB+1)-th arrives, i.e. while rank 0's send of it
 *     is pending: that send, and a later one, end with the class.
 *  C. rank 3 sends NC eager messages, a 1 MiB one and 3 eager ones on one
 *     tag while rank 0 receives them, and dies right after: every message
 *     rank 0 gets is intact and in order; after the first error every
 *     later receive from rank 3 on that tag fails too (rule c).
 * FS_TEST_NPS: 4
 * FS_TEST_OPTS: --mca pml_failstop_inject 2:after=3
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

#include <sched.h>

#define BIG ((size_t)4 << 20)   /* rendezvous for every transport */
#define MID ((size_t)1 << 20)   /* rendezvous too */
#define SMALL ((size_t)256)     /* eager */

enum { KA = 2, NA = KA + 3 };   /* A: completed, in flight (2), never sent */
enum { NE = 20 };               /* A: eager on tag E before its rendezvous */
enum { KB = 2 };                /* B: completed before the victim dies */
enum { NC = 100 };              /* C: eager before the rendezvous */
enum { TAG_GO = 1, TAG_A = 10, TAG_E = 11, TAG_D = 12, TAG_B = 20,
       TAG_C = 30 };

/* ---- helpers ------------------------------------------------------------- */

/* Message seq of tag from src: its seq in the first 8 bytes, then a
 * pattern of (src, tag, seq). */
static void fill_msg(void *buf, size_t n, int src, int tag, int seq)
{
    int64_t s = seq;
    memcpy(buf, &s, sizeof s);
    mt_fill((char *)buf + 8, n - 8, src, tag * 100000 + seq);
}

/* Checks that what arrived is message seq of tag from src, n bytes. */
static void check_msg(mt_loc at, const void *buf, const MPI_Status *st,
                      size_t n, int src, int tag, int seq, const char *what)
{
    int64_t s;
    int count = -1;

    MT_CHECK(MPI_Get_count(st, MPI_BYTE, &count));
    memcpy(&s, buf, sizeof s);
    mt_expect(at, st->MPI_SOURCE == src && st->MPI_TAG == tag,
              "%s: from %d tag %d, want %d/%d", what, st->MPI_SOURCE,
              st->MPI_TAG, src, tag);
    mt_expect(at, s == seq, "%s: got message %lld where %d was due (out of "
              "order, or a gap)", what, (long long)s, seq);
    mt_expect(at, count == (int)n, "%s: message %d has %d bytes, want %zu",
              what, seq, count, n);
    mt_verify(at, (const char *)buf + 8, n - 8, src, tag * 100000 + seq,
              what);
}

/* Polls req for at most FT_DEADLINE seconds; nap: yield the CPU between
 * polls (ranks that only wait, so the 2 cores go to the ones working).
 * Returns the completion's error code. */
static int wait_bounded(mt_loc at, MPI_Request *req, MPI_Status *st, int nap,
                        const char *what)
{
    int flag = 0, rc;
    double end = mt_now() + FT_DEADLINE;

    for (;;) {
        rc = MPI_Test(req, &flag, st);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        if (mt_now() > end)
            mt_fail(at, "%s: not complete after %.0f s", what, FT_DEADLINE);
        if (nap)
            sched_yield();
    }
}

static int recv_bounded(mt_loc at, void *buf, size_t n, int src, int tag,
                        MPI_Status *st, int nap, const char *what)
{
    MPI_Request rq;
    MT_CHECK(MPI_Irecv(buf, (int)n, MPI_BYTE, src, tag, MPI_COMM_WORLD, &rq));
    return wait_bounded(at, &rq, st, nap, what);
}

static int send_bounded(mt_loc at, const void *buf, size_t n, int dst,
                        int tag, int nap, const char *what)
{
    MPI_Request rq;
    MPI_Status st;
    MT_CHECK(MPI_Isend(buf, (int)n, MPI_BYTE, dst, tag, MPI_COMM_WORLD, &rq));
    return wait_bounded(at, &rq, &st, nap, what);
}

static void go(int victim)
{
    int x = 1;
    MT_CHECK(send_bounded(MT_HERE, &x, sizeof x, victim, TAG_GO, 0, "go"));
}

static void wait_go(void)
{
    int x = 0;
    MPI_Status st;
    MT_CHECK(recv_bounded(MT_HERE, &x, sizeof x, 0, TAG_GO, &st, 1, "go"));
}

/* ---- A: the sender dies (rank 1) ----------------------------------------- */

static void victim_a(void)
{
    char *e = mt_malloc(MID), *b[NA - 1];
    MPI_Request rq[2];
    int i;

    /* tag E: eager, one rendezvous (left pending), eager; then tag D */
    for (i = 0; i < NE + 3; i++) {
        size_t n = i == NE ? MID : SMALL;
        fill_msg(e, n, 1, TAG_E, i);
        if (i == NE)
            MT_CHECK(MPI_Isend(e, (int)n, MPI_BYTE, 0, TAG_E, MPI_COMM_WORLD,
                               &rq[0]));
        else
            MT_CHECK(send_bounded(MT_HERE, e, n, 0, TAG_E, 0, "tag E"));
        if (i == NE)
            e = mt_malloc(MID);     /* the pending one keeps its buffer */
    }
    for (i = 0; i < 2; i++) {
        fill_msg(e, SMALL, 1, TAG_D, i);
        MT_CHECK(send_bounded(MT_HERE, e, SMALL, 0, TAG_D, 0, "tag D"));
    }

    for (i = 0; i < NA - 1; i++) {
        b[i] = mt_malloc(BIG);
        fill_msg(b[i], BIG, 1, TAG_A, i);
    }
    wait_go();
    for (i = 0; i < KA; i++)
        MT_CHECK(send_bounded(MT_HERE, b[i], BIG, 0, TAG_A, 0, "stream A"));
    MT_CHECK(MPI_Isend(b[KA], (int)BIG, MPI_BYTE, 0, TAG_A, MPI_COMM_WORLD,
                       &rq[0]));
    MT_CHECK(MPI_Isend(b[KA + 1], (int)BIG, MPI_BYTE, 0, TAG_A,
                       MPI_COMM_WORLD, &rq[1]));
    wait_go();  /* rank 0 has the first KA: die with the others in flight */
    ft_die();
}

static void survivor_a(void)
{
    char *b[NA], *e = mt_malloc(MID);
    MPI_Request rq[NA];
    MPI_Status st;
    int i, rc, failed_at = -1, x;

    for (i = 0; i < NA; i++) {
        b[i] = mt_zalloc(BIG);
        MT_CHECK(MPI_Irecv(b[i], (int)BIG, MPI_BYTE, 1, TAG_A, MPI_COMM_WORLD,
                           &rq[i]));
    }
    go(1);
    for (i = 0; i < NA; i++) {
        rc = wait_bounded(MT_HERE, &rq[i], &st, 0, "stream A receive");
        if (i < KA) {
            /* the sender is alive until told otherwise below */
            MT_CHECK(rc);
            if (i == KA - 1)
                go(1);
        } else if (i == NA - 1) {
            ft_expect_failed(MT_HERE, rc, "A: receive of a message never "
                             "sent");
        } else if (rc != MPI_SUCCESS) {
            ft_expect_failed(MT_HERE, rc, "A: message in flight when the "
                             "sender died");
        }
        if (rc == MPI_SUCCESS) {
            mt_expect(MT_HERE, failed_at < 0, "A: message %d received after "
                      "message %d failed (a gap)", i, failed_at);
            check_msg(MT_HERE, b[i], &st, BIG, 1, TAG_A, i, "A");
        } else if (failed_at < 0) {
            failed_at = i;
        }
    }
    fprintf(stderr, "MPITEST NOTE tf_fail_rndv: A: %d of %d in-flight "
            "messages arrived\n", failed_at - KA, NA - 1 - KA);
    /* nothing else will come on tag A */
    ft_expect_failed(MT_HERE, recv_bounded(MT_HERE, b[0], BIG, 1, TAG_A, &st,
                                           0, "A again"), "A: new receive");

    /* tag E: the eager messages before the rendezvous stay deliverable */
    for (i = 0; i < NE; i++) {
        MT_CHECK(recv_bounded(MT_HERE, e, MID, 1, TAG_E, &st, 0, "E"));
        check_msg(MT_HERE, e, &st, SMALL, 1, TAG_E, i, "E eager before the "
                  "rendezvous");
    }
    ft_expect_failed(MT_HERE, recv_bounded(MT_HERE, e, MID, 1, TAG_E, &st, 0,
                                           "E rendezvous"),
                     "E: rendezvous message of a process known failed");
    for (i = NE + 1; i < NE + 3; i++)
        ft_expect_failed(MT_HERE, recv_bounded(MT_HERE, e, MID, 1, TAG_E, &st,
                                               0, "E after"),
                         "E: buffered eager message after a failed receive "
                         "(rule c)");
    /* rule d: another specific tag still gets its buffered messages */
    MT_CHECK(recv_bounded(MT_HERE, e, MID, 1, TAG_D, &st, 0, "D"));
    check_msg(MT_HERE, e, &st, SMALL, 1, TAG_D, 0, "D after E failed");
    /* rule c, either side MPI_ANY_TAG: an any-tag receive could match what
     * the failed tag E receives could, so it fails although tag D's second
     * message is buffered; after it, so does tag D */
    ft_expect_failed(MT_HERE, recv_bounded(MT_HERE, e, MID, 1, MPI_ANY_TAG,
                                           &st, 0, "any tag"),
                     "any-tag receive after a failed receive (rule c)");
    x = recv_bounded(MT_HERE, e, MID, 1, TAG_D, &st, 0, "D again");
    ft_expect_failed(MT_HERE, x, "tag D after a failed any-tag receive");
    for (i = 0; i < NA; i++)
        free(b[i]);
    free(e);
}

/* ---- B: the receiver dies (rank 2, pml_failstop_inject) ------------------ */

static void victim_b(void)
{
    char *b = mt_malloc(BIG);
    MPI_Status st;

    /* pml_failstop_inject kills this rank when the header of message KB
     * arrives: the (KB+1)-th message it receives */
    for (int i = 0; i <= KB; i++) {
        MT_CHECK(recv_bounded(MT_HERE, b, BIG, 0, TAG_B, &st, 1, "B"));
        check_msg(MT_HERE, b, &st, BIG, 0, TAG_B, i, "B");
    }
    mt_fail(MT_HERE, "B: still alive after %d messages: pml_failstop_inject "
            "did not fire", KB + 1);
}

static void survivor_b(void)
{
    char *b[KB + 2];
    MPI_Request rq;
    MPI_Status st;
    int i;

    for (i = 0; i < KB + 2; i++) {
        b[i] = mt_malloc(BIG);
        fill_msg(b[i], BIG, 0, TAG_B, i);
    }
    for (i = 0; i < KB; i++)
        MT_CHECK(send_bounded(MT_HERE, b[i], BIG, 2, TAG_B, 0, "B"));
    /* the receiver dies when this one's header arrives */
    ft_expect_failed(MT_HERE, send_bounded(MT_HERE, b[KB], BIG, 2, TAG_B, 0,
                                           "B pending"),
                     "B: send pending when the receiver died");
    MT_CHECK(MPI_Isend(b[KB + 1], (int)BIG, MPI_BYTE, 2, TAG_B,
                       MPI_COMM_WORLD, &rq));
    ft_expect_failed(MT_HERE, wait_bounded(MT_HERE, &rq, &st, 0, "B after"),
                     "B: Isend to the dead receiver");
    ft_expect_failed(MT_HERE, send_bounded(MT_HERE, b[0], SMALL, 2, TAG_B, 0,
                                           "B eager"),
                     "B: eager send to the dead receiver");
    for (i = 0; i < KB + 2; i++)
        free(b[i]);
}

/* ---- C: eager stream, then death (rank 3) -------------------------------- */

static void victim_c(void)
{
    char *s = mt_malloc(SMALL), *m = mt_malloc(MID);
    MPI_Request rq;
    int i;

    wait_go();
    for (i = 0; i < NC + 4; i++) {
        if (i == NC) {
            fill_msg(m, MID, 3, TAG_C, i);
            MT_CHECK(MPI_Isend(m, (int)MID, MPI_BYTE, 0, TAG_C,
                               MPI_COMM_WORLD, &rq));
        } else {
            fill_msg(s, SMALL, 3, TAG_C, i);
            MT_CHECK(send_bounded(MT_HERE, s, SMALL, 0, TAG_C, 0, "C"));
        }
    }
    ft_die();
}

static void survivor_c(void)
{
    char *m = mt_malloc(MID);
    MPI_Status st;
    int i, rc, got = 0;

    go(3);
    for (i = 0; i < NC + 4; i++) {
        rc = recv_bounded(MT_HERE, m, MID, 3, TAG_C, &st, 0, "C");
        if (rc != MPI_SUCCESS)
            break;
        check_msg(MT_HERE, m, &st, i == NC ? MID : SMALL, 3, TAG_C, i, "C");
        got++;
    }
    if (i < NC + 4)
        ft_expect_failed(MT_HERE, rc, "C: first failed receive");
    /* after the first error from rank 3 on tag C, every later receive on
     * it fails too, whatever is still buffered (rule c); if all arrived,
     * there is nothing more anyway */
    for (int j = 0; j < 4; j++) {
        int64_t seq = -1;
        memset(m, 0xff, 8);
        rc = recv_bounded(MT_HERE, m, MID, 3, TAG_C, &st, 0, "C after");
        memcpy(&seq, m, sizeof seq);
        mt_expect(MT_HERE, rc != MPI_SUCCESS, "C: receive %d after the first "
                  "failure (at message %d) got message %lld (rule c)", j, i,
                  (long long)seq);
        ft_expect_failed(MT_HERE, rc, "C: receive after the first failure");
    }
    fprintf(stderr, "MPITEST NOTE tf_fail_rndv: C: %d of %d messages "
            "arrived\n", got, NC + 4);
    free(m);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv, "tf_fail_rndv");
    mt_expect(MT_HERE, mt_size() == 4, "runs at 4 ranks, not %d", mt_size());
    switch (mt_rank()) {
    case 0:
        ft_check_class();
        survivor_a();
        survivor_b();
        survivor_c();
        mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 3,
                  "%d failed, 3 died", ft_failed_count(MPI_COMM_WORLD));
        break;
    case 1:
        victim_a();
        break;
    case 2:
        victim_b();
        break;
    default:
        victim_c();
        break;
    }
    return ft_finish();
}
