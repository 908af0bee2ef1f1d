/* The detector's UDP transport (issue 10, item 7): which addresses a
 * process publishes (pml_failstop_hb_if, default route first, never a
 * loopback unless alone), which one a sender picks (same network stack:
 * loopback; never an address of its own, such as a container bridge present
 * on every host; a shared subnet first), and a datagram between two
 * transports in this process. */
#include <criterion/criterion.h>

#include "detector/dg.h"
#include "detector/udp.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- a fake interface list ------------------------------------------------ */

typedef struct t_if {
    struct ifaddrs     ifa;
    struct sockaddr_in addr, mask;
    char               name[64];
} t_if_t;

static t_if_t t_ifs[8];

static uint32_t t_ip(const char *text)
{
    struct in_addr a;

    cr_assert_eq(inet_pton(AF_INET, text, &a), 1, "%s", text);
    return a.s_addr;
}

/* spec: "name=a.b.c.d/len[:down]" ..., NULL-terminated */
static struct ifaddrs *t_list(const char *const *spec)
{
    int i;

    memset(t_ifs, 0, sizeof(t_ifs));
    for (i = 0; spec[i] != NULL; ++i) {
        char buf[64], *eq, *slash, *colon;
        t_if_t *t = &t_ifs[i];
        unsigned prefix;

        snprintf(buf, sizeof(buf), "%s", spec[i]);
        eq    = strchr(buf, '=');
        slash = strchr(buf, '/');
        colon = strchr(buf, ':');
        *eq = *slash = '\0';
        if (colon != NULL) {
            *colon = '\0';
        }
        prefix = (unsigned)atoi(slash + 1);
        snprintf(t->name, sizeof(t->name), "%s", buf);
        t->addr.sin_family      = AF_INET;
        t->addr.sin_addr.s_addr = t_ip(eq + 1);
        t->mask.sin_family      = AF_INET;
        t->mask.sin_addr.s_addr = prefix ? htonl(~0u << (32 - prefix)) : 0;
        t->ifa.ifa_name    = t->name;
        t->ifa.ifa_addr    = (struct sockaddr *)&t->addr;
        t->ifa.ifa_netmask = (struct sockaddr *)&t->mask;
        t->ifa.ifa_flags   = (colon != NULL ? 0 : IFF_UP) |
                             (!strcmp(t->name, "lo") ? IFF_LOOPBACK : 0);
        t->ifa.ifa_next    = (spec[i + 1] != NULL) ? &t_ifs[i + 1].ifa : NULL;
    }
    return &t_ifs[0].ifa;
}

static void t_expect_ips(const fs_udp_addr_t *a, const char *const *ips)
{
    unsigned i = 0;

    for (; ips[i] != NULL; ++i) {
        cr_assert_lt(i, a->count, "only %u addresses", a->count);
        cr_expect_eq(a->ip[i], t_ip(ips[i]), "address %u is not %s", i, ips[i]);
    }
    cr_expect_eq(a->count, i);
}

#define S(...) ((const char *const[]){__VA_ARGS__, NULL})

/* a host as containers make them: docker0 up, first, same address everywhere */
static const char *const t_host[] = {"lo=127.0.0.1/8", "docker0=172.17.0.1/16",
                                     "eth0=10.1.0.5/16", "ib0=192.168.7.5/24",
                                     "eth1=10.9.0.5/24:down", NULL};

Test(udp_collect, default_skips_loopback_and_down_default_route_first)
{
    fs_udp_addr_t a;

    cr_assert_eq(fs_udp_collect(t_list(t_host), NULL, "eth0", &a), FS_OK);
    t_expect_ips(&a, S("10.1.0.5", "172.17.0.1", "192.168.7.5"));
    cr_expect_eq(a.prefix[0], 16);
    cr_expect_eq(a.prefix[2], 24);
    cr_assert_eq(fs_udp_collect(t_list(t_host), "", "", &a), FS_OK);
    t_expect_ips(&a, S("172.17.0.1", "10.1.0.5", "192.168.7.5"));
}

Test(udp_collect, parameter_names_interfaces_or_subnets)
{
    fs_udp_addr_t a;

    cr_assert_eq(fs_udp_collect(t_list(t_host), "ib0", "eth0", &a), FS_OK);
    t_expect_ips(&a, S("192.168.7.5"));
    cr_assert_eq(fs_udp_collect(t_list(t_host), "10.0.0.0/8,ib0", NULL, &a), FS_OK);
    t_expect_ips(&a, S("10.1.0.5", "192.168.7.5"));
    cr_assert_eq(fs_udp_collect(t_list(t_host), "lo", NULL, &a), FS_OK);
    t_expect_ips(&a, S("127.0.0.1"));
    /* nothing that is up, or junk: an error, not a silent guess */
    cr_expect_eq(fs_udp_collect(t_list(t_host), "eth1", NULL, &a), FS_ERR_INVALID);
    cr_expect_eq(fs_udp_collect(t_list(t_host), "10.0.0.0/99", NULL, &a), FS_ERR_INVALID);
    cr_expect_eq(fs_udp_collect(t_list(t_host), "nope", NULL, &a), FS_ERR_INVALID);
}

