/* Two UCX transports in one process for the transport's unit tests
 * (test_ucx.c, test_ucx_frag.c, test_ucx_shm.c, test_ucx_rndv.c): started
 * with the settings the engine gives, a connected from a to b, progressed
 * together. */
#ifndef FS_TESTS_UCX_PAIR_H
#define FS_TESTS_UCX_PAIR_H

#include <criterion/criterion.h>

#include "transport/tl.h"

#include <string.h>
#include <time.h>

/* The engine's settings for a pair, no short lane (cfg->shm_max 0). */
static inline void ucx_pair_config(fs_tl_config_t *cfg, int fifo_size, size_t frag_max)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->keepalive_ms  = 100;
    cfg->fifo_size     = fifo_size;
    cfg->cma_seg_size  = 4 << 20;
    cfg->frag_max      = frag_max;
    cfg->estimated_eps = 2;
}

static inline fs_tl_t *ucx_pair_start(const fs_tl_upcalls_t *up, void *arg, int fifo_size,
                                      size_t frag_max)
{
    fs_tl_config_t cfg;
    fs_tl_t *tl = NULL;

    ucx_pair_config(&cfg, fifo_size, frag_max);
    cr_assert_eq(fs_tl_ucx_ops.init(&cfg, up, arg, &tl), FS_OK);
    return tl;
}

/* An endpoint of a towards b. */
static inline fs_tl_ep_t *ucx_pair_connect(fs_tl_t *a, fs_tl_t *b, void *ep_user)
{
    fs_tl_ep_t *ep = NULL;
    const void *addr;
    size_t len;

    cr_assert_eq(fs_tl_ucx_ops.address(b, &addr, &len), FS_OK);
    cr_assert_eq(fs_tl_ucx_ops.ep_create(a, addr, len, ep_user, &ep), FS_OK);
    return ep;
}

static inline void ucx_pair_progress(fs_tl_t *a, fs_tl_t *b, double secs)
{
    struct timespec t0, t;
    double el;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        fs_tl_ucx_ops.progress(a);
        fs_tl_ucx_ops.progress(b);
        clock_gettime(CLOCK_MONOTONIC, &t);
        el = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9;
    } while (el < secs);
}

#endif
