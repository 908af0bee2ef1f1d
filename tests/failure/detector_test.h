/* Shared by the detector's unit tests (test_detector.c) and its simulator
 * (test_detector_sim.c): timing constants and small helpers. */
#ifndef FS_TEST_DETECTOR_H
#define FS_TEST_DETECTOR_H

#include "failure/detector.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_PERIOD  0.1
#define T_TIMEOUT 0.4
#define T_GRACE   0.2
#define T_LAT     0.001
#define T_ANY     UINT32_MAX
#define T_JOB     0x1234abcdull   /* fs_det_config_t.job of every test */

/* gone bitmaps for fs_det_bmg */
static inline void t_bit_set(uint8_t *bits, uint32_t r, int on)
{
    if (on) {
        bits[r >> 3] |= (uint8_t)(1u << (r & 7));
    } else {
        bits[r >> 3] &= (uint8_t)~(1u << (r & 7));
    }
}

static inline int t_bit(const uint8_t *bits, uint32_t r)
{
    return (bits[r >> 3] >> (r & 7)) & 1;
}

static inline uint32_t t_ceil_log2(uint32_t n)
{
    uint32_t k = 0;

    while ((1ull << k) < n) {
        ++k;
    }
    return k;
}

static inline uint64_t t_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline double t_uniform(uint64_t *state, double lo, double hi)
{
    return lo + (hi - lo) * (double)(t_rand(state) >> 11) / 9007199254740992.0;
}

static inline fs_det_msg_t t_msg(uint8_t type, uint32_t sender, uint32_t subject,
                          uint32_t count, uint64_t digest)
{
    fs_det_msg_t m;

    memset(&m, 0, sizeof(m));
    m.magic   = FS_DET_MAGIC;
    m.version = FS_DET_VERSION;
    m.job     = T_JOB;
    m.type    = type;
    m.sender  = sender;
    m.subject = subject;
    m.count   = count;
    m.digest  = digest;
    return m;
}


#endif
