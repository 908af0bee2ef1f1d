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
 * header and, if it fits beside it, the payload (FS_RING_BYTES in all).  A
 * larger payload goes to the ring's data area, taken in turn as a FIFO of
 * bytes: the entry names where, and the room is free again once the
 * receiver has read that entry.  The receiver tells the sender how far it
 * got through the ring's tail word, which the sender reads only when the
 * ring or its data area looks full.
 *
 * Beside each ring, FS_RING_ACKS acknowledgement words the receiver writes
 * and the sender reads: a message that leaves its payload with the sender
 * (a rendezvous, ucx_rndv.c) names one, and the receiver answers there once
 * done with the payload, so no ring is needed the other way. */
#ifndef FS_TRANSPORT_SHM_RING_H
#define FS_TRANSPORT_SHM_RING_H

#include "common/fs_status.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FS_RING_BYTES    112u     /* header and payload inside an entry */
#define FS_RING_MAX_SLOTS 1024u   /* senders a receiver can have */
/* The data area of a ring, bytes: a power of two, at least twice the
 * largest payload (one always fits once the area is empty), at most what
 * an entry's 16-bit offset in 64-byte units reaches.  Small enough that a
 * stream reuses memory still in the caches (1 MiB per pair walked by an
 * 8 KiB stream: osu_allreduce 16 KiB 1.6-1.9x pml ucx; 512 KiB: 0.7x). */
#define FS_RING_DATA_MIN  (16u << 10)
#define FS_RING_DATA_MAX  (4u << 20)
#define FS_RING_ALIGN     64u
#define FS_RING_ACKS      64u     /* acknowledgement words per ring */
/* A ring with nothing for this many polls in a row goes to sleep, unless
 * only this many are awake (a node of a few processes polls as before). */
#define FS_RING_IDLE_POLLS 4096u
#define FS_RING_AWAKE_MIN  4u

typedef struct fs_ring_entry {
    _Atomic uint64_t seq;         /* position + 1 once written */
    uint32_t         len;         /* payload bytes */
    uint8_t          hlen;        /* header bytes, at the start of bytes */
    uint8_t          tag;         /* the caller's (UCX: the active-message id) */
    uint16_t         off;         /* where in the data area the payload is,
                                     in FS_RING_ALIGN units, if not here */
    uint8_t          bytes[FS_RING_BYTES];
} fs_ring_entry_t;

/* The receiver's progress through one ring, a line of its own, and whether
 * it still polls the ring, on the next line (written only when that
 * changes: the sender reads it after every entry). */
typedef struct fs_ring_ctl {
    _Atomic uint64_t tail;        /* entries the receiver is done with */
    uint8_t          pad[56];
    _Atomic uint32_t asleep;      /* 1: ring the bell after writing */
    uint8_t          pad2[60];
} fs_ring_ctl_t;

/* What a receiver publishes (the modex) so that senders can attach. */
typedef struct fs_ring_addr {
    uint64_t  id;                 /* random: tells this segment from another */
    int32_t   pid;
    int32_t   fd;
    uint32_t  slots;
    uint32_t  entries;
    uint32_t  max_len;            /* largest payload */
    uint32_t  data_size;          /* bytes of each ring's data area */
} fs_ring_addr_t;

typedef struct fs_ring_seg_hdr fs_ring_seg_hdr_t;

/* Which rings a poll reads (shm_ring.c, fs_ring_poll): the awake ones, one
 * asleep in turn, and those whose sender rang the bell. */
typedef struct fs_ring_sched {
    uint32_t           *awake;    /* slots read at every poll */
    uint32_t            nawake;
    uint32_t           *asleep;   /* slots read one per poll, in turn */
    uint32_t            nasleep;
    uint32_t            turn;     /* the next asleep slot to read */
    uint32_t           *where;    /* per slot: its index in its list */
    uint32_t           *idle;     /* per slot: polls without an entry */
    uint8_t            *is_awake; /* per slot */
    uint32_t            known;    /* slots claimed and put in a list */
} fs_ring_sched_t;

