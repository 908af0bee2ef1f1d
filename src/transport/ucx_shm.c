/* The UCX transport's short lane: small matching messages between processes
 * of one node go as UCT active messages over a shared-memory FIFO of the
 * transport's own, beside the UCP worker.
 *
 * Why: UCP's active-message send always goes through UCT's iov send (its
 * header, the payload and failstop's header: three pieces), which costs
 * about twice UCP's tag send (uct_ep_am_short with the tag as its 8-byte
 * header), and its receive handler adds a layer before failstop's.  Here
 * failstop's 8-byte short header is UCT's header, as the tag is for UCP's
 * tag protocol, and the FIFO's handler is failstop's.
 *
 * Order: the lane and UCP are two channels to the same peer; the engine
 * restores the sender's order from the sequence numbers (src/endpoint/
 * seq.h).  Failure: a dead peer is still reported by UCP (keepalive, the
 * detector); before that report goes up the lane's FIFO is drained, so the
 * messages a peer sent before dying are delivered first.  A message the lane
 * cannot take (the peer's FIFO is full: a slow or dead receiver) goes by
 * UCP. */
#include "transport/ucx_int.h"
#include "common/fs_log.h"

#include <uct/api/uct.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FS_UCX_SHM_LIMIT 8192u
#define FS_UCX_SHM_ELEM  128u     /* bytes per FIFO entry, as UCX's default */

/* Who may share the lane's memory: UCX takes processes with the same boot
 * id for one node, and so attaches a peer's segment across UTS and IPC
 * namespaces (containers, the simulated hosts of tests/hosts), where a
 * System V id names another segment or none.  The lane also asks for the
 * same host name and IPC namespace. */
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

static ucs_status_t fs_ucx_shm_am_cb(void *arg, void *data, size_t length,
                                     unsigned flags)
{
    fs_tl_t *tl = arg;
    fs_tl_rx_t rx;

    (void)flags;
    rx.desc  = data;
    rx.flags = 0;           /* the FIFO element is reused after we return */
    if (fs_likely(length >= sizeof(uint64_t))) {
        (void)tl->up.am_recv(tl->up_arg, FS_AM_MATCH, data, sizeof(uint64_t),
                             (char *)data + sizeof(uint64_t),
                             length - sizeof(uint64_t), &rx);
    } else {
        /* let the engine count and report it as it does any malformed one */
        (void)tl->up.am_recv(tl->up_arg, FS_AM_MATCH, data, length, NULL, 0, &rx);
    }
    return UCS_OK;
}

typedef struct fs_ucx_shm_pack {
    const void      *hdr;
    const fs_buf_t  *buf;
} fs_ucx_shm_pack_t;

static size_t fs_ucx_shm_pack(void *dest, void *arg)
{
    const fs_ucx_shm_pack_t *p = arg;

    memcpy(dest, p->hdr, sizeof(uint64_t));
    memcpy((char *)dest + sizeof(uint64_t), p->buf->ptr, p->buf->len);
    return sizeof(uint64_t) + p->buf->len;
}

int fs_ucx_shm_send_bcopy(fs_tl_ep_t *tep, const void *hdr, const fs_buf_t *buf)
{
    fs_ucx_shm_pack_t p = {hdr, buf};

    return uct_ep_am_bcopy(tep->shm_ep, FS_UCX_SHM_AM_ID, fs_ucx_shm_pack, &p, 0) >= 0;
}

static uct_component_h fs_ucx_shm_component(uct_component_h *comps, unsigned n,
                                            const char *name)
{
    uct_component_attr_t attr;
    unsigned i;

    for (i = 0; i < n; ++i) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        if ((uct_component_query(comps[i], &attr) == UCS_OK) &&
            (strcmp(attr.name, name) == 0)) {
            return comps[i];
        }
    }
    return NULL;
}

static fs_status_t fs_ucx_shm_md_open(fs_ucx_shm_t *shm, const char *name)
{
    uct_component_h *comps, comp;
    uct_md_config_t *md_config;
    unsigned n;
    ucs_status_t status;

    if (uct_query_components(&comps, &n) != UCS_OK) {
        return FS_ERR_LOCAL;
    }
    comp = fs_ucx_shm_component(comps, n, name);
    status = UCS_ERR_NO_DEVICE;
    if ((comp != NULL) && (uct_md_config_read(comp, NULL, NULL, &md_config) == UCS_OK)) {
        status = uct_md_open(comp, name, md_config, &shm->md);
        uct_config_release(md_config);
    }
    uct_release_component_list(comps);
    return (status == UCS_OK) ? FS_OK : FS_ERR_LOCAL;
}

