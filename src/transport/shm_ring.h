/* Shared-memory rings: one single-producer ring per (sender, receiver) pair
 * of a node, in a segment the receiver owns.  The UCX transport's short lane
 * (ucx_shm.c) runs on them.
 *
 * Why not one FIFO shared by all senders (UCX's mm transports, libfabric's
 * shm, Open MPI's vader): a sender there reserves an entry, writes it, then
 * marks it ready; a sender killed between the two leaves an entry never
 * marked, and the receiver, which reads in order, reads nothing behind it
 * again.  The live senders' messages behind it are lost and the survivors
 * hang (failstop-validate eager over UCX's FIFO: about 1 run in 70).  Here a
 * sender writes only its own ring; its death stalls that ring alone, and
 * what it published before dying is still read (dead-peer rule a).
 *
 * An entry is one 128-byte line pair: a word that says "written" (its
 * position + 1, so a stale entry never reads as new), the lengths, the
 * header and, if it fits beside it, the payload (FS_RING_BYTES in all); a
 * larger payload goes to the next of the ring's FS_RING_BUFS buffers.  The
 * receiver reads the entry at its position and tells the sender how far it
 * got through the ring's tail word, which the sender reads only when the
 * ring or the buffer it wants looks busy. */
#ifndef FS_TRANSPORT_SHM_RING_H
#define FS_TRANSPORT_SHM_RING_H

#include "common/fs_status.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FS_RING_BYTES    112u     /* header and payload inside an entry */
#define FS_RING_MAX_SLOTS 1024u   /* senders a receiver can have */
/* Buffers per ring for payloads that do not fit an entry, used in turn and
 * free again once the entry that used one is read: as many as OSU's window
 * (64), fewer than the entries, so that a stream of large messages reuses
 * memory still in the caches (one buffer per entry walked 1 MiB per pair:
 * osu_allreduce 16 KiB 1.6-1.9x pml ucx, 0.7x with 64; 16 buffers cut a
 * 64-message window short: osu_bw 4 KiB 0.7x). */
#define FS_RING_BUFS     64u

typedef struct fs_ring_entry {
    _Atomic uint64_t seq;         /* position + 1 once written */
    uint32_t         len;         /* payload bytes */
    uint16_t         hlen;        /* header bytes, at the start of bytes */
    uint8_t          tag;         /* the caller's (UCX: the active-message id) */
    uint8_t          buf;         /* the buffer the payload is in, if not here */
    uint8_t          bytes[FS_RING_BYTES];
} fs_ring_entry_t;

/* The receiver's progress through one ring, a line of its own. */
typedef struct fs_ring_ctl {
    _Atomic uint64_t tail;        /* entries the receiver is done with */
    uint8_t          pad[120];
} fs_ring_ctl_t;

/* What a receiver publishes (the modex) so that senders can attach. */
typedef struct fs_ring_addr {
    uint64_t  id;                 /* random: tells this segment from another */
    int32_t   pid;
    int32_t   fd;
    uint32_t  slots;
    uint32_t  entries;
    uint64_t  buf_size;
} fs_ring_addr_t;

typedef struct fs_ring_seg_hdr fs_ring_seg_hdr_t;

/* A receiver: its segment and how far it read each ring. */
typedef struct fs_ring_rx {
    uint8_t            *base;
    size_t              len;
    int                 fd;
    fs_ring_seg_hdr_t  *hdr;
    fs_ring_addr_t      addr;
    size_t              slot_size;
    uint64_t           *pos;      /* per slot: the next entry to read */
    int                 polling;  /* inside fs_ring_poll (no nesting) */
} fs_ring_rx_t;

/* A sender's ring in a peer's segment. */
typedef struct fs_ring_tx {
    fs_ring_ctl_t      *ctl;
    fs_ring_entry_t    *ring;
    uint8_t            *bufs;
    uint64_t            head;     /* the next position to write */
    uint64_t            tail_seen;
    uint64_t            mask;
    size_t              buf_size;
    uint64_t            buf_next;                 /* the next buffer to use */
    uint64_t            buf_user[FS_RING_BUFS];   /* position + 1 of the entry
                                                     that used each last */
    void               *map;
    size_t              map_len;
} fs_ring_tx_t;

/* ok is 0 for an entry whose lengths exceed the entry or the ring's buffers
 * (a broken or hostile sender): data is NULL, the caller reports it. */
typedef void (*fs_ring_cb_t)(void *arg, unsigned tag, const void *hdr, size_t hlen,
                             void *data, size_t len, int ok);

/* A segment for up to slots senders, entries per ring (rounded up to a power
 * of two), payloads up to buf_size bytes.  Memory is taken as it is used. */
fs_status_t fs_ring_rx_create(fs_ring_rx_t *rx, unsigned slots, unsigned entries,
                              size_t buf_size);
void        fs_ring_rx_destroy(fs_ring_rx_t *rx);
/* Calls cb for what the senders wrote, up to a bounded number per ring. */
unsigned    fs_ring_poll(fs_ring_rx_t *rx, fs_ring_cb_t cb, void *arg);

/* Attaches to a receiver's segment and takes a ring of it.  An error when
 * the segment cannot be reached (another node, another /proc), is not the
 * one addr names, or has no ring left: the caller sends another way. */
fs_status_t fs_ring_tx_open(fs_ring_tx_t *tx, const fs_ring_addr_t *addr);
void        fs_ring_tx_close(fs_ring_tx_t *tx);

/* 1 if written, 0 if the ring is full.  hlen <= FS_RING_BYTES, len <= the
 * ring's buf_size. */
static inline int fs_ring_send(fs_ring_tx_t *tx, unsigned tag, const void *hdr, size_t hlen,
                               const void *data, size_t len)
{
    uint64_t pos = tx->head;
    fs_ring_entry_t *e;

    if (fs_unlikely(pos - tx->tail_seen > tx->mask)) {
        tx->tail_seen = atomic_load_explicit(&tx->ctl->tail, memory_order_acquire);
        if (pos - tx->tail_seen > tx->mask) {
            return 0;
        }
    }
    e       = &tx->ring[pos & tx->mask];
    e->len  = (uint32_t)len;
    e->hlen = (uint16_t)hlen;
    e->tag  = (uint8_t)tag;
    memcpy(e->bytes, hdr, hlen);
    if (fs_likely(hlen + len <= FS_RING_BYTES)) {
        memcpy(e->bytes + hlen, data, len);
    } else {
        unsigned b = (unsigned)(tx->buf_next % FS_RING_BUFS);

        /* free once the receiver has read past the entry that used it */
        if (tx->buf_user[b] > tx->tail_seen) {
            tx->tail_seen = atomic_load_explicit(&tx->ctl->tail, memory_order_acquire);
            if (tx->buf_user[b] > tx->tail_seen) {
                return 0;
            }
        }
        memcpy(tx->bufs + b * tx->buf_size, data, len);
        e->buf         = (uint8_t)b;
        tx->buf_user[b] = pos + 1;
        tx->buf_next++;
    }
    atomic_store_explicit(&e->seq, pos + 1, memory_order_release);
    tx->head = pos + 1;
    return 1;
}

#endif
