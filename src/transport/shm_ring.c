/* Shared-memory rings, one per (sender, receiver) pair (shm_ring.h says
 * why).  The receiver's segment is a memfd: no name to leak when a process
 * is killed; a sender opens it through /proc/<pid>/fd/<fd>, as UCX's posix
 * transport does.
 *
 * Segment: a page of header (fs_ring_seg_hdr_t), then one slot per sender:
 * the tail line (fs_ring_ctl_t), the acknowledgement words, the entries,
 * the ring's data area.  A
 * sender claims the next slot with one atomic add and maps that slot alone;
 * the receiver polls the slots claimed so far.  A slot is never given back:
 * a sender that dies keeps it, and the ring it stalled is read by no one
 * else. */
#define _GNU_SOURCE
#include "transport/shm_ring.h"
#include "common/fs_rand.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define FS_RING_MAGIC    0x676e6972736600ull   /* "\0fsring" */
#define FS_RING_POLL_MAX 16u                   /* entries per ring per poll */
#define FS_RING_BELL_WORDS (FS_RING_MAX_SLOTS / 64u)

_Static_assert(sizeof(fs_ring_entry_t) == 128, "an entry is two cache lines");
_Static_assert(sizeof(fs_ring_ctl_t) == 128, "the tail has lines of its own");
_Static_assert(FS_RING_ACKS <= 64, "free acknowledgement words are one bit mask");

#define FS_RING_ACKS_BYTES (FS_RING_ACKS * sizeof(uint64_t))

struct fs_ring_seg_hdr {
    uint64_t          magic;
    uint64_t          id;
    uint32_t          slots;
    uint32_t          entries;
    uint32_t          max_len;
    uint32_t          data_size;
    uint64_t          slot_size;
    _Atomic uint32_t  claimed;   /* slots handed out; may pass slots */
    /* the doorbell: bit s of bell[s / 64] once the sender of a sleeping
     * ring s wrote to it, bit s / 64 of bell_sum with it (lines of their
     * own: senders write them) */
    _Alignas(64) _Atomic uint64_t bell_sum;
    _Alignas(64) _Atomic uint64_t bell[FS_RING_BELL_WORDS];
};

_Static_assert(FS_RING_BELL_WORDS <= 64, "the bell's summary is one word");
_Static_assert(sizeof(struct fs_ring_seg_hdr) <= 4096, "the header fits a page");

static size_t fs_ring_page(void)
{
    long page = sysconf(_SC_PAGESIZE);

    return (page > 0) ? (size_t)page : 4096u;
}

