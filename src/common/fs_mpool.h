/* Fixed-size object pool.  Objects come from chunks allocated when the free
 * list runs dry; they go back to the free list, never to malloc, until the
 * pool is destroyed.  Growth is the only allocation and is counted, so a
 * steady-state message stream allocates nothing. */
#ifndef FS_MPOOL_H
#define FS_MPOOL_H

#include "common/fs_status.h"

#include <stddef.h>
#include <stdint.h>

typedef struct fs_mpool_elem {
    struct fs_mpool_elem *next;
} fs_mpool_elem_t;

typedef struct fs_mpool {
    fs_mpool_elem_t *free_list;
    void            *chunks;        /* singly linked through the first word */
    size_t           elem_size;
    size_t           elems_per_chunk;
    size_t           max_elems;     /* 0: unbounded */
    size_t           num_elems;
    uint64_t        *grow_counter;  /* shared statistics counter, may be NULL */
    const char      *name;
} fs_mpool_t;

fs_status_t fs_mpool_init(fs_mpool_t *mp, const char *name, size_t elem_size,
                          size_t elems_per_chunk, size_t max_elems,
                          uint64_t *grow_counter);
void fs_mpool_cleanup(fs_mpool_t *mp);

/* Allocates the first chunk now (setup time), so that the first use of a
 * pool on the message path does not allocate. */
fs_status_t fs_mpool_reserve(fs_mpool_t *mp);

/* Slow path: allocates a chunk; returns NULL when the pool is at max_elems or
 * malloc fails. */
void *fs_mpool_get_grow(fs_mpool_t *mp);

static inline void *fs_mpool_get(fs_mpool_t *mp)
{
    fs_mpool_elem_t *elem = mp->free_list;

    if (fs_unlikely(elem == NULL)) {
        return fs_mpool_get_grow(mp);
    }
    mp->free_list = elem->next;
    return elem;
}

static inline void fs_mpool_put(fs_mpool_t *mp, void *obj)
{
    fs_mpool_elem_t *elem = obj;

    elem->next    = mp->free_list;
    mp->free_list = elem;
}

#endif
