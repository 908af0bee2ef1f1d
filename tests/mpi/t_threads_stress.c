/* t_threads_stress.c: blocking calls under MPI_THREAD_MULTIPLE, completed
 * by progress that other threads drive.  Per rank, NT worker threads each
 * run ITERS rounds of blocking operations with their own tags on a shared
 * dup of MPI_COMM_WORLD, sending to the right neighbour and receiving from
 * the left one:
 *   A  MPI_Sendrecv;
 *   B  MPI_Send (every fourth round MPI_Ssend) and MPI_Recv, even ranks
 *      sending first, odd ranks receiving first;
 *   C  MPI_Irecv + MPI_Isend, then MPI_Wait on each (requests on the
 *      thread's stack);
 * at eager and rendezvous sizes, while one more thread only drives progress
 * (MPI_Iprobe on a communicator nothing is sent on) until the workers are
 * done.  So a blocked thread's receive or send is usually finished inside
 * another thread's progress call.  A blocking call that looked at its
 * on-stack request without synchronising with that thread, and returned (its
 * stack reused by the next call) while the completion still read the
 * request, would race with it: under make tsan, ThreadSanitizer reports that
 * at once when fs_ompi_core_idle_locked (src/ompi/request.c) does not lock.
 * Every payload and status is checked.  A watchdog alarm fails a rank that
 * is still running after WATCHDOG_S seconds (a hang).  If MPI_THREAD_MULTIPLE
 * is not provided the test is skipped (note on stderr, OK line printed).
 * Per rank NT * ITERS * 5 = 800 blocking calls (1600 to 3200 per run at 2 to
 * 4 ranks); under ThreadSanitizer a run takes 1 to 4 s. */
#include "mpitest.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

enum { NT = 4, ITERS = 40, WATCHDOG_S = 50 };
enum { TAG_A = 100, TAG_B = 200, TAG_C = 300 };
enum { MAXSZ = 200000 };
/* eager and rendezvous sizes (the rendezvous threshold of UCX shared memory
 * and TCP, and of ob1's BTLs, is below 64 KiB) */
static const size_t cycle[8] = { 8, 1024, 65536, 8, 4096, MAXSZ, 0, 20000 };

static MPI_Comm work_comm, idle_comm;
static int workers_left;        /* under the atomic builtins */

/* ---- watchdog: a blocking call that hangs fails the rank ----------------- */

static char wd_msg[256];
static size_t wd_len;

static void wd_fire(int sig)
{
    ssize_t n;
    (void)sig;
    n = write(2, wd_msg, wd_len);
    (void)n;
    _exit(1);
}

static void wd_arm(void)
{
    int n = snprintf(wd_msg, sizeof wd_msg, "MPITEST FAIL t_threads_stress "
                     "rank %d/%d: not done after %d s (hang)\n", mt_rank(),
                     mt_size(), WATCHDOG_S);
    wd_len = (n > 0 && (size_t)n < sizeof wd_msg) ? (size_t)n
                                                  : sizeof wd_msg - 1;
    signal(SIGALRM, wd_fire);
    alarm(WATCHDOG_S);
}

/* ---- workers ------------------------------------------------------------- */

struct worker {
    int t;
    unsigned char *sbuf, *rbuf;
};

/* What (rank, thread t, round it, op) sends: a distinct pattern. */
static int pat(int t, int it, int op) { return (t * 1000 + it) * 4 + op; }

static void check_recv(mt_loc at, const struct worker *w, const MPI_Status *st,
                       size_t n, int tag, int it, int op, const char *what)
{
    int l = mt_left();
    mt_expect_status(at, st, l, tag, MPI_BYTE, (int)n);
    mt_verify(at, w->rbuf, n, l, pat(w->t, it, op), what);
}

static void op_sendrecv(struct worker *w, int it, size_t n)
{
    MPI_Status st;
    int tag = TAG_A + w->t;

    mt_fill(w->sbuf, n, mt_rank(), pat(w->t, it, 0));
    memset(w->rbuf, 0xee, n);
    MT_CHECK(MPI_Sendrecv(w->sbuf, (int)n, MPI_BYTE, mt_right(), tag, w->rbuf,
                          (int)n, MPI_BYTE, mt_left(), tag, work_comm, &st));
    check_recv(MT_HERE, w, &st, n, tag, it, 0, "Sendrecv");
}

