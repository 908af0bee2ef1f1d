/* failstop-specific: a warmed-up message stream allocates nothing.
 *
 * After a warm-up, thousands of eager and rendezvous messages -- expected,
 * unexpected, and windows of nonblocking ones -- must not allocate: not a
 * single malloc in the whole process (counted by interposing malloc), and no
 * growth of failstop's message pools or MPI request objects. */
#include "failstop.h"
#include "mpitest.h"

#include <unistd.h>

enum { WINDOW = 64 };

/* Every heap allocation in the process (failstop, Open MPI, UCX) goes
 * through these: exported from the executable, they interpose on libc's.
 * AddressSanitizer and ThreadSanitizer own malloc themselves, so under
 * their builds only the counters are checked (the normal build, which CI
 * runs, checks both). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FS_COUNT_HEAP 0
static volatile unsigned long long heap_allocs;
#else
#define FS_COUNT_HEAP 1
#define INTERPOSE __attribute__((visibility("default")))
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
static volatile unsigned long long heap_allocs;

INTERPOSE void *malloc(size_t size)
{
    ++heap_allocs;
    return __libc_malloc(size);
}

INTERPOSE void *calloc(size_t n, size_t size)
{
    ++heap_allocs;
    return __libc_calloc(n, size);
}

INTERPOSE void *realloc(void *ptr, size_t size)
{
    ++heap_allocs;
    return __libc_realloc(ptr, size);
}
#endif

static const size_t sizes[] = {8, 1024, 8192, 65536, 1 << 20};
enum { NSIZES = sizeof sizes / sizeof sizes[0] };

static void pingpong(unsigned char *buf, size_t n, int peer, int iter)
{
    if (mt_rank() < peer) {
        mt_fill(buf, n, mt_rank(), iter);
        MT_CHECK(MPI_Send(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD));
        MT_CHECK(MPI_Recv(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
        mt_verify(MT_HERE, buf, n, peer, iter, "pingpong reply");
    } else {
        MT_CHECK(MPI_Recv(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
        mt_verify(MT_HERE, buf, n, peer, iter, "pingpong");
        mt_fill(buf, n, mt_rank(), iter);
        MT_CHECK(MPI_Send(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD));
    }
}

/* The lower rank sends before the higher one posts: unexpected messages
 * (nonblocking: a large one is a rendezvous that waits for its receive). */