/* A receiver: its segment and how far it read each ring. */
typedef struct fs_ring_rx {
    uint8_t            *base;
    size_t              len;
    int                 fd;
    fs_ring_seg_hdr_t  *hdr;
    uint8_t            *slot0;    /* the first sender's slot */
    fs_ring_addr_t      addr;
    size_t              slot_size;
    uint64_t           *pos;      /* per slot: the next entry to read */
    fs_ring_sched_t     sched;
    int                 polling;  /* inside fs_ring_poll (no nesting) */
} fs_ring_rx_t;

/* A sender's ring in a peer's segment.  Data-area positions count bytes
 * from the ring's start, never wrapping (an offset is one modulo the size). */
typedef struct fs_ring_tx {
    fs_ring_ctl_t      *ctl;
    fs_ring_entry_t    *ring;
    uint8_t            *data;
    uint64_t            head;       /* the next position to write */
    uint64_t            tail_seen;
    uint64_t            mask;
    uint64_t            data_head;  /* where the next payload may start */
    uint64_t            data_free;  /* what the receiver read ends here */
    uint64_t            data_mask;
    int                 data_ready; /* 1 its pages are mapped, -1 they cannot be,
                                     * 0 not yet asked (fs_ring_tx_populate) */
    uint64_t           *data_end;   /* per entry: data_head once it was written */
    _Atomic uint64_t   *acks;       /* FS_RING_ACKS words, the receiver's to write */
    uint64_t            ack_free;   /* bit i: acks[i] is not in use */
    _Atomic uint64_t   *bell;       /* the receiver's doorbell word of this ring */
    _Atomic uint64_t   *bell_sum;   /* and its summary word */
    uint64_t            bell_bit;
    uint64_t            sum_bit;
    void               *map;
    size_t              map_len;
    void               *hdr_map;    /* the segment's header page (the bell) */
} fs_ring_tx_t;

/* ok is 0 for an entry whose lengths or place exceed the entry or the ring's
 * data area (a broken or hostile sender): data is NULL, the caller reports
 * it.  slot names the sender's ring (fs_ring_rx_ack). */
typedef void (*fs_ring_cb_t)(void *arg, uint32_t slot, unsigned tag, const void *hdr,
                             size_t hlen, void *data, size_t len, int ok);

/* A segment for up to slots senders, entries per ring (rounded up to a power
 * of two), payloads up to max_len bytes, data_size bytes of data area per
 * ring (rounded up to a power of two of at least 2 * max_len; max_len at
 * most half of FS_RING_DATA_MAX).  Memory is taken as it is used. */
fs_status_t fs_ring_rx_create(fs_ring_rx_t *rx, unsigned slots, unsigned entries,
                              size_t max_len, size_t data_size);
void        fs_ring_rx_destroy(fs_ring_rx_t *rx);
/* Calls cb for what the senders wrote, up to a bounded number per ring:
 * of the rings that are awake, one ring asleep, and those whose sender rang
 * the bell; its cost follows the senders that are busy, not their number. */
unsigned    fs_ring_poll(fs_ring_rx_t *rx, fs_ring_cb_t cb, void *arg);
/* The same over every ring (a peer's failure: what it published before
 * dying is delivered first, bell or not). */
unsigned    fs_ring_poll_all(fs_ring_rx_t *rx, fs_ring_cb_t cb, void *arg);
/* The acknowledgement word idx of the ring in slot; NULL if there is none
 * (a sender's word to check: it comes off the wire). */
_Atomic uint64_t *fs_ring_rx_ack(fs_ring_rx_t *rx, uint32_t slot, uint32_t idx);

/* Attaches to a receiver's segment and takes a ring of it.  An error when
 * the segment cannot be reached (another node, another /proc), is not the
 * one addr names, has no ring left or no memory for its entries: the caller
 * sends another way. */
fs_status_t fs_ring_tx_open(fs_ring_tx_t *tx, const fs_ring_addr_t *addr);
void        fs_ring_tx_close(fs_ring_tx_t *tx);

