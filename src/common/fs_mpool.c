#define _GNU_SOURCE   /* MADV_POPULATE_WRITE */
#include "common/fs_mpool.h"
#include "common/fs_log.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Chunk layout: [next-chunk pointer, padded to 64 bytes][elements...] */
#define FS_MPOOL_CHUNK_HDR 64

fs_status_t fs_mpool_init(fs_mpool_t *mp, const char *name, size_t elem_size,
                          size_t elems_per_chunk, size_t max_elems,
                          uint64_t *grow_counter)
{
    if ((elem_size == 0) || (elems_per_chunk == 0)) {
        return FS_ERR_INVALID;
    }
    mp->free_list       = NULL;
    mp->chunks          = NULL;
    /* keep every element 16-byte aligned */
    mp->elem_size       = (elem_size < sizeof(fs_mpool_elem_t)) ?
                          sizeof(fs_mpool_elem_t) : ((elem_size + 15) & ~(size_t)15);
    mp->elems_per_chunk = elems_per_chunk;
    mp->max_elems       = max_elems;
    mp->num_elems       = 0;
    mp->grow_counter    = grow_counter;
    mp->name            = name;
    return FS_OK;
}

void fs_mpool_cleanup(fs_mpool_t *mp)
{
    void *chunk = mp->chunks;

    while (chunk != NULL) {
        void *next = *(void **)chunk;
        free(chunk);
        chunk = next;
    }
    mp->chunks    = NULL;
    mp->free_list = NULL;
    mp->num_elems = 0;
}

fs_status_t fs_mpool_reserve(fs_mpool_t *mp)
{
    void *elem;

    if (mp->chunks != NULL) {
        return FS_OK;
    }
    elem = fs_mpool_get_grow(mp);
    if (elem == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    fs_mpool_put(mp, elem);
    return FS_OK;
}

/* A fresh chunk's pages are mapped at once, not one fault at a time when
 * each element is first written inside a message stream (~25 us a fault on
 * a virtual machine here: an 8 KiB copy class's 16 elements cost a few
 * milliseconds across the first iterations of osu_iallreduce 4 KiB).  One
 * madvise where the kernel has MADV_POPULATE_WRITE (5.14), else a store
 * per page; this is malloc'd memory of our own. */
static void fs_mpool_populate(char *chunk, size_t len)
{
    size_t page  = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)chunk + page - 1) & ~(uintptr_t)(page - 1);
    uintptr_t hi = ((uintptr_t)chunk + len) & ~(uintptr_t)(page - 1);
    size_t off;

    /* the partial pages at both ends, then the whole pages between */
    ((volatile char *)chunk)[0]       = 0;
    ((volatile char *)chunk)[len - 1] = 0;
    if ((hi > lo) && (madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0)) {
        return;
    }
    for (off = 0; off < len; off += page) {
        ((volatile char *)chunk)[off] = 0;
    }
}

void *fs_mpool_get_grow(fs_mpool_t *mp)
{
    size_t count = mp->elems_per_chunk;
    char *chunk, *elem;
    size_t i;

    if (mp->max_elems != 0) {
        if (mp->num_elems >= mp->max_elems) {
            return NULL;
        }
        if (mp->num_elems + count > mp->max_elems) {
            count = mp->max_elems - mp->num_elems;
        }
    }

    chunk = malloc(FS_MPOOL_CHUNK_HDR + count * mp->elem_size);
    if (chunk == NULL) {
        FS_ERROR("pool %s: cannot grow by %zu objects of %zu bytes", mp->name,
                 count, mp->elem_size);
        return NULL;
    }
    fs_mpool_populate(chunk, FS_MPOOL_CHUNK_HDR + count * mp->elem_size);
    *(void **)chunk = mp->chunks;
    mp->chunks      = chunk;
    mp->num_elems  += count;
    if (mp->grow_counter != NULL) {
        ++*mp->grow_counter;
    }

    /* hand out the first element, thread the rest onto the free list */
    elem = chunk + FS_MPOOL_CHUNK_HDR;
    for (i = 1; i < count; ++i) {
        fs_mpool_put(mp, elem + i * mp->elem_size);
    }
    return elem;
}
