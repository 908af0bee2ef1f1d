/* Matching queues of one communicator.
 *
 * Posted receives: a list per source ("bin") plus one list for ANY_SOURCE.
 * Every posted receive gets a stamp in posting order, so an incoming message
 * goes to whichever of {first match in its source's bin, first match in the
 * wildcard list} was posted first — MPI's matching order.
 *
 * Unexpected messages: a list per source, and one list over all sources in
 * arrival order, so a wildcard receive takes the earliest arrival and a
 * specific one scans only its source.  Both lists keep each source's messages
 * in arrival order, which is what non-overtaking needs (the arrival order of
 * one source is its send order once src/endpoint/seq has reordered).
 *
 * MPI_ANY_TAG never matches a negative tag: those belong to Open MPI's
 * collectives and communicator setup.
 */
#ifndef FS_QUEUES_MQ_H
#define FS_QUEUES_MQ_H

#include "common/fs_list.h"

#include <stddef.h>
#include <stdint.h>

#define FS_ANY_SOURCE (-1)
#define FS_ANY_TAG    (-1)

typedef struct fs_mq_recv {
    fs_list_t  elem;        /* in a bin's posted list or the wildcard list */
    int32_t    src;         /* rank or FS_ANY_SOURCE */
    int32_t    tag;         /* tag or FS_ANY_TAG */
    uint64_t   stamp;       /* posting order within the communicator */
} fs_mq_recv_t;

typedef struct fs_mq_msg {
    fs_list_t  src_elem;    /* in its source's unexpected list */
    fs_list_t  all_elem;    /* in the communicator's arrival-order list */
    int32_t    src;
    int32_t    tag;
} fs_mq_msg_t;

/* Per-source state of one communicator. */
typedef struct fs_mq_bin {
    fs_list_t  posted;
    fs_list_t  unexpected;
} fs_mq_bin_t;

typedef struct fs_mq {
    fs_list_t  wild_posted;
    fs_list_t  unexpected_all;
    uint64_t   next_stamp;
    size_t     num_unexpected;
} fs_mq_t;

/* Open MPI's collectives and communicator setup use negative tags; a
 * receive's MPI_ANY_TAG is negative too but is point-to-point. */
static inline int fs_mq_tag_is_coll(int32_t tag)
{
    return (tag < 0) && (tag != FS_ANY_TAG);
}

static inline int fs_mq_tag_matches(int32_t wanted, int32_t tag)
{
    return (wanted == tag) || ((wanted == FS_ANY_TAG) && (tag >= 0));
}

void fs_mq_init(fs_mq_t *mq);
void fs_mq_bin_init(fs_mq_bin_t *bin);

/* Appends a receive; bin is its source's bin, or NULL for ANY_SOURCE. */
void fs_mq_post(fs_mq_t *mq, fs_mq_bin_t *bin, fs_mq_recv_t *recv);

fs_mq_recv_t *fs_mq_match_posted_all(fs_mq_t *mq, fs_mq_bin_t *bin, int32_t tag);

/* For a message from bin's source with this tag: removes and returns the
 * receive it matches, or NULL.  Inline, the per-message case: no wildcard
 * receive posted and the first receive from that source takes it. */
static inline fs_mq_recv_t *fs_mq_match_posted(fs_mq_t *mq, fs_mq_bin_t *bin, int32_t tag)
{
    fs_list_t *first = bin->posted.next;

    if (fs_list_is_empty(&mq->wild_posted) && (first != &bin->posted)) {
        fs_mq_recv_t *recv = fs_container_of(first, fs_mq_recv_t, elem);

        if (fs_mq_tag_matches(recv->tag, tag)) {
            fs_list_remove(first);
            return recv;
        }
    }
    return fs_mq_match_posted_all(mq, bin, tag);
}

void fs_mq_add_unexpected(fs_mq_t *mq, fs_mq_bin_t *bin, fs_mq_msg_t *msg);

/* Earliest unexpected message a receive (bin == NULL: ANY_SOURCE) would
 * match; not removed. */
fs_mq_msg_t *fs_mq_find_unexpected(fs_mq_t *mq, fs_mq_bin_t *bin, int32_t tag);

void fs_mq_remove_unexpected(fs_mq_t *mq, fs_mq_msg_t *msg);

/* Removes a posted receive; returns 1 if it was still posted, 0 if it had
 * already been matched. */
int fs_mq_cancel(fs_mq_t *mq, fs_mq_recv_t *recv);

static inline int fs_mq_recv_is_posted(const fs_mq_recv_t *recv)
{
    return fs_list_is_linked(&recv->elem);
}

#endif