static fs_status_t fs_ucx_shm_iface_open(fs_tl_t *tl, const char *name,
                                         const fs_tl_config_t *cfg)
{
    fs_ucx_shm_t *shm = &tl->shm;
    uct_iface_config_t *config;
    uct_iface_params_t params;
    char elem[32], seg[32], fifo[32];
    ucs_status_t status;

    if (uct_md_iface_config_read(shm->md, name, NULL, NULL, &config) != UCS_OK) {
        return FS_ERR_LOCAL;
    }
    /* Small FIFO entries, as UCX's own: a message that fits goes inline
     * (short), a larger one into the segment the entry points to (bcopy).
     * Entries big enough for every message measured slower for tiny ones
     * (a page per entry).  Set whatever the environment says: a sender
     * writes into its peer's FIFO with its own idea of the entry size. */
    snprintf(elem, sizeof(elem), "%u", FS_UCX_SHM_ELEM);
    snprintf(seg, sizeof(seg), "%zu", shm->max + 64);
    snprintf(fifo, sizeof(fifo), "%d", cfg->fifo_size);
    if ((uct_config_modify(config, "MM_FIFO_ELEM_SIZE", elem) != UCS_OK) ||
        (uct_config_modify(config, "MM_FIFO_SIZE", fifo) != UCS_OK) ||
        (uct_config_modify(config, "MM_SEG_SIZE", seg) != UCS_OK)) {
        uct_config_release(config);
        return FS_ERR_LOCAL;
    }
    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE |
                        UCT_IFACE_PARAM_FIELD_STATS_ROOT |
                        UCT_IFACE_PARAM_FIELD_RX_HEADROOM |
                        UCT_IFACE_PARAM_FIELD_CPU_MASK;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = name;
    params.mode.device.dev_name = "memory";
    status = uct_iface_open(shm->md, shm->worker, &params, config, &shm->iface);
    uct_config_release(config);
    return (status == UCS_OK) ? FS_OK : FS_ERR_LOCAL;
}

static fs_status_t fs_ucx_shm_address_build(fs_tl_t *tl)
{
    fs_ucx_shm_t *shm = &tl->shm;
    uct_iface_attr_t attr;

    if (uct_iface_query(shm->iface, &attr) != UCS_OK) {
        return FS_ERR_LOCAL;
    }
    if ((attr.cap.am.max_short < sizeof(uint64_t)) ||
        (attr.cap.am.max_bcopy < tl->shm.max + sizeof(uint64_t))) {
        return FS_ERR_LOCAL;
    }
    shm->short_max = attr.cap.am.max_short - sizeof(uint64_t);
    shm->dev_len   = attr.device_addr_len;
    shm->iface_len = attr.iface_addr_len;
    shm->addr      = calloc(1, shm->dev_len + shm->iface_len + 1);
    if ((shm->addr == NULL) ||
        (uct_iface_get_device_address(shm->iface,
                                      (uct_device_addr_t *)shm->addr) != UCS_OK) ||
        (uct_iface_get_address(shm->iface,
                               (uct_iface_addr_t *)(shm->addr + shm->dev_len)) != UCS_OK)) {
        return FS_ERR_LOCAL;
    }
    return FS_OK;
}