/* Takes a free acknowledgement word, cleared; 0 if all are in use. */
static inline int fs_ring_ack_take(fs_ring_tx_t *tx, unsigned *idx_p)
{
    unsigned idx;

    if (tx->ack_free == 0) {
        return 0;
    }
    idx          = (unsigned)__builtin_ctzll(tx->ack_free);
    tx->ack_free &= ~(1ull << idx);
    atomic_store_explicit(&tx->acks[idx], 0, memory_order_relaxed);
    *idx_p = idx;
    return 1;   /* the entry that names it publishes the clearing too */
}

static inline void fs_ring_ack_give(fs_ring_tx_t *tx, unsigned idx)
{
    tx->ack_free |= 1ull << idx;
}

static inline uint64_t fs_ring_ack_read(const fs_ring_tx_t *tx, unsigned idx)
{
    return atomic_load_explicit(&tx->acks[idx], memory_order_acquire);
}

/* Tells a receiver that no longer polls this ring that it has an entry. */
void        fs_ring_tx_bell(fs_ring_tx_t *tx);
/* Reads the receiver's tail: how far the ring and its data area are free. */
void        fs_ring_tx_refresh(fs_ring_tx_t *tx);
/* Maps every page of the data area at once, before its first payload.  A
 * page first touched inside a stream costs a fault there (~25 us each on a
 * virtual machine here: osu_alltoall 512 B at 2 ranks 0.84 us against 0.48
 * over its first 10000 iterations); a pair that never sends more than an
 * entry holds takes no data-area memory.  0 if the memory is not there: the
 * area stays unused. */
int         fs_ring_tx_populate(fs_ring_tx_t *tx);

/* Copies a payload too large for its entry into the data area, the next
 * room in turn (from the area's start if it does not fit before its end).
 * 0 if that room is still the receiver's. */
static inline int fs_ring_data_put(fs_ring_tx_t *tx, fs_ring_entry_t *e, const void *data,
                                   size_t len)
{
    uint64_t size  = tx->data_mask + 1, start = tx->data_head;
    uint64_t need  = (len + FS_RING_ALIGN - 1) & ~(uint64_t)(FS_RING_ALIGN - 1);
    uint64_t off   = start & tx->data_mask;

    if (fs_unlikely(tx->data_ready <= 0) && !fs_ring_tx_populate(tx)) {
        return 0;
    }
    if (off + need > size) {
        start += size - off;
        off    = 0;
    }
    if (fs_unlikely(start + need - tx->data_free > size)) {
        fs_ring_tx_refresh(tx);
        if (start + need - tx->data_free > size) {
            return 0;
        }
    }
    memcpy(tx->data + off, data, len);
    e->off        = (uint16_t)(off / FS_RING_ALIGN);
    tx->data_head = start + need;
    return 1;
}

/* 1 if written, 0 if the ring or its data area is full.  hlen <=
 * FS_RING_BYTES, len <= the ring's max_len. */
static inline int fs_ring_send(fs_ring_tx_t *tx, unsigned tag, const void *hdr, size_t hlen,
                               const void *data, size_t len)
{
    uint64_t pos = tx->head;
    fs_ring_entry_t *e;

    if (fs_unlikely(pos - tx->tail_seen > tx->mask)) {
        fs_ring_tx_refresh(tx);
        if (pos - tx->tail_seen > tx->mask) {
            return 0;
        }
    }
    e = &tx->ring[pos & tx->mask];
    if (fs_likely(hlen + len <= FS_RING_BYTES)) {
        memcpy(e->bytes + hlen, data, len);
    } else if (!fs_ring_data_put(tx, e, data, len)) {
        return 0;
    }
    tx->data_end[pos & tx->mask] = tx->data_head;
    e->len  = (uint32_t)len;
    e->hlen = (uint8_t)hlen;
    e->tag  = (uint8_t)tag;
    memcpy(e->bytes, hdr, hlen);
    atomic_store_explicit(&e->seq, pos + 1, memory_order_release);
    tx->head = pos + 1;
    if (fs_unlikely(atomic_load_explicit(&tx->ctl->asleep, memory_order_relaxed) != 0)) {
        fs_ring_tx_bell(tx);
    }
    return 1;
}

#endif
