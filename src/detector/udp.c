/* The failure detector's datagrams over UDP (dg.h).
 *
 * Heartbeats need no connection, and a connection is what goes wrong when
 * processes die: UCX 1.13's TCP transport asserts when a peer dies in the
 * middle of connection setup (ucp_request.c "got REP message", in
 * uct_tcp_ep_pending_purge), which a detector, connecting lazily while
 * processes fail, runs into.  Datagrams have no setup and no teardown; a
 * lost one is repaired by the protocol (beats repeat, anti-entropy syncs).
 *
 * One socket per process, bound to all interfaces; which of its addresses
 * it publishes and which of a peer's it sends to: udp.h.  signal() wakes a
 * sleeping poll() by sending an empty datagram to itself. */
#define _GNU_SOURCE
#include "detector/dg.h"
#include "detector/udp.h"
#include "common/fs_log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define FS_UDP_MAX 65507    /* largest UDP payload */

struct fs_dg {
    int              fd;
    size_t           hdr_len;
    fs_udp_addr_t    addr;
    fs_dg_recv_cb_t  recv;
    void            *arg;
    uint8_t          buf[FS_UDP_MAX];
};

struct fs_dg_peer {
    struct sockaddr_in to;
};

/* ---- addresses (pure: unit-tested) ----------------------------------------- */

static unsigned fs_udp_prefix_len(uint32_t mask_n)
{
    return (unsigned)__builtin_popcount(mask_n);
}

static uint32_t fs_udp_mask(unsigned prefix)
{
    return (prefix == 0) ? 0 : htonl(~0u << (32 - prefix));
}

/* Does one item of include ("eth0" or "10.1.0.0/16") name ifa? -1: bad item. */
static int fs_udp_item_matches(const char *item, size_t len, const struct ifaddrs *ifa)
{
    uint32_t ip = ((const struct sockaddr_in *)ifa->ifa_addr)->sin_addr.s_addr;
    char buf[64];
    char *slash;
    struct in_addr net;
    long prefix;

    if ((len == 0) || (len >= sizeof(buf))) {
        return -1;
    }
    memcpy(buf, item, len);
    buf[len] = '\0';
    slash = strchr(buf, '/');
    if (slash == NULL) {
        return strcmp(buf, ifa->ifa_name) == 0;
    }
    *slash = '\0';
    prefix = strtol(slash + 1, NULL, 10);
    if ((inet_pton(AF_INET, buf, &net) != 1) || (prefix < 0) || (prefix > 32)) {
        return -1;
    }
    return ((ip ^ net.s_addr) & fs_udp_mask((unsigned)prefix)) == 0;
}

/* 1: include names ifa; 0: not; -1: include does not parse. */
static int fs_udp_included(const char *include, const struct ifaddrs *ifa)
{
    const char *p = include;

    while (*p != '\0') {
        size_t len = strcspn(p, ",");
        int m      = fs_udp_item_matches(p, len, ifa);

        if (m != 0) {
            return m;
        }
        p += len + (p[len] == ',');
    }
    return 0;
}

static void fs_udp_add(fs_udp_addr_t *addr, const struct ifaddrs *ifa)
{
    uint32_t ip = ((const struct sockaddr_in *)ifa->ifa_addr)->sin_addr.s_addr;
    unsigned i;

    for (i = 0; i < addr->count; ++i) {
        if (addr->ip[i] == ip) {
            return;
        }
    }
    if (addr->count < FS_UDP_MAX_IPS) {
        addr->ip[addr->count]     = ip;
        addr->prefix[addr->count] = (ifa->ifa_netmask != NULL) ?
            (uint8_t)fs_udp_prefix_len(
                ((const struct sockaddr_in *)ifa->ifa_netmask)->sin_addr.s_addr) : 32;
        ++addr->count;
    }
}

static int fs_udp_usable(const struct ifaddrs *ifa)
{
    return (ifa->ifa_addr != NULL) && (ifa->ifa_addr->sa_family == AF_INET) &&
           (ifa->ifa_flags & IFF_UP);
}

fs_status_t fs_udp_collect(const struct ifaddrs *list, const char *include,
                           const char *first_if, fs_udp_addr_t *addr)
{
    int explicit = (include != NULL) && (include[0] != '\0');
    const struct ifaddrs *ifa;
    int pass, m;

    addr->count = 0;
    /* pass 0: first_if (the default route's); pass 1: the others */
    for (pass = 0; pass < 2; ++pass) {
        for (ifa = list; ifa != NULL; ifa = ifa->ifa_next) {
            int first = (first_if != NULL) && !strcmp(ifa->ifa_name, first_if);

            if (!fs_udp_usable(ifa) || (first != (pass == 0))) {
                continue;
            }
            if (explicit) {
                m = fs_udp_included(include, ifa);
                if (m < 0) {
                    FS_ERROR("pml_failstop_hb_if=\"%s\": not a list of interface "
                             "names and a.b.c.d/len subnets", include);
                    return FS_ERR_INVALID;
                }
                if (m == 0) {
                    continue;
                }
            } else if (ifa->ifa_flags & IFF_LOOPBACK) {
                continue;
            }
            fs_udp_add(addr, ifa);
        }
    }
    if (addr->count == 0) {
        if (explicit) {
            FS_ERROR("pml_failstop_hb_if=\"%s\" names no IPv4 interface that is up",
                     include);
            return FS_ERR_INVALID;
        }
        addr->ip[0]     = htonl(INADDR_LOOPBACK);   /* a host without a network */
        addr->prefix[0] = 8;
        addr->count     = 1;
    }
    return FS_OK;
}

