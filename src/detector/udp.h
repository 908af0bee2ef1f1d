/* The UDP detector transport's address and how a sender picks where to
 * send (src/detector/udp.c; pure functions, unit-tested apart).
 *
 * A process publishes the IPv4 addresses of the interfaces it would take
 * heartbeats on (pml_failstop_hb_if, or by default every interface that is
 * up and not loopback, the one of the default route first), its port, and
 * the identity of its network stack (boot id and network namespace).  A
 * sender then picks, per peer:
 *   1. loopback if the peer is in the same network stack (always reaches
 *      it: the socket is bound to every interface);
 *   2. else the peer's first address in a subnet shared with one of its own,
 *      never an address it has itself (a container bridge such as docker0
 *      carries the same address on every host: sending there stays here);
 *   3. else the peer's first address that it does not have itself (routed);
 *      else the peer's first address. */
#ifndef FS_DETECTOR_UDP_H
#define FS_DETECTOR_UDP_H

#include "common/fs_status.h"

#include <stdint.h>

struct ifaddrs;

#define FS_UDP_MAX_IPS 4

typedef struct fs_udp_addr {
    uint64_t stack;                    /* network stack identity */
    uint32_t ip[FS_UDP_MAX_IPS];       /* network byte order */
    uint8_t  prefix[FS_UDP_MAX_IPS];   /* netmask length of ip[i] */
    uint16_t port;                     /* network byte order */
    uint8_t  count;                    /* 1..FS_UDP_MAX_IPS */
    uint8_t  pad;
} fs_udp_addr_t;

/* Fills addr->ip/prefix/count from list: the interfaces include names
 * (comma-separated interface names or a.b.c.d/len subnets; NULL or "" for
 * the default above), first_if's first.  Loopback only if nothing else is
 * up (or include names it).  FS_ERR_INVALID if include matches nothing or
 * does not parse. */
fs_status_t fs_udp_collect(const struct ifaddrs *list, const char *include,
                           const char *first_if, fs_udp_addr_t *addr);

/* Where to send to peer (network byte order), as described above. */
uint32_t    fs_udp_select(const fs_udp_addr_t *mine, const fs_udp_addr_t *peer);

#endif
