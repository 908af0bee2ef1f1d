/* Receive ordering with a dead peer (MPI-FT draft 17.6, advice to
 * implementors): once a receive from a failed peer P on a communicator ends
 * with the failure error, every later receive from P on that communicator
 * that could match the same messages -- same tag, or either side
 * MPI_ANY_TAG -- must end with the error too, even if a matching message is
 * buffered; receives for other specific tags still get their messages.
 *
 * Each (communicator, peer) bin remembers the tags of receives that failed
 * that way ("poisoned").  The set is empty for every live peer, so the hot
 * path only tests one counter. */
#ifndef FS_QUEUES_DEADPEER_H
#define FS_QUEUES_DEADPEER_H

#include "common/fs_status.h"

#include <stdint.h>

typedef struct fs_dp_poison {
    uint8_t   any_tag;      /* a receive with MPI_ANY_TAG failed */
    uint32_t  count;        /* specific tags that failed */
    uint32_t  capacity;
    int32_t  *tags;         /* grown on the failure path only */
} fs_dp_poison_t;

void fs_dp_init(fs_dp_poison_t *poison);
void fs_dp_cleanup(fs_dp_poison_t *poison);

/* A receive with this tag (or FS_ANY_TAG) ended with the failure error.
 * Returns FS_ERR_NO_MEMORY if the tag could not be recorded; the caller
 * then poisons everything (any_tag), which is stricter but still correct. */
fs_status_t fs_dp_poison_tag(fs_dp_poison_t *poison, int32_t tag);

/* Whether a new receive with this tag must fail. */
int fs_dp_blocks(const fs_dp_poison_t *poison, int32_t tag);

/* Whether a buffered message with this tag can no longer be received by
 * any receive naming its sender. */
int fs_dp_blocks_message(const fs_dp_poison_t *poison, int32_t msg_tag);

static inline int fs_dp_is_empty(const fs_dp_poison_t *poison)
{
    return !poison->any_tag && (poison->count == 0);
}

#endif
