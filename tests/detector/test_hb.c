/* The detector's thread (src/detector/hb.c) over its real UDP channel, in
 * this process: what the engine reports before the detector is armed (a
 * failure found while endpoints are created, inside MPI_Init) is not lost
 * but flooded once it is (lifecycle test tf_life_wireup: dropped, a peer
 * waited for its own detection instead); departure is announced in bounded
 * time. */
#include <criterion/criterion.h>

#include "detector/hb.h"

#include <stdatomic.h>
#include <time.h>

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