static int fs_udp_mine(const fs_udp_addr_t *mine, uint32_t ip)
{
    unsigned i;

    for (i = 0; i < mine->count; ++i) {
        if (mine->ip[i] == ip) {
            return 1;
        }
    }
    return 0;
}

uint32_t fs_udp_select(const fs_udp_addr_t *mine, const fs_udp_addr_t *peer)
{
    unsigned i, j, count = (peer->count <= FS_UDP_MAX_IPS) ? peer->count : 0;
    uint32_t routed = (count > 0) ? peer->ip[0] : htonl(INADDR_LOOPBACK);
    int have_routed = 0;

    if (peer->stack == mine->stack) {
        return htonl(INADDR_LOOPBACK);
    }
    for (i = 0; i < count; ++i) {
        if (fs_udp_mine(mine, peer->ip[i])) {
            continue;           /* a host-local bridge's address: stays here */
        }
        for (j = 0; j < mine->count; ++j) {
            uint32_t mask = fs_udp_mask(mine->prefix[j] <= 32 ? mine->prefix[j] : 32);

            if (((peer->ip[i] ^ mine->ip[j]) & mask) == 0) {
                return peer->ip[i];
            }
        }
        if (!have_routed) {
            routed      = peer->ip[i];
            have_routed = 1;
        }
    }
    return routed;
}

/* ---- this host ---------------------------------------------------------------- */

/* The boot id and the network namespace: processes with the same one share
 * loopback. */
static uint64_t fs_udp_stack_id(void)
{
    uint64_t h = 0xcbf29ce484222325ull;
    char boot[64] = "";
    struct stat st;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    size_t i;

    if (f != NULL) {
        if (fgets(boot, sizeof(boot), f) == NULL) {
            boot[0] = '\0';
        }
        fclose(f);
    }
    if (boot[0] == '\0') {
        (void)gethostname(boot, sizeof(boot) - 1);
    }
    for (i = 0; boot[i] != '\0'; ++i) {
        h = (h ^ (uint8_t)boot[i]) * 0x100000001b3ull;
    }
    if (stat("/proc/self/ns/net", &st) == 0) {
        h = (h ^ (uint64_t)st.st_ino) * 0x100000001b3ull;
        h = (h ^ (uint64_t)st.st_dev) * 0x100000001b3ull;
    }
    return h;
}

/* The interface of the IPv4 default route (/proc/net/route), or "". */
static void fs_udp_default_if(char *name, size_t size)
{
    char line[256], ifname[64];
    unsigned long dest;
    FILE *f = fopen("/proc/net/route", "r");

    name[0] = '\0';
    if (f == NULL) {
        return;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if ((sscanf(line, "%63s %lx", ifname, &dest) == 2) && (dest == 0)) {
            snprintf(name, size, "%s", ifname);
            break;
        }
    }
    fclose(f);
}

static fs_status_t fs_udp_host_addr(const char *include, fs_udp_addr_t *addr)
{
    struct ifaddrs *list = NULL;
    char first[64];
    fs_status_t status;
    char text[INET_ADDRSTRLEN];
    unsigned i;

    memset(addr, 0, sizeof(*addr));
    addr->stack = fs_udp_stack_id();
    fs_udp_default_if(first, sizeof(first));
    if (getifaddrs(&list) != 0) {
        list = NULL;
    }
    status = fs_udp_collect(list, include, first, addr);
    if (list != NULL) {
        freeifaddrs(list);
    }
    for (i = 0; (status == FS_OK) && (i < addr->count); ++i) {
        inet_ntop(AF_INET, &addr->ip[i], text, sizeof(text));
        FS_DEBUG("failure detector: publishing %s/%u", text, addr->prefix[i]);
    }
    return status;
}