static size_t fs_ring_round(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

static size_t fs_ring_slot_size(uint32_t entries, size_t data_size)
{
    return fs_ring_round(sizeof(fs_ring_ctl_t) + FS_RING_ACKS_BYTES +
                         entries * sizeof(fs_ring_entry_t) + data_size, fs_ring_page());
}

static uint32_t fs_ring_pow2(size_t want, uint32_t min, uint32_t max)
{
    uint32_t n = min;

    while ((n < want) && (n < max)) {
        n <<= 1;
    }
    return n;
}

static fs_status_t fs_ring_sched_create(fs_ring_sched_t *q, uint32_t slots)
{
    q->awake    = calloc(slots, sizeof(*q->awake));
    q->asleep   = calloc(slots, sizeof(*q->asleep));
    q->where    = calloc(slots, sizeof(*q->where));
    q->idle     = calloc(slots, sizeof(*q->idle));
    q->is_awake = calloc(slots, sizeof(*q->is_awake));
    return ((q->awake == NULL) || (q->asleep == NULL) || (q->where == NULL) ||
            (q->idle == NULL) || (q->is_awake == NULL)) ? FS_ERR_NO_MEMORY : FS_OK;
}

static void fs_ring_sched_destroy(fs_ring_sched_t *q)
{
    free(q->awake);
    free(q->asleep);
    free(q->where);
    free(q->idle);
    free(q->is_awake);
    memset(q, 0, sizeof(*q));
}

fs_status_t fs_ring_rx_create(fs_ring_rx_t *rx, unsigned slots, unsigned entries,
                              size_t max_len, size_t data_size)
{
    uint32_t n;

    memset(rx, 0, sizeof(*rx));
    rx->fd = -1;
    if (max_len > FS_RING_DATA_MAX / 2) {
        return FS_ERR_INVALID;
    }
    n              = fs_ring_pow2(entries, 16, 4096);
    data_size      = fs_ring_pow2((data_size > 2 * max_len) ? data_size : 2 * max_len,
                                  FS_RING_DATA_MIN, FS_RING_DATA_MAX);
    slots          = (slots == 0) ? 1 : (slots > FS_RING_MAX_SLOTS) ? FS_RING_MAX_SLOTS : slots;
    rx->slot_size  = fs_ring_slot_size(n, data_size);
    rx->len        = fs_ring_page() + slots * rx->slot_size;
    rx->pos        = calloc(slots, sizeof(*rx->pos));
    rx->fd         = memfd_create("failstop-ring", MFD_CLOEXEC);
    if ((rx->pos == NULL) || (fs_ring_sched_create(&rx->sched, slots) != FS_OK) ||
        (rx->fd < 0) || (ftruncate(rx->fd, (off_t)rx->len) != 0)) {
        goto err;
    }
    rx->base = mmap(NULL, rx->len, PROT_READ | PROT_WRITE, MAP_SHARED, rx->fd, 0);
    if (rx->base == MAP_FAILED) {
        rx->base = NULL;
        goto err;
    }
    rx->hdr            = (fs_ring_seg_hdr_t *)rx->base;
    rx->hdr->id        = fs_rand_id();
    rx->hdr->slots     = slots;
    rx->hdr->entries   = n;
    rx->hdr->max_len   = (uint32_t)max_len;
    rx->hdr->data_size = (uint32_t)data_size;
    rx->hdr->slot_size = rx->slot_size;
    atomic_store_explicit(&rx->hdr->claimed, 0, memory_order_relaxed);
    /* last: a sender that sees the magic sees the geometry */
    atomic_thread_fence(memory_order_release);
    rx->hdr->magic = FS_RING_MAGIC;
    rx->slot0 = rx->base + fs_ring_page();
    rx->addr  = (fs_ring_addr_t){.id = rx->hdr->id, .pid = (int32_t)getpid(), .fd = rx->fd,
                                 .slots = slots, .entries = n, .max_len = (uint32_t)max_len,
                                 .data_size = (uint32_t)data_size};
    return FS_OK;
err:
    fs_ring_rx_destroy(rx);
    return FS_ERR_LOCAL;
}

/* Also on a zeroed fs_ring_rx_t (never created): does nothing. */
void fs_ring_rx_destroy(fs_ring_rx_t *rx)
{
    if (rx->len == 0) {
        return;
    }
    if (rx->base != NULL) {
        munmap(rx->base, rx->len);
    }
    if (rx->fd >= 0) {
        close(rx->fd);
    }
    free(rx->pos);
    fs_ring_sched_destroy(&rx->sched);
    memset(rx, 0, sizeof(*rx));
    rx->fd = -1;
}

/* The payload of entry e, NULL if its lengths or place exceed what the
 * ring has (the sender's memory: read once). */
static void *fs_ring_payload(const fs_ring_rx_t *rx, fs_ring_entry_t *e, uint8_t *data,
                             size_t hlen, size_t len)
{
    size_t off;

    if (fs_likely(hlen + len <= FS_RING_BYTES)) {
        return e->bytes + hlen;
    }
    off = (size_t)e->off * FS_RING_ALIGN;
    if ((hlen > FS_RING_BYTES) || (len > rx->addr.max_len) ||
        (off + len > rx->addr.data_size)) {
        return NULL;
    }
    return data + off;
}

static unsigned fs_ring_poll_slot(fs_ring_rx_t *rx, uint32_t s, fs_ring_cb_t cb, void *arg)
{
    uint8_t *slot         = rx->slot0 + s * rx->slot_size;
    fs_ring_ctl_t *ctl    = (fs_ring_ctl_t *)slot;
    fs_ring_entry_t *ring = (fs_ring_entry_t *)(slot + sizeof(*ctl) + FS_RING_ACKS_BYTES);
    uint8_t *data         = (uint8_t *)(ring + rx->addr.entries);
    uint64_t mask         = rx->addr.entries - 1, pos = rx->pos[s];
    unsigned count;

    for (count = 0; count < FS_RING_POLL_MAX; ++count, ++pos) {
        fs_ring_entry_t *e = &ring[pos & mask];
        size_t len, hlen;
        void *payload;

        if (atomic_load_explicit(&e->seq, memory_order_acquire) != pos + 1) {
            break;
        }
        len     = e->len;
        hlen    = e->hlen;
        payload = fs_ring_payload(rx, e, data, hlen, len);
        if (fs_likely(payload != NULL)) {
            cb(arg, s, e->tag, e->bytes, hlen, payload, len, 1);
        } else {
            cb(arg, s, e->tag, e->bytes, 0, NULL, len, 0);
        }
        /* the entry is the sender's again only now: cb read it */
        atomic_store_explicit(&ctl->tail, pos + 1, memory_order_release);
    }
    rx->pos[s] = pos;
    return count;
}

static fs_ring_ctl_t *fs_ring_ctl(const fs_ring_rx_t *rx, uint32_t s)
{
    return (fs_ring_ctl_t *)(rx->slot0 + s * rx->slot_size);
}

static void fs_ring_list_del(uint32_t *list, uint32_t *n_p, uint32_t *where, uint32_t s)
{
    uint32_t last = list[--*n_p];

    list[where[s]] = last;
    where[last]    = where[s];
}

static void fs_ring_list_add(uint32_t *list, uint32_t *n_p, uint32_t *where, uint32_t s)
{
    where[s]      = *n_p;
    list[(*n_p)++] = s;
}

static void fs_ring_wake(fs_ring_rx_t *rx, uint32_t s)
{
    fs_ring_sched_t *q = &rx->sched;

    if (q->is_awake[s]) {
        return;
    }
    fs_ring_list_del(q->asleep, &q->nasleep, q->where, s);
    fs_ring_list_add(q->awake, &q->nawake, q->where, s);
    q->is_awake[s] = 1;
    q->idle[s]     = 0;
    atomic_store_explicit(&fs_ring_ctl(rx, s)->asleep, 0, memory_order_relaxed);
}

/* The sender reads the flag after writing an entry, without a fence: one
 * that read it stale does not ring, and the turn of the sleeping rings
 * (one per poll) finds its entry instead. */
static void fs_ring_sleep(fs_ring_rx_t *rx, uint32_t s)
{
    fs_ring_sched_t *q = &rx->sched;

    fs_ring_list_del(q->awake, &q->nawake, q->where, s);
    fs_ring_list_add(q->asleep, &q->nasleep, q->where, s);
    q->is_awake[s] = 0;
    atomic_store_explicit(&fs_ring_ctl(rx, s)->asleep, 1, memory_order_relaxed);
}

/* Rings claimed since the last poll start awake; those whose sender rang
 * the bell wake up. */
static void fs_ring_admit(fs_ring_rx_t *rx)
{
    fs_ring_sched_t *q = &rx->sched;
    uint32_t n = atomic_load_explicit(&rx->hdr->claimed, memory_order_acquire);
    uint64_t sum, bits;

    n = (n < rx->addr.slots) ? n : rx->addr.slots;
    for (; q->known < n; ++q->known) {
        fs_ring_list_add(q->awake, &q->nawake, q->where, q->known);
        q->is_awake[q->known] = 1;
    }
    if (fs_likely(atomic_load_explicit(&rx->hdr->bell_sum, memory_order_relaxed) == 0)) {
        return;
    }
    sum = atomic_exchange_explicit(&rx->hdr->bell_sum, 0, memory_order_acquire);
    for (; sum != 0; sum &= sum - 1) {
        uint32_t w = (uint32_t)__builtin_ctzll(sum);

        bits = atomic_exchange_explicit(&rx->hdr->bell[w], 0, memory_order_acquire);
        for (; bits != 0; bits &= bits - 1) {
            uint32_t s = w * 64u + (uint32_t)__builtin_ctzll(bits);

            if (s < q->known) {
                fs_ring_wake(rx, s);
            }
        }
    }
}

unsigned fs_ring_poll(fs_ring_rx_t *rx, fs_ring_cb_t cb, void *arg)
{
    fs_ring_sched_t *q = &rx->sched;
    unsigned count = 0, got;
    uint32_t i, s;

    if (rx->polling) {
        return 0;               /* a callback that progresses: not twice */
    }
    rx->polling = 1;
    fs_ring_admit(rx);
    for (i = 0; i < q->nawake;) {
        s   = q->awake[i];
        got = fs_ring_poll_slot(rx, s, cb, arg);
        count += got;
        if (got != 0) {
            q->idle[s] = 0;
        } else if ((++q->idle[s] >= FS_RING_IDLE_POLLS) && (q->nawake > FS_RING_AWAKE_MIN)) {
            fs_ring_sleep(rx, s);     /* the last awake ring takes its place */
            continue;
        }
        ++i;
    }
    if (q->nasleep != 0) {
        q->turn = (q->turn < q->nasleep) ? q->turn : 0;
        s       = q->asleep[q->turn++];
        got     = fs_ring_poll_slot(rx, s, cb, arg);
        count  += got;
        if (got != 0) {
            fs_ring_wake(rx, s);  /* its bell was not rung, or not yet seen */
        }
    }
    rx->polling = 0;
    return count;
}

unsigned fs_ring_poll_all(fs_ring_rx_t *rx, fs_ring_cb_t cb, void *arg)
{
    unsigned count = 0, got;
    uint32_t s;

    if (rx->polling) {
        return 0;
    }
    rx->polling = 1;
    fs_ring_admit(rx);
    for (s = 0; s < rx->sched.known; ++s) {
        got    = fs_ring_poll_slot(rx, s, cb, arg);
        count += got;
        if (got != 0) {
            fs_ring_wake(rx, s);
        }
    }
    rx->polling = 0;
    return count;
}

_Atomic uint64_t *fs_ring_rx_ack(fs_ring_rx_t *rx, uint32_t slot, uint32_t idx)
{
    uint32_t n = atomic_load_explicit(&rx->hdr->claimed, memory_order_acquire);

    if ((slot >= n) || (slot >= rx->addr.slots) || (idx >= FS_RING_ACKS)) {
        return NULL;
    }
    return (_Atomic uint64_t *)(rx->slot0 + slot * rx->slot_size + sizeof(fs_ring_ctl_t)) +
           idx;
}

/* Maps the header page and checks it is the segment addr names. */
static fs_ring_seg_hdr_t *fs_ring_attach(int fd, const fs_ring_addr_t *addr)
{
    fs_ring_seg_hdr_t *hdr = mmap(NULL, fs_ring_page(), PROT_READ | PROT_WRITE,
                                  MAP_SHARED, fd, 0);

    if (hdr == MAP_FAILED) {
        return NULL;
    }
    if ((hdr->magic != FS_RING_MAGIC) || (hdr->id != addr->id) ||
        (hdr->slots != addr->slots) || (hdr->entries != addr->entries) ||
        (hdr->max_len != addr->max_len) || (hdr->data_size != addr->data_size) ||
        (hdr->slot_size != fs_ring_slot_size(addr->entries, addr->data_size))) {
        munmap(hdr, fs_ring_page());
        return NULL;
    }
    return hdr;
}

fs_status_t fs_ring_tx_open(fs_ring_tx_t *tx, const fs_ring_addr_t *addr)
{
    fs_ring_seg_hdr_t *hdr;
    char path[64];
    uint32_t slot;
    uint8_t *map;
    int fd;

    memset(tx, 0, sizeof(*tx));
    if ((addr->entries == 0) || ((addr->entries & (addr->entries - 1)) != 0) ||
        (addr->data_size < 2 * (uint64_t)addr->max_len) ||
        ((addr->data_size & (addr->data_size - 1)) != 0) ||
        (addr->data_size > FS_RING_DATA_MAX)) {
        return FS_ERR_LOCAL;
    }
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)addr->pid, (int)addr->fd);
    fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        return FS_ERR_LOCAL;
    }
    hdr = fs_ring_attach(fd, addr);
    slot = (hdr != NULL) ? atomic_fetch_add(&hdr->claimed, 1) : addr->slots;
    map  = MAP_FAILED;
    if (slot < addr->slots) {
        tx->map_len = hdr->slot_size;
        map = mmap(NULL, tx->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                   (off_t)(fs_ring_page() + slot * tx->map_len));
    }
    close(fd);
    tx->data_end = calloc(addr->entries, sizeof(*tx->data_end));
    if ((map == MAP_FAILED) || (tx->data_end == NULL)) {
        if (map != MAP_FAILED) {
            munmap(map, tx->map_len);
        }
        if (hdr != NULL) {
            munmap(hdr, fs_ring_page());
        }
        free(tx->data_end);
        memset(tx, 0, sizeof(*tx));
        return FS_ERR_LOCAL;
    }
    /* the header page stays mapped: the doorbell is there */
    tx->hdr_map   = hdr;
    tx->bell      = &hdr->bell[slot / 64u];
    tx->bell_sum  = &hdr->bell_sum;
    tx->bell_bit  = 1ull << (slot % 64u);
    tx->sum_bit   = 1ull << (slot / 64u);
    tx->map       = map;
    tx->ctl       = (fs_ring_ctl_t *)map;
    tx->acks      = (_Atomic uint64_t *)(map + sizeof(fs_ring_ctl_t));
    tx->ack_free  = (FS_RING_ACKS == 64) ? ~0ull : ((1ull << FS_RING_ACKS) - 1);
    tx->ring      = (fs_ring_entry_t *)(map + sizeof(fs_ring_ctl_t) + FS_RING_ACKS_BYTES);
    tx->data      = (uint8_t *)(tx->ring + addr->entries);
    tx->mask      = addr->entries - 1;
    tx->data_mask = addr->data_size - 1;
    /* a new slot: the receiver has read nothing of it */
    tx->tail_seen = 0;
    tx->head      = 0;
    /* the tail, answer words and entries are in use from the first message
     * (fs_ring_tx_populate says why now).  Memory the receiver's segment
     * cannot have would be a SIGBUS at the first store: no ring then.  A
     * kernel before 5.14 (EINVAL) maps them at first use. */
    if ((madvise(map, (size_t)(tx->data - map), MADV_POPULATE_WRITE) != 0) && (errno != EINVAL)) {
        fs_ring_tx_close(tx);
        return FS_ERR_NO_MEMORY;
    }
    return FS_OK;
}

