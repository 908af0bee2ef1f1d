/* tf_fail_threads: MPI_ANY_SOURCE re-enabling from several threads, the
 * chapter's Example 17.5 (MPI-FT 17.6.3) under MPI_THREAD_MULTIPLE.
 *
 * Rank 0 is a server: NTHR threads each run the Example's loop: under a
 * reader lock, post a wildcard receive for client data; when it fails with
 * MPIX_ERR_RANK_FAIL_STOP, drop the reader lock, take the writer lock and
 * (unless another thread already did, recognize_cnt) call
 * MPIX_Comm_reenable_any_source.  The other ranks are clients streaming
 * sequence-numbered messages to rank 0, WIN at a time (the server returns a
 * credit per WIN received); odd-ranked clients die mid-stream (after
 * several credits), the others send everything and a final "done".
 * Checked:
 *   - every pending wildcard receive ends with the class when a client
 *     fails (17.6): a thread holding the reader lock in a receive that never
 *     ended would block the writer forever (bounded: FT_DEADLINE);
 *   - ANY_SOURCE is usable again after MPIX_Comm_reenable_any_source (no
 *     receive fails without a new failure: at most one re-enable per dead
 *     client), and its failed group ends up exactly the dead clients;
 *   - no message is lost or duplicated: every live client's messages
 *     arrive exactly once with the right payload; a dead client's arrive as
 *     a gap-free prefix of what it sent (those buffered when it died are
 *     still delivered, 17.6), at least the WIN-multiples it got credit for;
 *   - once everything is recognised, nothing is left to receive.
 * MPI_THREAD_MULTIPLE is required: failstop provides it.
 * FS_TEST_NPS: 3 4
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

#include <pthread.h>

enum { NTHR = 2, WIN = 40, NMSG = 240, PAY = 56 };
enum { TAG_DATA = 21, TAG_CREDIT = 22 };
#define SEQ_DONE (-1)

typedef struct {
    int32_t src;
    int32_t seq;    /* SEQ_DONE: the client sent everything */
    unsigned char data[PAY];
} msg_t;

static int victim(int r) { return r % 2 == 1; }

/* How many messages a dying client sends before it dies: after 2 credits
 * for rank 1, after 1 for rank 3 (they die at different points). */
static int death_point(int r) { return r == 1 ? 2 * WIN + 13 : WIN + 27; }

/* Set once every client is accounted for: the server threads stop. */
static volatile int finished;

/* Polls req for at most FT_DEADLINE; if finished becomes set first,
 * cancels the receive.  Returns the completion's error code; *got = 0 if
 * it was cancelled. */

static int wait_or_stop(MPI_Request *req, MPI_Status *st, int *got,
                        const char *what)
{
    int flag = 0, rc, cancelled = 0;
    double end = mt_now() + FT_DEADLINE;

    *got = 1;
    for (;;) {
        rc = MPI_Test(req, &flag, st);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        if (__atomic_load_n(&finished, __ATOMIC_ACQUIRE)) {
            MT_CHECK(MPI_Cancel(req));
            rc = MPI_Wait(req, st);
            if (rc == MPI_SUCCESS) {
                MT_CHECK(MPI_Test_cancelled(st, &cancelled));
                *got = !cancelled;
            }
            return rc;
        }
        if (mt_now() > end)
            mt_fail(MT_HERE, "%s: not complete after %.0f s", what,
                    FT_DEADLINE);
    }
}

/* ---- server -------------------------------------------------------------- */

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;  /* the tables below */
static int recognize_cnt;               /* under rw */
static MPI_Group failed_group;          /* under rw */
static int nclients;
static unsigned char **seen;            /* [src][seq] */
static int *count, *done;               /* per source */
static int wild_failures;               /* under mu */

/* 1 if world rank r is in g. */
static int group_has(MPI_Group g, int r)
{
    MPI_Group world;
    int n = 0, out, found = 0;

    MT_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MT_CHECK(MPI_Group_size(g, &n));
    for (int i = 0; i < n && !found; i++) {
        MT_CHECK(MPI_Group_translate_ranks(g, 1, &i, world, &out));
        found = out == r;
    }
    MT_CHECK(MPI_Group_free(&world));
    return found;
}

/* The Example's ok_to_continue, turned around: everything is accounted for
 * when every live client said done and every dying one is recognised as
 * failed (called under rw, reader or writer). */
static int all_accounted(void)
{
    int ok = 1;

    pthread_mutex_lock(&mu);
    for (int c = 1; c <= nclients && ok; c++)
        ok = victim(c) ? group_has(failed_group, c) :
                         done[c] && count[c] == NMSG;
    pthread_mutex_unlock(&mu);
    return ok;
}

