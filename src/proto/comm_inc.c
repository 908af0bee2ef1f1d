/* Incarnations of communicators: how many communicators this process made
 * with a given context id and member fingerprint (fs_hdr_agree_t.inc).
 *
 * Open MPI reuses a context id once it is free, and MPI_Comm_dup of the
 * same parent makes the same members again, so (cid, fp) alone cannot tell
 * a communicator from the one freed before it: a revoke of the old one
 * still in flight (its news floods, and copies arrive after everybody has
 * moved on) revoked the new one (ULFM's api/revoke test, 1 run in 10).
 * Every member of a communicator takes part in making it, so every member
 * has made the same communicators with that cid and fp before: the counts
 * agree without a message.  A message of an incarnation made here already
 * is stale; one of a later incarnation is kept for it (agreement.c). */
#include "proto/engine_int.h"

#include <stdlib.h>

typedef struct fs_comm_inc {
    fs_list_t  elem;
    uint32_t   cid;
    uint32_t   count;       /* communicators made with cid and fp */
    uint64_t   fp;
} fs_comm_inc_t;

static unsigned fs_comm_inc_hash(uint32_t cid, uint64_t fp)
{
    uint64_t h = (fp ^ cid) * 0x9E3779B97F4A7C15ull;

    return (unsigned)((h >> 40) % FS_COMM_INC_BUCKETS);
}

void fs_comm_inc_init(fs_engine_t *engine)
{
    unsigned i;

    for (i = 0; i < FS_COMM_INC_BUCKETS; ++i) {
        fs_list_init(&engine->comm_incs[i]);
    }
}

static fs_comm_inc_t *fs_comm_inc_find(const fs_engine_t *engine, uint32_t cid, uint64_t fp)
{
    const fs_list_t *bucket = &engine->comm_incs[fs_comm_inc_hash(cid, fp)], *e;

    for (e = bucket->next; e != bucket; e = e->next) {
        fs_comm_inc_t *rec = fs_container_of(e, fs_comm_inc_t, elem);
        if ((rec->cid == cid) && (rec->fp == fp)) {
            return rec;
        }
    }
    return NULL;
}

fs_status_t fs_comm_inc_next(fs_engine_t *engine, uint32_t cid, uint64_t fp,
                             uint16_t *inc_p)
{
    fs_comm_inc_t *rec = fs_comm_inc_find(engine, cid, fp);

    if (rec == NULL) {
        rec = malloc(sizeof(*rec));
        if (rec == NULL) {
            return FS_ERR_NO_MEMORY;
        }
        rec->cid   = cid;
        rec->fp    = fp;
        rec->count = 0;
        fs_list_push_tail(&engine->comm_incs[fs_comm_inc_hash(cid, fp)], &rec->elem);
    }
    *inc_p = (uint16_t)++rec->count;
    return FS_OK;
}

/* inc of (cid, fp) was made here already (it may be freed since): a
 * message for it cannot be for a communicator to come.  Incarnations wrap
 * at 16 bits; the half before the last one made counts as past. */
int fs_comm_inc_past(const fs_engine_t *engine, uint32_t cid, uint64_t fp, uint16_t inc)
{
    const fs_comm_inc_t *rec = fs_comm_inc_find(engine, cid, fp);

    return (rec != NULL) && ((uint16_t)((uint16_t)rec->count - inc) < 0x8000u);
}

void fs_comm_inc_cleanup(fs_engine_t *engine)
{
    fs_list_t *e;
    unsigned i;

    for (i = 0; i < FS_COMM_INC_BUCKETS; ++i) {
        while ((e = fs_list_pop_head(&engine->comm_incs[i])) != NULL) {
            free(fs_container_of(e, fs_comm_inc_t, elem));
        }
    }
}