Test(udp_collect, a_host_without_a_network_publishes_loopback)
{
    fs_udp_addr_t a;

    cr_assert_eq(fs_udp_collect(t_list(S("lo=127.0.0.1/8", "eth0=10.0.0.1/8:down")),
                                NULL, NULL, &a), FS_OK);
    t_expect_ips(&a, S("127.0.0.1"));
}

static fs_udp_addr_t t_addr(uint64_t stack, const char *const *ips, const uint8_t *prefix)
{
    fs_udp_addr_t a;
    unsigned i;

    memset(&a, 0, sizeof(a));
    a.stack = stack;
    for (i = 0; ips[i] != NULL; ++i) {
        a.ip[i]     = t_ip(ips[i]);
        a.prefix[i] = prefix[i];
    }
    a.count = (uint8_t)i;
    return a;
}

Test(udp_select, same_stack_is_loopback)
{
    fs_udp_addr_t me = t_addr(1, S("172.17.0.1", "10.1.0.5"), (uint8_t[]){16, 16});
    fs_udp_addr_t p  = t_addr(1, S("172.17.0.1", "10.1.0.5"), (uint8_t[]){16, 16});

    cr_expect_eq(fs_udp_select(&me, &p), htonl(INADDR_LOOPBACK));
}

Test(udp_select, never_an_address_of_its_own_shared_subnet_first)
{
    fs_udp_addr_t me = t_addr(1, S("172.17.0.1", "10.1.0.5", "192.168.7.5"),
                              (uint8_t[]){16, 16, 24});
    fs_udp_addr_t p;

    /* the peer's docker0 is first and has my address: skipped */
    p = t_addr(2, S("172.17.0.1", "10.1.0.6"), (uint8_t[]){16, 16});
    cr_expect_eq(fs_udp_select(&me, &p), t_ip("10.1.0.6"));
    /* a shared subnet beats the peer's order */
    p = t_addr(2, S("10.2.0.6", "192.168.7.9"), (uint8_t[]){16, 24});
    cr_expect_eq(fs_udp_select(&me, &p), t_ip("192.168.7.9"));
    /* nothing shared: the first that is not mine (routed) */
    p = t_addr(2, S("172.17.0.1", "10.200.0.6", "10.201.0.6"), (uint8_t[]){16, 16, 16});
    cr_expect_eq(fs_udp_select(&me, &p), t_ip("10.200.0.6"));
    /* garbage count: still an answer, no read past the array */
    p.count = 200;
    (void)fs_udp_select(&me, &p);
}

/* ---- two instances in this process ------------------------------------------ */

static unsigned t_got;
static uint32_t t_word;
static uint8_t  t_data[8];
static size_t   t_len;

static void t_on_dg(void *arg, const void *hdr, size_t hdr_len, const void *data, size_t len)
{
    (void)arg;
    if ((hdr_len == sizeof(t_word)) && (len <= sizeof(t_data))) {
        memcpy(&t_word, hdr, sizeof(t_word));
        memcpy(t_data, data, len);
        t_len = len;
        ++t_got;
    }
}

Test(udp_dg, a_datagram_arrives_and_a_bad_parameter_fails_init)
{
    fs_dg_config_t cfg;
    fs_dg_t *a = NULL, *b = NULL;
    fs_dg_peer_t *peer = NULL;
    const void *addr;
    size_t len;
    uint32_t word = 0xfeedbeef;
    const uint8_t data[3] = {7, 8, 9};
    struct timespec nap = {0, 1000000};
    int i;

    memset(&cfg, 0, sizeof(cfg));
    cfg.hdr_len    = sizeof(word);
    cfg.if_include = "no-such-interface0";
    cr_expect_eq(fs_dg_udp_ops.init(&cfg, t_on_dg, NULL, &a), FS_ERR_INVALID);
    cfg.if_include = NULL;
    cr_assert_eq(fs_dg_udp_ops.init(&cfg, t_on_dg, NULL, &a), FS_OK);
    cr_assert_eq(fs_dg_udp_ops.init(&cfg, t_on_dg, NULL, &b), FS_OK);
    fs_dg_udp_ops.address(b, &addr, &len);
    cr_assert_eq(len, sizeof(fs_udp_addr_t));
    cr_expect_eq(fs_dg_udp_ops.peer_open(a, addr, len - 1, &peer), FS_ERR_INVALID);
    cr_assert_eq(fs_dg_udp_ops.peer_open(a, addr, len, &peer), FS_OK);
    cr_assert_eq(fs_dg_udp_ops.send(a, peer, &word, sizeof(word), data, sizeof(data)), FS_OK);
    for (i = 0; (i < 2000) && (t_got == 0); ++i) {
        fs_dg_udp_ops.progress(b);
        nanosleep(&nap, NULL);
    }
    cr_expect_eq(t_got, 1);
    cr_expect_eq(t_word, word);
    cr_expect_eq(t_len, sizeof(data));
    cr_expect_arr_eq(t_data, data, sizeof(data));
    fs_dg_udp_ops.peer_close(a, peer);
    fs_dg_udp_ops.fini(a);
    fs_dg_udp_ops.fini(b);
}