static fs_status_t fs_udp_init(const fs_dg_config_t *cfg, fs_dg_recv_cb_t recv, void *arg,
                               fs_dg_t **dg_p)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    fs_dg_t *dg = calloc(1, sizeof(*dg));

    if (dg == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    if (fs_udp_host_addr(cfg->if_include, &dg->addr) != FS_OK) {
        free(dg);
        return FS_ERR_INVALID;
    }
    dg->recv    = recv;
    dg->arg     = arg;
    dg->hdr_len = cfg->hdr_len;
    dg->fd      = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family      = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    if ((dg->fd < 0) || (bind(dg->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) ||
        (getsockname(dg->fd, (struct sockaddr *)&sa, &len) != 0)) {
        FS_ERROR("failure detector: cannot open a UDP socket: %s", strerror(errno));
        if (dg->fd >= 0) {
            close(dg->fd);
        }
        free(dg);
        return FS_ERR_LOCAL;
    }
    dg->addr.port = sa.sin_port;
    *dg_p = dg;
    return FS_OK;
}

static void fs_udp_fini(fs_dg_t *dg)
{
    close(dg->fd);
    free(dg);
}

static void fs_udp_address(fs_dg_t *dg, const void **addr_p, size_t *len_p)
{
    *addr_p = &dg->addr;
    *len_p  = sizeof(dg->addr);
}

static fs_status_t fs_udp_peer_open(fs_dg_t *dg, const void *addr, size_t addr_len,
                                    fs_dg_peer_t **peer_p)
{
    fs_udp_addr_t a;
    fs_dg_peer_t *peer;

    if (addr_len != sizeof(a)) {
        return FS_ERR_INVALID;
    }
    memcpy(&a, addr, sizeof(a));
    peer = calloc(1, sizeof(*peer));
    if (peer == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    peer->to.sin_family      = AF_INET;
    peer->to.sin_addr.s_addr = fs_udp_select(&dg->addr, &a);
    peer->to.sin_port        = a.port;
    *peer_p = peer;
    return FS_OK;
}

static void fs_udp_peer_close(fs_dg_t *dg, fs_dg_peer_t *peer)
{
    (void)dg;
    free(peer);
}

/* Header and data in one datagram; never blocks (a full socket buffer
 * drops the message, as the network may). */
static fs_status_t fs_udp_send(fs_dg_t *dg, fs_dg_peer_t *peer, const void *hdr,
                               size_t hdr_len, const void *data, size_t len)
{
    struct iovec iov[2];
    struct msghdr mh;

    if (hdr_len + len > FS_UDP_MAX) {
        return FS_ERR_INVALID;
    }
    iov[0].iov_base = (void *)hdr;
    iov[0].iov_len  = hdr_len;
    iov[1].iov_base = (void *)data;
    iov[1].iov_len  = len;
    memset(&mh, 0, sizeof(mh));
    mh.msg_name    = &peer->to;
    mh.msg_namelen = sizeof(peer->to);
    mh.msg_iov     = iov;
    mh.msg_iovlen  = (len != 0) ? 2 : 1;
    (void)sendmsg(dg->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
    return FS_OK;
}

/* A datagram shorter than the header is a wake-up from signal(), or junk;
 * the callback validates the rest. */
static unsigned fs_udp_progress(fs_dg_t *dg)
{
    const size_t hdr_len = dg->hdr_len;
    unsigned count = 0;
    ssize_t n;

    while ((n = recv(dg->fd, dg->buf, sizeof(dg->buf), MSG_DONTWAIT)) >= 0) {
        if ((size_t)n < hdr_len) {
            continue;
        }
        dg->recv(dg->arg, dg->buf, hdr_len, dg->buf + hdr_len, (size_t)n - hdr_len);
        ++count;
    }
    return count;
}

static int fs_udp_wait_fd(fs_dg_t *dg)
{
    return dg->fd;              /* poll() on a datagram socket is level-triggered */
}

static void fs_udp_signal(fs_dg_t *dg)
{
    struct sockaddr_in self;
    char zero = 0;

    memset(&self, 0, sizeof(self));
    self.sin_family      = AF_INET;
    self.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    self.sin_port        = dg->addr.port;
    (void)sendto(dg->fd, &zero, 1, MSG_DONTWAIT | MSG_NOSIGNAL,
                 (struct sockaddr *)&self, sizeof(self));
}

static uint64_t fs_udp_addr_host(fs_dg_t *dg, const void *addr, size_t addr_len)
{
    fs_udp_addr_t a;

    (void)dg;
    if (addr_len != sizeof(a)) {
        return 0;
    }
    memcpy(&a, addr, sizeof(a));
    return a.stack;
}

const fs_dg_ops_t fs_dg_udp_ops = {
    .name       = "udp",
    .init       = fs_udp_init,
    .fini       = fs_udp_fini,
    .address    = fs_udp_address,
    .peer_open  = fs_udp_peer_open,
    .peer_close = fs_udp_peer_close,
    .send       = fs_udp_send,
    .progress   = fs_udp_progress,
    .wait_fd    = fs_udp_wait_fd,
    .signal     = fs_udp_signal,
    .addr_host  = fs_udp_addr_host,
};