/* Records one message; returns the client to send a credit to, or 0. */
static int take(const msg_t *m, const MPI_Status *st)
{
    int s = st->MPI_SOURCE, credit = 0;
    mt_expect_status(MT_HERE, st, s, TAG_DATA, MPI_BYTE, (int)sizeof *m);
    mt_expect(MT_HERE, s >= 1 && s <= nclients && m->src == s,
              "message from %d claims source %d", s, m->src);
    pthread_mutex_lock(&mu);
    if (m->seq == SEQ_DONE) {
        /* the other thread may still be processing the client's last
         * messages: matched in order, processed in any order */
        mt_expect(MT_HERE, !victim(s) && !done[s], "done from %d", s);
        done[s] = 1;
    } else {
        mt_expect(MT_HERE, m->seq >= 0 && m->seq < NMSG && !seen[s][m->seq],
                  "source %d: seq %d twice or out of range", s, m->seq);
        mt_verify(MT_HERE, m->data, PAY, s, m->seq, "client data");
        seen[s][m->seq] = 1;
        if (++count[s] % WIN == 0 && count[s] < NMSG)
            credit = s;
    }
    pthread_mutex_unlock(&mu);
    return credit;
}

static void send_credit(int c)
{
    int one = 1, rc;

    rc = MPI_Send(&one, 1, MPI_INT, c, TAG_CREDIT, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        ft_expect_failed(MT_HERE, rc, "credit to a client");
        mt_expect(MT_HERE, victim(c), "credit to live client %d failed", c);
    }
}

/* Example 17.5, with bounded waits and an end. */
static void *server_thread(void *arg)
{
    int my_cnt, rc, got, c;
    MPI_Request rq;
    MPI_Status st;
    msg_t m;

    (void)arg;
    pthread_rwlock_rdlock(&rw);
    my_cnt = recognize_cnt - 1;     /* force a check in the first loop */
    pthread_rwlock_unlock(&rw);
    while (!__atomic_load_n(&finished, __ATOMIC_ACQUIRE)) {
        pthread_rwlock_rdlock(&rw);
        if (my_cnt != recognize_cnt) {
            /* new failures were recognised: can we go on? */
            if (all_accounted()) {
                __atomic_store_n(&finished, 1, __ATOMIC_RELEASE);
                pthread_rwlock_unlock(&rw);
                break;
            }
            my_cnt = recognize_cnt;
        }
        MT_CHECK(MPI_Irecv(&m, (int)sizeof m, MPI_BYTE, MPI_ANY_SOURCE,
                           TAG_DATA, MPI_COMM_WORLD, &rq));
        rc = wait_or_stop(&rq, &st, &got, "server wildcard receive");
        if (rc != MPI_SUCCESS) {
            /* failure case */
            ft_expect_failed(MT_HERE, rc, "wildcard receive after a client "
                             "died");
            pthread_mutex_lock(&mu);
            wild_failures++;
            pthread_mutex_unlock(&mu);
            pthread_rwlock_unlock(&rw);
            pthread_rwlock_wrlock(&rw);
            if (my_cnt != recognize_cnt) {
                /* another thread has already re-enabled wildcards */
                pthread_rwlock_unlock(&rw);
                continue;
            }
            MT_CHECK(MPI_Group_free(&failed_group));
            MT_CHECK(MPIX_Comm_reenable_any_source(MPI_COMM_WORLD,
                                                   &failed_group));
            ++recognize_cnt;
            pthread_rwlock_unlock(&rw);
            continue;
        }
        if (!got) {     /* cancelled: everything is accounted for */
            pthread_rwlock_unlock(&rw);
            break;
        }
        /* process the received message */
        c = take(&m, &st);
        if (c != 0)
            send_credit(c);
        if (all_accounted())
            __atomic_store_n(&finished, 1, __ATOMIC_RELEASE);
        pthread_rwlock_unlock(&rw);
    }
    return NULL;
}

/* After the threads: buffered messages of the dead clients are still
 * delivered (17.6); then nothing is left at all. */