static void unexpected(unsigned char *buf, size_t n, int peer, int iter)
{
    MPI_Request req = MPI_REQUEST_NULL;

    if (mt_rank() < peer) {
        mt_fill(buf, n, mt_rank(), iter);
        MT_CHECK(MPI_Isend(buf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req));
    }
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank() > peer) {
        MT_CHECK(MPI_Recv(buf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
        mt_verify(MT_HERE, buf, n, peer, iter, "unexpected");
    }
    MT_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
}

static void window(unsigned char *buf, int peer, int iter)
{
    MPI_Request req[2 * WINDOW];
    int i;

    for (i = 0; i < WINDOW; i++) {
        MT_CHECK(MPI_Irecv(buf + i * 16, 8, MPI_BYTE, peer, 3, MPI_COMM_WORLD,
                           &req[i]));
    }
    for (i = 0; i < WINDOW; i++) {
        mt_fill(buf + 4096 + i * 16, 8, mt_rank(), iter + i);
        MT_CHECK(MPI_Isend(buf + 4096 + i * 16, 8, MPI_BYTE, peer, 3,
                           MPI_COMM_WORLD, &req[WINDOW + i]));
    }
    MT_CHECK(MPI_Waitall(2 * WINDOW, req, MPI_STATUSES_IGNORE));
    for (i = 0; i < WINDOW; i++) {
        mt_verify(MT_HERE, buf + i * 16, 8, peer, iter + i, "window");
    }
}

/* Ranks 0 and 1 stream; other ranks only join the barriers. */
static void run_round(unsigned char *buf, int iters)
{
    int peer = 1 - mt_rank(), active = mt_rank() < 2, it;
    unsigned k;

    for (it = 0; it < iters; it++) {
        for (k = 0; k < NSIZES; k++) {
            if ((sizes[k] >= 65536) && (it % 8 != 0)) {
                continue;
            }
            if (active) {
                pingpong(buf, sizes[k], peer, it);
                unexpected(buf, sizes[k], peer, it);
            } else {
                MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            }
        }
        if (active) {
            window(buf, peer, it * WINDOW);
        }
    }
}

/* A blocking send may go eagerly where a nonblocking one of its size does
 * not (a medium one by the UCX transport's shared-memory lane), and so be
 * stored at its receiver in memory of its own when unexpected: a few of
 * every size, the receiver late (not waiting on a barrier: where such a
 * send is a rendezvous, it waits for the receive). */
static void preheat_blocking(unsigned char *buf, int from)
{
    unsigned k;
    int i;

    for (k = 0; k < NSIZES; k++) {
        int n = (int)(sizes[k] < 65536 ? sizes[k] : 65536);
        for (i = 0; (i < 2) && (mt_rank() == from); i++) {
            MT_CHECK(MPI_Send(buf, n, MPI_BYTE, 1 - from, 5, MPI_COMM_WORLD));
        }
        if (mt_rank() == 1 - from) {
            usleep(20000);
            for (i = 0; i < 2; i++) {
                MT_CHECK(MPI_Recv(buf + (1 << 19), n, MPI_BYTE, from, 5, MPI_COMM_WORLD,
                                  MPI_STATUS_IGNORE));
            }
        }
    }
}

/* Holds more messages and requests at once than run_round ever does (two
 * windows of every size unexpected at the same time, in both directions),
 * so the pools reach their high-water mark before the measurement starts. */
static void preheat_direction(unsigned char *buf, int from)
{
    enum { DEPTH = 2 * WINDOW };
    MPI_Request req[DEPTH];
    unsigned k;
    int i;

    for (k = 0; k < NSIZES; k++) {
        int n = (int)(sizes[k] < 65536 ? sizes[k] : 65536);
        for (i = 0; (i < DEPTH) && (mt_rank() == from); i++) {
            MT_CHECK(MPI_Isend(buf, n, MPI_BYTE, 1 - from, 4, MPI_COMM_WORLD, &req[i]));
        }
        MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        for (i = 0; (i < DEPTH) && (mt_rank() == 1 - from); i++) {
            MT_CHECK(MPI_Irecv(buf + (1 << 19), n, MPI_BYTE, from, 4, MPI_COMM_WORLD,
                               &req[i]));
        }
        if (mt_rank() < 2) {
            MT_CHECK(MPI_Waitall(DEPTH, req, MPI_STATUSES_IGNORE));
        }
    }
    preheat_blocking(buf, from);
}

/* The interposer must see allocations made inside libraries, or the check
 * would prove nothing: creating a communicator allocates in libmpi. */
static void expect_interposer_works(void)
{
    unsigned long long before = heap_allocs;
    MPI_Comm dup;

    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MT_CHECK(MPI_Comm_free(&dup));
    mt_expect(MT_HERE, !FS_COUNT_HEAP || (heap_allocs > before),
              "malloc interposition is not in effect for libraries");
}

static void counters(unsigned long long *pools, unsigned long long *reqs)
{
    MT_CHECK(MPIX_Failstop_counter("pool_grows", pools));
    MT_CHECK(MPIX_Failstop_counter("requests_allocated", reqs));
}

int main(int argc, char **argv)
{
    unsigned long long pools0, reqs0, pools1, reqs1, heap0, heap1;
    unsigned char *buf;
    int active = 0;

    /* UCX's keepalive packs an address with malloc on every round: periodic
     * work (one per interval and endpoint), not per message, so it is off
     * here; nothing fails in this test. */
    setenv("UCX_KEEPALIVE_INTERVAL", "inf", 1);
    mt_init(&argc, &argv, "tf_nomalloc");
    MT_CHECK(MPIX_Failstop_active(&active));
    mt_expect(MT_HERE, active, "not running over failstop");
    buf = mt_malloc(1 << 20);
    expect_interposer_works();
    preheat_direction(buf, 0);
    preheat_direction(buf, 1);
    run_round(buf, 50);                       /* warm-up */
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    counters(&pools0, &reqs0);
    heap0 = heap_allocs;
    run_round(buf, 400);
    heap1 = heap_allocs;
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    counters(&pools1, &reqs1);
    mt_expect(MT_HERE, heap1 == heap0, "%llu heap allocations during the measured "
              "stream", heap1 - heap0);
    mt_expect(MT_HERE, pools1 == pools0, "message pools grew by %llu during the "
              "measured stream", pools1 - pools0);
    mt_expect(MT_HERE, reqs1 == reqs0, "request objects grew from %llu to %llu",
              reqs0, reqs1);
    free(buf);
    return mt_finish();
}