/* The data of the entries the receiver has read is free up to where the
 * last of them ended; that entry's data_end is still its own unless the
 * ring is full (then nothing is sent anyway). */
void fs_ring_tx_refresh(fs_ring_tx_t *tx)
{
    uint64_t tail = atomic_load_explicit(&tx->ctl->tail, memory_order_acquire);

    tx->tail_seen = tail;
    if ((tail != 0) && (tx->head - tail <= tx->mask)) {
        tx->data_free = tx->data_end[(tail - 1) & tx->mask];
    }
}

/* Populated writable (no content changes).  A kernel before 5.14 has no
 * MADV_POPULATE_WRITE (EINVAL): then a store per page, the area being the
 * sender's own until its first payload is published.  Any other error is
 * memory the segment cannot have (its tmpfs or cgroup is full, the file was
 * cut short): a store there would be a SIGBUS, so the area is never used
 * and payloads beyond an entry go the caller's other way. */
int fs_ring_tx_populate(fs_ring_tx_t *tx)
{
    size_t size = tx->data_mask + 1, page = fs_ring_page(), off;
    size_t lead = (size_t)(tx->data - (uint8_t *)tx->map) % page;  /* the area starts mid-page */

    if (tx->data_ready != 0) {
        return tx->data_ready > 0;
    }
    if (madvise(tx->data - lead, size + lead, MADV_POPULATE_WRITE) == 0) {
        tx->data_ready = 1;
    } else if (errno == EINVAL) {
        for (off = 0; off < size; off += page) {
            ((volatile uint8_t *)tx->data)[off] = 0;
        }
        ((volatile uint8_t *)tx->data)[size - 1] = 0;
        tx->data_ready = 1;
    } else {
        tx->data_ready = -1;
    }
    return tx->data_ready > 0;
}

/* Word first, summary second: a receiver that sees the summary bit finds
 * the word's. */
void fs_ring_tx_bell(fs_ring_tx_t *tx)
{
    atomic_fetch_or_explicit(tx->bell, tx->bell_bit, memory_order_release);
    atomic_fetch_or_explicit(tx->bell_sum, tx->sum_bit, memory_order_release);
}

void fs_ring_tx_close(fs_ring_tx_t *tx)
{
    if (tx->map != NULL) {
        munmap(tx->map, tx->map_len);
    }
    if (tx->hdr_map != NULL) {
        munmap(tx->hdr_map, fs_ring_page());
    }
    free(tx->data_end);
    memset(tx, 0, sizeof(*tx));
}