static fs_status_t fs_ucx_shm_open(fs_tl_t *tl, const fs_tl_config_t *cfg)
{
    fs_ucx_shm_t *shm = &tl->shm;
    static const char *const names[] = {"posix", "sysv"};
    unsigned i;

    if (ucs_async_context_create(UCS_ASYNC_MODE_POLL, &shm->async) != UCS_OK) {
        return FS_ERR_LOCAL;
    }
    if (uct_worker_create(shm->async, cfg->multi_thread ? UCS_THREAD_MODE_SERIALIZED :
                                                         UCS_THREAD_MODE_SINGLE,
                          &shm->worker) != UCS_OK) {
        return FS_ERR_LOCAL;
    }
    for (i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
        if (fs_ucx_shm_md_open(shm, names[i]) != FS_OK) {
            continue;
        }
        if (fs_ucx_shm_iface_open(tl, names[i], cfg) == FS_OK) {
            shm->name = names[i];
            break;
        }
        uct_md_close(shm->md);
        shm->md = NULL;
    }
    if (shm->iface == NULL) {
        return FS_ERR_LOCAL;
    }
    if (uct_iface_set_am_handler(shm->iface, FS_UCX_SHM_AM_ID, fs_ucx_shm_am_cb,
                                 tl, 0) != UCS_OK) {
        return FS_ERR_LOCAL;
    }
    uct_iface_progress_enable(shm->iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    return fs_ucx_shm_address_build(tl);
}

void fs_ucx_shm_fini(fs_tl_t *tl)
{
    fs_ucx_shm_t *shm = &tl->shm;

    if (shm->iface != NULL) {
        uct_iface_close(shm->iface);
    }
    if (shm->md != NULL) {
        uct_md_close(shm->md);
    }
    if (shm->worker != NULL) {
        uct_worker_destroy(shm->worker);
    }
    if (shm->async != NULL) {
        ucs_async_context_destroy(shm->async);
    }
    free(shm->addr);
    memset(shm, 0, sizeof(*shm));
}

/* Never fails: without a lane every message goes by UCP. */
void fs_ucx_shm_init(fs_tl_t *tl, const fs_tl_config_t *cfg)
{
    if ((cfg->shm_max == 0) || !fs_ucx_tls_allows(fs_ucx_mm_tls)) {
        return;             /* also what UCX_TLS says of shared memory */
    }
    tl->shm.max = cfg->shm_max;
    if (tl->shm.max > FS_UCX_SHM_LIMIT) {
        FS_WARN("pml_failstop_ucx_shm_max %zu is above its limit: %u used",
                tl->shm.max, FS_UCX_SHM_LIMIT);
        tl->shm.max = FS_UCX_SHM_LIMIT;
    }
    tl->shm.node = fs_ucx_shm_node();
    if (fs_ucx_shm_open(tl, cfg) != FS_OK) {
        FS_DEBUG("no shared-memory short lane (%s): every message goes by UCP",
                 tl->shm.md == NULL ? "no shared-memory component" :
                 tl->shm.iface == NULL ? "its interface did not open" :
                 "its address or handler");
        fs_ucx_shm_fini(tl);
    }
}

/* A progress call takes a few FIFO entries (UCX's MM_FIFO_MAX_POLL, 16);
 * bounded, as live peers may keep the FIFO busy. */
void fs_ucx_shm_drain(fs_tl_t *tl)
{
    unsigned i;

    if (tl->shm.worker == NULL) {
        return;
    }
    for (i = 0; i < 256; ++i) {
        if (uct_worker_progress(tl->shm.worker) == 0) {
            break;
        }
    }
}

fs_status_t fs_ucx_addr_pack(fs_tl_t *tl)
{
    fs_ucx_addr_hdr_t hdr;
    size_t lane = tl->shm.dev_len + tl->shm.iface_len;

    memset(&hdr, 0, sizeof(hdr));
    hdr.ucp_len   = (uint32_t)tl->address_len;
    hdr.dev_len   = (uint16_t)tl->shm.dev_len;
    hdr.iface_len = (uint16_t)tl->shm.iface_len;
    hdr.node      = tl->shm.node;
    hdr.max       = (uint32_t)tl->shm.max;
    tl->wire_len  = sizeof(hdr) + tl->address_len + lane;
    tl->wire_addr = malloc(tl->wire_len);
    if (tl->wire_addr == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    memcpy(tl->wire_addr, &hdr, sizeof(hdr));
    memcpy(tl->wire_addr + sizeof(hdr), tl->address, tl->address_len);
    if (lane != 0) {
        memcpy(tl->wire_addr + sizeof(hdr) + tl->address_len, tl->shm.addr, lane);
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
    if (sizeof(hdr) + (size_t)hdr.ucp_len + hdr.dev_len + hdr.iface_len != len) {
        return NULL;
    }
    return (const ucp_address_t *)(addr + sizeof(hdr));
}

/* Opens the lane to a peer that has one and is on this node; the endpoint
 * goes by UCP alone otherwise. */
void fs_ucx_shm_ep_create(fs_tl_t *tl, fs_tl_ep_t *tep)
{
    fs_ucx_addr_hdr_t hdr;
    const uint8_t *dev, *iface;
    uct_ep_params_t params;

    if (tl->shm.iface == NULL) {
        return;
    }
    memcpy(&hdr, tep->addr, sizeof(hdr));
    if ((hdr.dev_len != tl->shm.dev_len) || (hdr.iface_len != tl->shm.iface_len) ||
        (hdr.node != tl->shm.node) || (hdr.max != tl->shm.max)) {
        return;
    }
    dev   = tep->addr + sizeof(hdr) + hdr.ucp_len;
    iface = dev + hdr.dev_len;
    if (!uct_iface_is_reachable(tl->shm.iface, (const uct_device_addr_t *)dev,
                                (const uct_iface_addr_t *)iface)) {
        return;
    }
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
                        UCT_EP_PARAM_FIELD_IFACE_ADDR;
    params.iface      = tl->shm.iface;
    params.dev_addr   = (const uct_device_addr_t *)dev;
    params.iface_addr = (const uct_iface_addr_t *)iface;
    if (uct_ep_create(&params, &tep->shm_ep) != UCS_OK) {
        tep->shm_ep = NULL;
    }
}

void fs_ucx_shm_ep_destroy(fs_tl_ep_t *tep)
{
    if (tep->shm_ep != NULL) {
        uct_ep_destroy(tep->shm_ep);
        tep->shm_ep = NULL;
    }
}