static void drain_and_check(void)
{
    MPI_Status st;
    msg_t m;
    int flag, rc, n;

    for (int c = 1; c <= nclients; c++) {
        if (!victim(c))
            continue;
        for (;;) {
            flag = 0;
            rc = MPI_Iprobe(c, TAG_DATA, MPI_COMM_WORLD, &flag, &st);
            if (rc != MPI_SUCCESS) {
                ft_expect_failed(MT_HERE, rc, "probe of a dead client with "
                                 "nothing buffered");
                break;
            }
            mt_expect(MT_HERE, flag, "probe of dead client %d: no error, no "
                      "message", c);
            MT_CHECK(MPI_Recv(&m, (int)sizeof m, MPI_BYTE, c, TAG_DATA,
                              MPI_COMM_WORLD, &st));
            (void)take(&m, &st);    /* no credit: it is dead */
        }
    }
    flag = 0;
    MT_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                        &st));
    mt_expect(MT_HERE, !flag, "leftover message from %d tag %d",
              st.MPI_SOURCE, st.MPI_TAG);
    for (int c = 1; c <= nclients; c++) {
        for (n = 0; n < NMSG && seen[c][n]; n++)
            ;
        mt_expect(MT_HERE, n == count[c], "client %d: %d messages but not "
                  "the first %d (a gap)", c, count[c], count[c]);
        if (victim(c)) {
            mt_expect(MT_HERE, n >= death_point(c) / WIN * WIN &&
                      n <= death_point(c), "dead client %d: %d messages "
                      "delivered, it sent %d and got credit for %d", c, n,
                      death_point(c), death_point(c) / WIN * WIN);
            mt_expect(MT_HERE, group_has(failed_group, c), "client %d not "
                      "in the failed group", c);
        } else {
            mt_expect(MT_HERE, n == NMSG && done[c], "live client %d: %d of "
                      "%d messages", c, n, NMSG);
            mt_expect(MT_HERE, !group_has(failed_group, c), "live client "
                      "%d in the failed group", c);
        }
    }
}

static void server(void)
{
    pthread_t th[NTHR];
    int nvictims = 0, nfailed = 0;

    nclients = mt_size() - 1;
    seen = mt_malloc(sizeof(*seen) * (size_t)(nclients + 1));
    for (int c = 0; c <= nclients; c++) {
        seen[c] = mt_zalloc(NMSG);
        nvictims += c >= 1 && victim(c);
    }
    count = mt_zalloc(sizeof(int) * (size_t)(nclients + 1));
    done = mt_zalloc(sizeof(int) * (size_t)(nclients + 1));
    MT_CHECK(MPIX_Comm_group_failed(MPI_COMM_WORLD, &failed_group));
    for (int t = 0; t < NTHR; t++)
        mt_expect(MT_HERE, pthread_create(&th[t], NULL, server_thread, NULL)
                  == 0, "pthread_create");
    for (int t = 0; t < NTHR; t++)
        mt_expect(MT_HERE, pthread_join(th[t], NULL) == 0, "pthread_join");
    MT_CHECK(MPI_Group_size(failed_group, &nfailed));
    mt_expect(MT_HERE, nfailed == nvictims, "failed group has %d, %d died",
              nfailed, nvictims);
    mt_expect(MT_HERE, recognize_cnt >= 1 && recognize_cnt <= nvictims,
              "%d re-enables for %d failures", recognize_cnt, nvictims);
    mt_expect(MT_HERE, wild_failures >= 1, "no wildcard receive failed");
    drain_and_check();
    fprintf(stderr, "MPITEST NOTE tf_fail_threads: %d re-enable(s), %d "
            "failed wildcard receive(s); from the dead:", recognize_cnt,
            wild_failures);
    for (int c = 1; c <= nclients; c++)
        if (victim(c))
            fprintf(stderr, " %d of %d", count[c], death_point(c));
    fprintf(stderr, "\n");
    MT_CHECK(MPI_Group_free(&failed_group));
    for (int c = 0; c <= nclients; c++)
        free(seen[c]);
    free(seen);
    free(count);
    free(done);
}

/* ---- clients ------------------------------------------------------------- */

static void client(void)
{
    int me = mt_rank(), credit = 0, got;
    MPI_Request rq;
    MPI_Status st;
    msg_t m;

    m.src = me;
    for (int seq = 0; seq < NMSG; seq++) {
        if (seq > 0 && seq % WIN == 0) {
            MT_CHECK(MPI_Irecv(&credit, 1, MPI_INT, 0, TAG_CREDIT,
                               MPI_COMM_WORLD, &rq));
            MT_CHECK(wait_or_stop(&rq, &st, &got, "credit"));
            mt_expect(MT_HERE, credit == 1, "credit %d", credit);
        }
        if (victim(me) && seq == death_point(me))
            ft_die();
        m.seq = seq;
        mt_fill(m.data, PAY, me, seq);
        MT_CHECK(MPI_Send(&m, (int)sizeof m, MPI_BYTE, 0, TAG_DATA,
                          MPI_COMM_WORLD));
    }
    mt_expect(MT_HERE, !victim(me), "client %d should have died", me);
    m.seq = SEQ_DONE;
    memset(m.data, 0, PAY);
    MT_CHECK(MPI_Send(&m, (int)sizeof m, MPI_BYTE, 0, TAG_DATA,
                      MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    int provided = mt_init_thread(&argc, &argv, "tf_fail_threads",
                                  MPI_THREAD_MULTIPLE);

    mt_expect(MT_HERE, provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread "
              "provided %d, not MPI_THREAD_MULTIPLE", provided);
    mt_expect(MT_HERE, mt_size() >= 3, "needs a server and two clients");
    if (mt_rank() == 0) {
        ft_check_class();
        server();
    } else {
        client();
    }
    return ft_finish();
}