static void op_send_recv(struct worker *w, int it, size_t n)
{
    MPI_Status st;
    int tag = TAG_B + w->t, send_first = (mt_rank() % 2 == 0);

    mt_fill(w->sbuf, n, mt_rank(), pat(w->t, it, 1));
    memset(w->rbuf, 0xee, n);
    for (int k = 0; k < 2; k++) {
        if (k == 0 ? send_first : !send_first) {
            if (it % 4 == 3)
                MT_CHECK(MPI_Ssend(w->sbuf, (int)n, MPI_BYTE, mt_right(), tag,
                                   work_comm));
            else
                MT_CHECK(MPI_Send(w->sbuf, (int)n, MPI_BYTE, mt_right(), tag,
                                  work_comm));
        } else {
            MT_CHECK(MPI_Recv(w->rbuf, (int)n, MPI_BYTE, mt_left(), tag,
                              work_comm, &st));
        }
    }
    check_recv(MT_HERE, w, &st, n, tag, it, 1, "Send/Recv");
}

static void op_wait(struct worker *w, int it, size_t n)
{
    MPI_Request rreq, sreq;
    MPI_Status st, sst;
    int tag = TAG_C + w->t;

    mt_fill(w->sbuf, n, mt_rank(), pat(w->t, it, 2));
    memset(w->rbuf, 0xee, n);
    MT_CHECK(MPI_Irecv(w->rbuf, (int)n, MPI_BYTE, mt_left(), tag, work_comm,
                       &rreq));
    MT_CHECK(MPI_Isend(w->sbuf, (int)n, MPI_BYTE, mt_right(), tag, work_comm,
                       &sreq));
    MT_CHECK(MPI_Wait(&rreq, &st));
    MT_CHECK(MPI_Wait(&sreq, &sst));
    mt_expect(MT_HERE, rreq == MPI_REQUEST_NULL && sreq == MPI_REQUEST_NULL,
              "MPI_Wait left a request handle");
    check_recv(MT_HERE, w, &st, n, tag, it, 2, "Irecv/Isend/Wait");
}

static void *worker_main(void *p)
{
    struct worker *w = p;

    for (int it = 0; it < ITERS; it++) {
        op_sendrecv(w, it, cycle[(it + w->t) % 8]);
        op_send_recv(w, it, cycle[(it + w->t + 3) % 8]);
        op_wait(w, it, cycle[(it + w->t + 5) % 8]);
    }
    __atomic_fetch_sub(&workers_left, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Drives progress from a thread that has nothing of its own to complete. */
static void *progress_main(void *p)
{
    int flag;
    MPI_Status st;
    (void)p;
    while (__atomic_load_n(&workers_left, __ATOMIC_ACQUIRE) > 0) {
        MT_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, idle_comm, &flag, &st));
        mt_expect(MT_HERE, !flag, "a message on the idle communicator");
        sched_yield();      /* 2 ranks x 5 threads may share 2 cores */
    }
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t th[NT + 1];
    struct worker w[NT];
    int provided = mt_init_thread(&argc, &argv, "t_threads_stress",
                                  MPI_THREAD_MULTIPLE);
    if (provided < MPI_THREAD_MULTIPLE) {
        mt_note("SKIP: MPI_THREAD_MULTIPLE not provided");
        return mt_finish();
    }
    wd_arm();
    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &work_comm));
    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &idle_comm));
    workers_left = NT;
    for (int t = 0; t < NT; t++) {
        w[t].t = t;
        w[t].sbuf = mt_malloc(MAXSZ);
        w[t].rbuf = mt_malloc(MAXSZ);
        mt_expect(MT_HERE, pthread_create(&th[t], NULL, worker_main, &w[t]) ==
                  0, "pthread_create");
    }
    mt_expect(MT_HERE, pthread_create(&th[NT], NULL, progress_main, NULL) == 0,
              "pthread_create");
    for (int t = 0; t <= NT; t++)
        mt_expect(MT_HERE, pthread_join(th[t], NULL) == 0, "pthread_join");
    for (int t = 0; t < NT; t++)
        free(w[t].sbuf), free(w[t].rbuf);
    MT_CHECK(MPI_Comm_free(&work_comm));
    MT_CHECK(MPI_Comm_free(&idle_comm));
    alarm(0);
    return mt_finish();
}
