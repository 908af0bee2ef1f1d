/* Bitmaps of n bits in 64-bit words, for the slow paths that keep sets of
 * ranks (agreement).  Bits past n in the last word are always zero. */
#ifndef FS_BITMAP_H
#define FS_BITMAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline size_t fs_bm_words(uint32_t n)
{
    return ((size_t)n + 63) / 64;
}

static inline int fs_bm_test(const uint64_t *b, uint32_t i)
{
    return (int)((b[i / 64] >> (i % 64)) & 1);
}

static inline void fs_bm_set(uint64_t *b, uint32_t i)
{
    b[i / 64] |= (uint64_t)1 << (i % 64);
}

static inline void fs_bm_zero(uint64_t *b, uint32_t n)
{
    memset(b, 0, fs_bm_words(n) * sizeof(*b));
}

static inline void fs_bm_copy(uint64_t *dst, const uint64_t *src, uint32_t n)
{
    memcpy(dst, src, fs_bm_words(n) * sizeof(*dst));
}

/* dst |= src; returns whether dst changed. */
static inline int fs_bm_or(uint64_t *dst, const uint64_t *src, uint32_t n)
{
    uint64_t grew = 0;
    size_t w;

    for (w = 0; w < fs_bm_words(n); w++) {
        grew   |= src[w] & ~dst[w];
        dst[w] |= src[w];
    }
    return grew != 0;
}

static inline uint32_t fs_bm_count(const uint64_t *b, uint32_t n)
{
    uint32_t c = 0;
    size_t w;

    for (w = 0; w < fs_bm_words(n); w++)
        c += (uint32_t)__builtin_popcountll(b[w]);
    return c;
}

/* Lowest set bit at or above i, or n. */
static inline uint32_t fs_bm_next(const uint64_t *b, uint32_t n, uint32_t i)
{
    size_t w;
    uint64_t word;

    if (i >= n)
        return n;
    w    = i / 64;
    word = b[w] & (~(uint64_t)0 << (i % 64));
    for (;;) {
        if (word != 0) {
            uint32_t r = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(word));
            return r < n ? r : n;
        }
        if (++w >= fs_bm_words(n))
            return n;
        word = b[w];
    }
}

/* Set bits below i. */
static inline uint32_t fs_bm_rank(const uint64_t *b, uint32_t i)
{
    uint32_t c = 0;
    size_t w;

    for (w = 0; w < i / 64; w++)
        c += (uint32_t)__builtin_popcountll(b[w]);
    if (i % 64)
        c += (uint32_t)__builtin_popcountll(b[i / 64] & (((uint64_t)1 << (i % 64)) - 1));
    return c;
}

#endif
