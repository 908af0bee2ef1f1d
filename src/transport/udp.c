/* UDP transport for the failure detector (FS_TL_ROLE_DETECTOR only).
 *
 * Heartbeats need no connection, and a connection is what goes wrong when
 * processes die: UCX 1.13's TCP transport asserts when a peer dies in the
 * middle of connection setup (ucp_request.c "got REP message", in
 * uct_tcp_ep_pending_purge), which a detector, connecting lazily while
 * processes fail, runs into.  Datagrams have no setup and no teardown; a
 * lost one is repaired by the protocol (beats repeat, anti-entropy syncs).
 *
 * One socket per process, bound to all interfaces; the address published is
 * the host's first IPv4 address (127.0.0.1 if it has none) and the port.
 * signal() wakes a sleeping poll() by sending an empty datagram to itself. */
#define _GNU_SOURCE
#include "transport/tl.h"
#include "common/fs_log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FS_UDP_MAX 65507    /* largest UDP payload */

typedef struct fs_udp_addr {
    uint32_t ip;            /* network byte order */
    uint16_t port;          /* network byte order */
    uint16_t pad;
} fs_udp_addr_t;

struct fs_tl {
    int              fd;
    size_t           hdr_len;
    fs_udp_addr_t    addr;
    fs_tl_upcalls_t  up;
    void            *up_arg;
    uint8_t          buf[FS_UDP_MAX];
};

struct fs_tl_ep {
    struct sockaddr_in to;
};

/* The first IPv4 address of an interface that is up and not loopback. */
static uint32_t fs_udp_host_ip(void)
{
    struct ifaddrs *list, *ifa;
    uint32_t ip = htonl(INADDR_LOOPBACK);

    if (getifaddrs(&list) != 0) {
        return ip;
    }
    for (ifa = list; ifa != NULL; ifa = ifa->ifa_next) {
        if ((ifa->ifa_addr != NULL) && (ifa->ifa_addr->sa_family == AF_INET) &&
            (ifa->ifa_flags & IFF_UP) && !(ifa->ifa_flags & IFF_LOOPBACK)) {
            ip = ((const struct sockaddr_in *)ifa->ifa_addr)->sin_addr.s_addr;
            break;
        }
    }
    freeifaddrs(list);
    return ip;
}

