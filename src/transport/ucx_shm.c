/* The UCX transport's short lane: small matching messages between processes
 * of one node go over failstop's own shared-memory rings (shm_ring.c), one
 * per pair of processes, beside the UCP worker.
 *
 * Why a lane: UCP's active-message send always goes through UCT's iov send
 * (its header, the payload and failstop's header: three pieces), which costs
 * about twice UCP's tag send, and its receive handler adds a layer before
 * failstop's.  Here failstop's 8-byte short header is the entry's header
 * and the ring's reader is failstop's.  Why rings of its own and not UCT's
 * shared-memory FIFO (it was, until a sender killed inside its send left the
 * FIFO unread for good: shm_ring.h).
 *
 * Order: the lane and UCP are two channels to the same peer; the engine
 * restores the sender's order from the sequence numbers (src/endpoint/
 * seq.h).  Failure: a dead peer is still reported by UCP (keepalive, the
 * detector); before that report goes up the rings are drained, so the
 * messages a peer sent before dying are delivered first.  A message the lane
 * cannot take (the peer's ring is full: a slow or dead receiver) goes by
 * UCP. */
#include "transport/ucx_int.h"
#include "common/fs_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FS_UCX_SHM_LIMIT 8192u
/* Data area of each ring: a stream of 8 KiB messages reuses memory still in
 * the caches (shm_ring.h), and four 128 KiB collective messages fit.  With
 * many processes on the node the areas a receiver holds share a fixed
 * budget instead (every sender of the node may stream to it), so that a
 * process's lane memory does not grow with the node's size beyond a few
 * lines per sender (issue 42: 64 MiB per receiver was 9.7 GiB at 128 ranks,
 * each area populated at its first payload); down to twice the lane's
 * largest payload.  A blocking send the area cannot take eagerly then goes
 * by the lane's rendezvous.  Up to 8 processes a node keep 512 KiB. */
#define FS_UCX_SHM_DATA     (512u << 10)
#define FS_UCX_SHM_DATA_MIN (2u * FS_UCX_SHM_LIMIT)
#define FS_UCX_SHM_BUDGET   (4u << 20)
/* Entries of each ring: ucx_fifo_size while the rings of a receiver fit
 * this budget, fewer (at least 16) beyond: a full ring sends by UCP. */
#define FS_UCX_SHM_ENTRY_BUDGET (1u << 20)
#define FS_UCX_SHM_ENTRIES_MIN  16u

size_t fs_ucx_shm_data_size(size_t local_peers)
{
    size_t per  = (local_peers == 0) ? FS_UCX_SHM_DATA : FS_UCX_SHM_BUDGET / local_peers;
    size_t size = FS_UCX_SHM_DATA;

    while ((size > per) && (size > FS_UCX_SHM_DATA_MIN)) {
        size >>= 1;     /* a power of two within the budget */
    }
    return size;
}

unsigned fs_ucx_shm_entries(size_t local_peers, unsigned fifo_size)
{
    size_t per = (local_peers == 0) ? fifo_size
                                    : FS_UCX_SHM_ENTRY_BUDGET /
                                      (local_peers * sizeof(fs_ring_entry_t));
    unsigned n = fifo_size;

    while ((n > per) && (n > FS_UCX_SHM_ENTRIES_MIN)) {
        n >>= 1;
    }
    return n;
}

/* Who may share the lane's memory: a sender opens its peer's segment
 * through /proc/<pid>/fd/<fd>, which names that process only in the same
 * PID namespace, and the simulated hosts of tests/hosts share one kernel.
 * So the lane asks for the same host name and IPC namespace; an open that
 * still fails leaves the peer to UCP. */
static uint64_t fs_ucx_shm_node(void)
{
    char name[256] = "";
    uint64_t hash = 14695981039346656037ull;    /* FNV-1a */
    struct stat st;
    size_t i;

    (void)gethostname(name, sizeof(name) - 1);
    for (i = 0; name[i] != '\0'; ++i) {
        hash = (hash ^ (uint8_t)name[i]) * 1099511628211ull;
    }
    if (stat("/proc/self/ns/ipc", &st) == 0) {
        hash = (hash ^ (uint64_t)st.st_ino) * 1099511628211ull;
    }
    return hash;
}

static void fs_ucx_shm_rx(void *arg, uint32_t slot, unsigned am_id, const void *hdr,
                          size_t hlen, void *data, size_t len, int ok)
{
    fs_tl_t *tl = arg;
    fs_tl_rx_t rx;

    if (fs_unlikely(am_id == FS_UCX_RING_RTS) && ok) {
        if (fs_ucx_rr_rts_in(tl, slot, hdr, hlen, data, len)) {
            return;
        }
        ok = 0;             /* a malformed request: reported as any entry */
    }

    rx.desc  = data;
    rx.flags = 0;           /* the entry is the sender's again after this */
    if (fs_likely(ok)) {
        (void)tl->up.am_recv(tl->up_arg, am_id, hdr, hlen, data, len, &rx);
    } else {
        /* let the engine count and report it as it does any malformed one */
        (void)tl->up.am_recv(tl->up_arg, FS_AM_MATCH, hdr, 0, NULL, 0, &rx);
    }
}

unsigned fs_ucx_shm_poll(fs_tl_t *tl)
{
    return fs_ring_poll(&tl->shm.rx, fs_ucx_shm_rx, tl);
}

void fs_ucx_shm_fini(fs_tl_t *tl)
{
    fs_ring_rx_destroy(&tl->shm.rx);
    memset(&tl->shm, 0, sizeof(tl->shm));
}

