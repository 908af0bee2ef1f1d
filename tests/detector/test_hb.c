/* The detector's thread (src/detector/hb.c) over its real UDP channel, in
 * this process: what the engine reports before the detector is armed (a
 * failure found while endpoints are created, inside MPI_Init) is not lost
 * but flooded once it is (lifecycle test tf_life_wireup: dropped, a peer
 * waited for its own detection instead); departure is announced in bounded
 * time. */
#include <criterion/criterion.h>

#include "detector/hb.h"

#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int t_failed_rank = -1;
static atomic_int t_failed_cause = -1;

static void t_failed(void *arg, uint32_t rank, fs_det_cause_t cause)
{
    (void)arg;
    atomic_store(&t_failed_cause, (int)cause);
    atomic_store(&t_failed_rank, (int)rank);
}

static void t_excluded(void *arg, uint32_t by)
{
    (void)arg;
    cr_assert_fail("excluded by %u", by);
}

static void t_partitioned(void *arg, uint32_t lost, uint32_t view)
{
    (void)arg;
    cr_assert_fail("partition rule: lost %u of %u", lost, view);
}

static double t_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

Test(hb, a_report_before_arming_is_flooded_once_armed, .timeout = 20)
{
    static const fs_hb_host_t host = {t_failed, t_excluded, t_partitioned, NULL};
    const void *addr, *addrs[3];
    size_t len, lens[3];
    fs_params_t params;
    fs_hb_t *hb = NULL;
    struct timespec nap = {0, 10 * 1000 * 1000};
    double t0;
    int i;

    fs_params_defaults(&params);
    cr_assert_eq(fs_hb_start(&params, &fs_dg_udp_ops, &hb), FS_OK);
    fs_hb_report(hb, 2);                  /* found while creating endpoints */
    fs_hb_address(hb, &addr, &len);
    for (i = 0; i < 3; ++i) {
        addrs[i] = addr;                  /* nobody else answers: fine here */
        lens[i]  = len;
    }
    cr_assert_eq(fs_hb_arm(hb, 3, 0, addrs, lens, &host), FS_OK);
    t0 = t_now();
    while ((atomic_load(&t_failed_rank) < 0) && (t_now() - t0 < 0.5)) {
        nanosleep(&nap, NULL);
    }
    cr_expect_eq(atomic_load(&t_failed_rank), 2, "the early report was lost");
    cr_expect_eq(atomic_load(&t_failed_cause), FS_DET_CAUSE_REPORT);
    t0 = t_now();
    fs_hb_leave(hb, 1.0);
    cr_expect_lt(t_now() - t0, 1.5, "departure not bounded");
    fs_hb_stop(hb);
}

/* ---- exits of a process on this host (pidwatch.h) ------------------------- */

/* A detector in a child process, rank 0 of 2 (the test is rank 1, which
 * observes it); addresses go over two pipes.  After arming, the child
 * either waits to be killed or, with leave set, departs and exits. */