static fs_status_t fs_udp_init(const fs_tl_config_t *cfg, const fs_tl_upcalls_t *up,
                               void *up_arg, fs_tl_t **tl_p)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    fs_tl_t *tl;

    if (cfg->role != FS_TL_ROLE_DETECTOR) {
        return FS_ERR_UNSUPPORTED;
    }
    tl = calloc(1, sizeof(*tl));
    if (tl == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    tl->up      = *up;
    tl->up_arg  = up_arg;
    tl->hdr_len = cfg->rx_hdr_len;
    tl->fd     = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family      = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    if ((tl->fd < 0) || (bind(tl->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) ||
        (getsockname(tl->fd, (struct sockaddr *)&sa, &len) != 0)) {
        FS_ERROR("failure detector: cannot open a UDP socket: %s", strerror(errno));
        if (tl->fd >= 0) {
            close(tl->fd);
        }
        free(tl);
        return FS_ERR_LOCAL;
    }
    tl->addr.ip   = fs_udp_host_ip();
    tl->addr.port = sa.sin_port;
    *tl_p = tl;
    return FS_OK;
}

static void fs_udp_fini(fs_tl_t *tl)
{
    close(tl->fd);
    free(tl);
}

static fs_status_t fs_udp_address(fs_tl_t *tl, const void **addr_p, size_t *len_p)
{
    *addr_p = &tl->addr;
    *len_p  = sizeof(tl->addr);
    return FS_OK;
}

static fs_status_t fs_udp_ep_create(fs_tl_t *tl, const void *addr, size_t addr_len,
                                    void *ep_user, fs_tl_ep_t **ep_p)
{
    const fs_udp_addr_t *a = addr;
    fs_tl_ep_t *ep;

    (void)tl;
    (void)ep_user;
    if (addr_len != sizeof(*a)) {
        return FS_ERR_INVALID;
    }
    ep = calloc(1, sizeof(*ep));
    if (ep == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    ep->to.sin_family      = AF_INET;
    ep->to.sin_addr.s_addr = a->ip;
    ep->to.sin_port        = a->port;
    *ep_p = ep;
    return FS_OK;
}

static fs_status_t fs_udp_ep_close(fs_tl_t *tl, fs_tl_ep_t *ep, int force, fs_tl_op_t *op)
{
    (void)tl;
    (void)force;
    (void)op;
    free(ep);
    return FS_OK;
}

/* Header and data in one datagram; never blocks (a full socket buffer
 * drops the message, as the network may). */
static fs_status_t fs_udp_am_send(fs_tl_t *tl, fs_tl_ep_t *ep, unsigned am_id,
                                  const void *hdr, size_t hdr_len, const fs_buf_t *buf,
                                  unsigned flags, fs_tl_op_t *op)
{
    struct iovec iov[2];
    struct msghdr mh;

    (void)am_id;
    (void)flags;
    (void)op;
    if ((buf->dt != NULL) || (hdr_len + buf->len > FS_UDP_MAX)) {
        return FS_ERR_INVALID;
    }
    iov[0].iov_base = (void *)hdr;
    iov[0].iov_len  = hdr_len;
    iov[1].iov_base = buf->ptr;
    iov[1].iov_len  = buf->len;
    memset(&mh, 0, sizeof(mh));
    mh.msg_name    = &ep->to;
    mh.msg_namelen = sizeof(ep->to);
    mh.msg_iov     = iov;
    mh.msg_iovlen  = (buf->len != 0) ? 2 : 1;
    (void)sendmsg(tl->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
    return FS_OK;
}

/* A datagram is a header (rx_hdr_len bytes) and data; the upcall
 * validates both. */
static unsigned fs_udp_progress(fs_tl_t *tl)
{
    const size_t hdr_len = tl->hdr_len;
    fs_tl_rx_t rx = {NULL, 0};
    unsigned count = 0;
    ssize_t n;

    while ((n = recv(tl->fd, tl->buf, sizeof(tl->buf), MSG_DONTWAIT)) >= 0) {
        if ((size_t)n < hdr_len) {
            continue;           /* a wake-up from signal(), or junk */
        }
        tl->up.am_recv(tl->up_arg, FS_AM_HB, tl->buf, hdr_len, tl->buf + hdr_len,
                       (size_t)n - hdr_len, &rx);
        ++count;
    }
    return count;
}

static fs_status_t fs_udp_wait_fd(fs_tl_t *tl, int *fd_p)
{
    *fd_p = tl->fd;
    return FS_OK;
}

static fs_status_t fs_udp_arm(fs_tl_t *tl)
{
    (void)tl;
    return FS_OK;               /* poll() on a datagram socket is level-triggered */
}

static void fs_udp_signal(fs_tl_t *tl)
{
    struct sockaddr_in self;
    char zero = 0;

    memset(&self, 0, sizeof(self));
    self.sin_family      = AF_INET;
    self.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    self.sin_port        = tl->addr.port;
    (void)sendto(tl->fd, &zero, 1, MSG_DONTWAIT | MSG_NOSIGNAL,
                 (struct sockaddr *)&self, sizeof(self));
}

const fs_tl_ops_t fs_tl_udp_ops = {
    .name      = "udp",
    .init      = fs_udp_init,
    .fini      = fs_udp_fini,
    .address   = fs_udp_address,
    .ep_create = fs_udp_ep_create,
    .ep_close  = fs_udp_ep_close,
    .am_send   = fs_udp_am_send,
    .progress  = fs_udp_progress,
    .wait_fd   = fs_udp_wait_fd,
    .arm       = fs_udp_arm,
    .signal    = fs_udp_signal,
};