/* Never fails: without a lane every message goes by UCP. */
void fs_ucx_shm_init(fs_tl_t *tl, const fs_tl_config_t *cfg)
{
    size_t data;

    if ((cfg->shm_max == 0) || !fs_ucx_tls_allows(fs_ucx_mm_tls)) {
        return;             /* also what UCX_TLS says of shared memory */
    }
    tl->shm.max = cfg->shm_max;
    if (tl->shm.max > FS_UCX_SHM_LIMIT) {
        FS_WARN("pml_failstop_ucx_shm_max %zu is above its limit: %u used",
                tl->shm.max, FS_UCX_SHM_LIMIT);
        tl->shm.max = FS_UCX_SHM_LIMIT;
    }
    /* blocking sends up to ucx_frag_max, a collective's up to
     * send_fast_local_max: one entry, not UCP's fragments; at most half the
     * data area, so that one always fits once the area is empty */
    data = fs_ucx_shm_data_size(cfg->local_peers);
    tl->shm.max_waited = (cfg->frag_max > tl->shm.max) ? cfg->frag_max : tl->shm.max;
    if (cfg->fast_max > tl->shm.max_waited) {
        tl->shm.max_waited = cfg->fast_max;
    }
    if (tl->shm.max_waited > data / 2) {
        tl->shm.max_waited = data / 2;
    }
    tl->shm.node = fs_ucx_shm_node();
    /* a ring per possible sender of this node (and some for processes that
     * join later): memory is taken as it is used */
    if (fs_ring_rx_create(&tl->shm.rx, (unsigned)cfg->estimated_eps + 16,
                          fs_ucx_shm_entries(cfg->local_peers, (unsigned)cfg->fifo_size),
                          tl->shm.max_waited, data) != FS_OK) {
        FS_DEBUG("no shared-memory short lane (its segment could not be made): "
                 "every message goes by UCP");
        fs_ucx_shm_fini(tl);
        return;
    }
    tl->shm.name = "ring";
    FS_DEBUG("short lane: %u entries and %u KiB of data per ring (%zu other processes "
             "on this node)", tl->shm.rx.addr.entries, tl->shm.rx.addr.data_size >> 10,
             cfg->local_peers);
}

/* Every ring, sleeping ones too (a peer that died between writing and
 * ringing the bell), a few entries of each per round; bounded, as live
 * peers may keep their rings busy. */
void fs_ucx_shm_drain(fs_tl_t *tl)
{
    unsigned i;

    if (tl->shm.rx.base == NULL) {
        return;
    }
    for (i = 0; i < 256; ++i) {
        if (fs_ring_poll_all(&tl->shm.rx, fs_ucx_shm_rx, tl) == 0) {
            break;
        }
    }
}

fs_status_t fs_ucx_addr_pack(fs_tl_t *tl)
{
    fs_ucx_addr_hdr_t hdr;
    size_t lane = (tl->shm.rx.base != NULL) ? sizeof(fs_ring_addr_t) : 0;

    memset(&hdr, 0, sizeof(hdr));
    hdr.ucp_len   = (uint32_t)tl->address_len;
    hdr.lane_len  = (uint16_t)lane;
    hdr.node      = tl->shm.node;
    hdr.max       = (uint32_t)tl->shm.max;
    hdr.max_waited = (uint32_t)tl->shm.max_waited;
    tl->wire_len  = sizeof(hdr) + tl->address_len + lane;
    tl->wire_addr = malloc(tl->wire_len);
    if (tl->wire_addr == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    memcpy(tl->wire_addr, &hdr, sizeof(hdr));
    memcpy(tl->wire_addr + sizeof(hdr), tl->address, tl->address_len);
    if (lane != 0) {
        memcpy(tl->wire_addr + sizeof(hdr) + tl->address_len, &tl->shm.rx.addr, lane);
    }
    return FS_OK;
}

/* The UCP worker address inside a peer's address; NULL if malformed. */
const ucp_address_t *fs_ucx_addr_ucp(const uint8_t *addr, size_t len)
{
    fs_ucx_addr_hdr_t hdr;

    if (len < sizeof(hdr)) {
        return NULL;
    }
    memcpy(&hdr, addr, sizeof(hdr));
    if (sizeof(hdr) + (size_t)hdr.ucp_len + hdr.lane_len != len) {
        return NULL;
    }
    return (const ucp_address_t *)(addr + sizeof(hdr));
}

/* Opens the lane to a peer that has one and is on this node; the endpoint
 * goes by UCP alone otherwise (also when its segment cannot be reached or
 * has no ring left). */
void fs_ucx_shm_ep_create(fs_tl_t *tl, fs_tl_ep_t *tep)
{
    fs_ucx_addr_hdr_t hdr;
    fs_ring_addr_t ring;
    fs_status_t st;

    if (tl->shm.rx.base == NULL) {
        return;
    }
    memcpy(&hdr, tep->addr, sizeof(hdr));
    if ((hdr.lane_len != sizeof(ring)) || (hdr.node != tl->shm.node) ||
        (hdr.max != tl->shm.max) || (hdr.max_waited != tl->shm.max_waited)) {
        return;
    }
    memcpy(&ring, tep->addr + sizeof(hdr) + hdr.ucp_len, sizeof(ring));
    st = fs_ring_tx_open(&tep->lane, &ring);
    if (st != FS_OK) {
        FS_DEBUG("no short lane to process %d of this node (%s): by UCP", (int)ring.pid,
                 fs_status_string(st));
    }
}

void fs_ucx_shm_ep_destroy(fs_tl_ep_t *tep)
{
    fs_ring_tx_close(&tep->lane);
}
