/* Receive-side sequencing of one (communicator, peer) channel.
 *
 * Every matching message carries a 16-bit sequence number, counted per
 * (communicator, sender, receiver) as in ob1.  A transport may hand messages
 * over out of order (UCX reassembles multi-fragment eager messages that
 * travel over several lanes); an early message is parked here until the gap
 * before it fills, so matching always sees the sender's order.  In-order
 * arrival costs one compare. */
#ifndef FS_ENDPOINT_SEQ_H
#define FS_ENDPOINT_SEQ_H

#include "common/fs_list.h"

#include <stddef.h>
#include <stdint.h>

typedef enum fs_seq_verdict {
    FS_SEQ_IN_ORDER,    /* deliver now */
    FS_SEQ_EARLY,       /* park it: a predecessor is missing */
    FS_SEQ_STALE        /* already delivered: duplicate or corrupt */
} fs_seq_verdict_t;

typedef struct fs_seq_item {
    fs_list_t  elem;
    uint16_t   seq;
} fs_seq_item_t;

typedef struct fs_seq_rx {
    uint16_t   expected;
    fs_list_t  parked;      /* sorted by distance from expected */
    size_t     num_parked;
} fs_seq_rx_t;

void fs_seq_rx_init(fs_seq_rx_t *rx);

static inline fs_seq_verdict_t fs_seq_check(const fs_seq_rx_t *rx, uint16_t seq)
{
    int16_t distance = (int16_t)(uint16_t)(seq - rx->expected);

    if (distance == 0) {
        return FS_SEQ_IN_ORDER;
    }
    return (distance > 0) ? FS_SEQ_EARLY : FS_SEQ_STALE;
}

/* Call after delivering the expected message. */
static inline void fs_seq_advance(fs_seq_rx_t *rx)
{
    ++rx->expected;
}

void fs_seq_park(fs_seq_rx_t *rx, fs_seq_item_t *item);

/* Removes and returns the parked message that is now expected, if any. */
fs_seq_item_t *fs_seq_next_ready(fs_seq_rx_t *rx);
/* Removes and returns any parked message (the channel is given up). */
fs_seq_item_t *fs_seq_unpark_any(fs_seq_rx_t *rx);

#endif