static pid_t t_child_detector(const fs_params_t *params, int leave,
                              const void **addrs, size_t *lens, uint8_t *child_addr)
{
    static const fs_hb_host_t host = {t_failed, t_excluded, t_partitioned, NULL};
    int to_child[2], to_parent[2];
    const void *addr;
    size_t len;
    fs_hb_t *hb;
    pid_t pid;

    cr_assert_eq(pipe(to_child), 0);
    cr_assert_eq(pipe(to_parent), 0);
    pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        uint8_t peer[256];
        size_t plen;

        if (fs_hb_start(params, &fs_dg_udp_ops, &hb) != FS_OK) {
            _exit(2);
        }
        fs_hb_address(hb, &addr, &len);
        if ((write(to_parent[1], &len, sizeof(len)) != sizeof(len)) ||
            (write(to_parent[1], addr, len) != (ssize_t)len) ||
            (read(to_child[0], &plen, sizeof(plen)) != sizeof(plen)) ||
            (plen > sizeof(peer)) || (read(to_child[0], peer, plen) != (ssize_t)plen)) {
            _exit(3);
        }
        addrs[0] = addr;
        lens[0]  = len;
        addrs[1] = peer;
        lens[1]  = plen;
        if (fs_hb_arm(hb, 2, 0, addrs, lens, &host) != FS_OK) {
            _exit(4);
        }
        if (leave) {
            struct timespec nap = {0, 300 * 1000 * 1000};

            nanosleep(&nap, NULL);
            fs_hb_leave(hb, 1.0);
            fs_hb_stop(hb);
            _exit(0);
        }
        for (;;) {
            pause();
        }
    }
    cr_assert_eq(read(to_parent[0], &lens[0], sizeof(lens[0])), sizeof(lens[0]));
    cr_assert_leq(lens[0], 256);
    cr_assert_eq(read(to_parent[0], child_addr, lens[0]), (ssize_t)lens[0]);
    addrs[0] = child_addr;
    cr_assert_eq(write(to_child[1], &lens[1], sizeof(lens[1])), sizeof(lens[1]));
    cr_assert_eq(write(to_child[1], addrs[1], lens[1]), (ssize_t)lens[1]);
    return pid;
}

static void t_wait_failed(double seconds)
{
    struct timespec nap = {0, 10 * 1000 * 1000};
    double t0 = t_now();

    while ((atomic_load(&t_failed_rank) < 0) && (t_now() - t0 < seconds)) {
        nanosleep(&nap, NULL);
    }
}

/* This process's detector (rank 1) and a forked child's (rank 0; it
 * departs and exits if leave), heartbeat timeouts of a minute, so that
 * only an exit can fail the child in a test's time. */
static fs_hb_t *t_pair_start(int leave, pid_t *child_p)
{
    static const fs_hb_host_t host = {t_failed, t_excluded, t_partitioned, NULL};
    static uint8_t child_addr[256];
    const void *addrs[2];
    size_t lens[2];
    fs_params_t params;
    fs_hb_t *hb = NULL;

    fs_params_defaults(&params);
    params.hb_timeout_ms        = 60000;
    params.hb_timeout_remote_ms = 60000;
    params.hb_timeout_host_ms   = 60000;
    cr_assert_eq(fs_hb_start(&params, &fs_dg_udp_ops, &hb), FS_OK);
    fs_hb_address(hb, &addrs[1], &lens[1]);
    *child_p = t_child_detector(&params, leave, addrs, lens, child_addr);
    cr_assert_eq(fs_hb_arm(hb, 2, 1, addrs, lens, &host), FS_OK);
    return hb;
}

/* A process of this host killed after arming is failed within a few
 * periods, because it exited. */
Test(hb, a_killed_process_of_this_host_is_failed_by_its_exit, .timeout = 30)
{
    struct timespec nap = {0, 300 * 1000 * 1000};
    pid_t child;
    fs_hb_t *hb = t_pair_start(0, &child);
    int st;

    nanosleep(&nap, NULL);          /* both armed, beating */
    cr_expect_eq(atomic_load(&t_failed_rank), -1, "failed while alive");
    kill(child, SIGKILL);
    t_wait_failed(10.0);
    cr_expect_eq(atomic_load(&t_failed_rank), 0, "the exit was not noticed");
    cr_expect_eq(atomic_load(&t_failed_cause), FS_DET_CAUSE_EXIT);
    waitpid(child, &st, 0);
    fs_hb_stop(hb);
}

/* Leaving is not failing: a process that departs and then exits is never
 * failed, although its exit is seen. */
Test(hb, a_process_that_departs_then_exits_is_not_failed, .timeout = 30)
{
    pid_t child;
    fs_hb_t *hb = t_pair_start(1, &child);
    int st;

    cr_assert_eq(waitpid(child, &st, 0), child);
    cr_assert(WIFEXITED(st) && (WEXITSTATUS(st) == 0), "child status %d", st);
    t_wait_failed(1.0);             /* 10 periods after its exit */
    cr_expect_eq(atomic_load(&t_failed_rank), -1, "a departed process was failed");
    fs_hb_stop(hb);
}
