/* Ids for rendezvous state that a peer's message names (CTS, DATA): an
 * index and a generation, so that a stale id (the operation ended: the
 * peer was failed, the fetch cancelled) or a forged one finds nothing,
 * where a pointer would be followed blindly. */
#include "transport/ofi_int.h"

#include <stdlib.h>

static fs_status_t fs_ofi_id_grow(fs_ofi_idtab_t *t)
{
    uint32_t size = t->size ? 2 * t->size : 256;
    void **obj;
    uint32_t *gen, *free_idx, i;

    if (size > (1u << 24)) {
        return FS_ERR_NO_MEMORY;
    }
    obj      = realloc(t->obj, size * sizeof(*obj));
    gen      = (obj != NULL) ? realloc(t->gen, size * sizeof(*gen)) : NULL;
    free_idx = (gen != NULL) ? realloc(t->free_idx, size * sizeof(*free_idx)) : NULL;
    if (obj != NULL) {
        t->obj = obj;
    }
    if (gen != NULL) {
        t->gen = gen;
    }
    if (free_idx == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    t->free_idx = free_idx;
    for (i = t->size; i < size; ++i) {
        t->obj[i] = NULL;
        t->gen[i] = 1;
        t->free_idx[t->nfree++] = size - 1 - (i - t->size);
    }
    t->size = size;
    return FS_OK;
}

fs_status_t fs_ofi_id_alloc(fs_ofi_idtab_t *t, void *obj, uint64_t *id_p)
{
    uint32_t idx;

    if ((t->nfree == 0) && (fs_ofi_id_grow(t) != FS_OK)) {
        return FS_ERR_NO_MEMORY;
    }
    idx         = t->free_idx[--t->nfree];
    t->obj[idx] = obj;
    *id_p       = ((uint64_t)t->gen[idx] << 32) | idx;
    return FS_OK;
}

void *fs_ofi_id_find(const fs_ofi_idtab_t *t, uint64_t id)
{
    uint32_t idx = (uint32_t)id;

    if ((idx >= t->size) || (t->gen[idx] != (uint32_t)(id >> 32))) {
        return NULL;
    }
    return t->obj[idx];
}

void fs_ofi_id_free(fs_ofi_idtab_t *t, uint64_t id)
{
    uint32_t idx = (uint32_t)id;

    if (fs_ofi_id_find(t, id) == NULL) {
        return;
    }
    t->obj[idx] = NULL;
    if (++t->gen[idx] == 0) {
        t->gen[idx] = 1;    /* 0 never names a live entry */
    }
    t->free_idx[t->nfree++] = idx;
}

void fs_ofi_id_cleanup(fs_ofi_idtab_t *t)
{
    free(t->obj);
    free(t->gen);
    free(t->free_idx);
    t->obj      = NULL;
    t->gen      = NULL;
    t->free_idx = NULL;
    t->size     = 0;
    t->nfree    = 0;
}
