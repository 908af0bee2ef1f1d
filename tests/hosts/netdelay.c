/*
 * netdelay IF_A IF_B DELAY_MS [JITTER_MS]: a wire that is slow.  Relays
 * every Ethernet frame between two interfaces of this network namespace,
 * each one DELAY_MS +- JITTER_MS (uniform) late, in both directions, until
 * SIGTERM or SIGINT; then prints what it relayed and exits 0.
 *
 * Why it exists: this kernel has no netem qdisc (CONFIG_NET_SCH_NETEM), so
 * tests/hosts/net.sh puts it between a host's link and the switch instead
 * (the host's port leaves the bridge; a veth pair joins this relay to it).
 *
 * Frames keep their order (a late one holds back the next ones, as a
 * queue on a slow link does; netem would reorder).  Packet sockets with
 * PACKET_VNET_HDR carry the kernel's segmentation and checksum offload
 * state across, so TSO/GSO super-frames pass whole without turning
 * offloads off.  Test tool: it may allocate per frame.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FRAME_MAX (65536 + sizeof(struct virtio_net_hdr))
#define QUEUE_MAX 65536          /* frames held per direction, then dropped */

typedef struct frame {
    struct frame *next;
    uint64_t due_ns;
    size_t len;
    unsigned char data[];
} frame_t;

typedef struct {
    int in, out;                 /* read from in, write to out */
    frame_t *head, *tail;
    size_t held;
    uint64_t last_due_ns, relayed, dropped;
} lane_t;

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int open_port(const char *ifname)
{
    int one = 1, fd;
    unsigned idx = if_nametoindex(ifname);
    struct sockaddr_ll sll = { .sll_family = AF_PACKET,
                               .sll_protocol = htons(ETH_P_ALL) };
    struct packet_mreq mr = { .mr_type = PACKET_MR_PROMISC };

    if (idx == 0) {
        fprintf(stderr, "netdelay: no interface %s\n", ifname);
        return -1;
    }
    fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
    if (fd < 0) goto fail;
    sll.sll_ifindex = (int)idx;
    mr.mr_ifindex = (int)idx;
    /* what this relay writes out must not come back to it */
    if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) ||
        setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) ||
        setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) ||
        bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
        goto fail;
    return fd;
fail:
    fprintf(stderr, "netdelay: %s: %s\n", ifname, strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
}

static uint64_t lateness_ns(long delay_ms, long jitter_ms)
{
    long ms = delay_ms;
    if (jitter_ms > 0) ms += random() % (2 * jitter_ms + 1) - jitter_ms;
    return ms > 0 ? (uint64_t)ms * 1000000u : 0;
}

/* takes every frame waiting on lane->in */
static void lane_read(lane_t *lane, long delay_ms, long jitter_ms)
{
    static unsigned char buf[FRAME_MAX];
    for (;;) {
        ssize_t n = recv(lane->in, buf, sizeof(buf), 0);
        frame_t *f;
        if (n <= 0) return;
        if (lane->held >= QUEUE_MAX || !(f = malloc(sizeof(*f) + (size_t)n))) {
            lane->dropped++;
            continue;
        }
        f->next = NULL;
        f->len = (size_t)n;
        memcpy(f->data, buf, (size_t)n);
        f->due_ns = now_ns() + lateness_ns(delay_ms, jitter_ms);
        if (f->due_ns < lane->last_due_ns) f->due_ns = lane->last_due_ns;
        lane->last_due_ns = f->due_ns;
        if (lane->tail) lane->tail->next = f; else lane->head = f;
        lane->tail = f;
        lane->held++;
    }
}

/* sends what is due; returns ms until the next frame is (-1: none held) */
static int lane_write(lane_t *lane)
{
    uint64_t t = now_ns();
    frame_t *f;
    while ((f = lane->head) && f->due_ns <= t) {
        if (send(lane->out, f->data, f->len, 0) < 0 && errno == EAGAIN) return 1;
        /* other send errors (a port going down) lose the frame, as a wire does */
        lane->relayed++;
        lane->head = f->next;
        if (!lane->head) lane->tail = NULL;
        lane->held--;
        free(f);
    }
    return f ? (int)((f->due_ns - t) / 1000000u) + 1 : -1;
}

int main(int argc, char **argv)
{
    lane_t lanes[2] = {{0}};
    long delay_ms, jitter_ms;
    struct sigaction sa = { .sa_handler = on_signal };

    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: netdelay IF_A IF_B DELAY_MS [JITTER_MS]\n");
        return 2;
    }
    delay_ms = strtol(argv[3], NULL, 10);
    jitter_ms = argc == 5 ? strtol(argv[4], NULL, 10) : 0;
    if (delay_ms < 0 || jitter_ms < 0 || jitter_ms > delay_ms) {
        fprintf(stderr, "netdelay: want 0 <= JITTER_MS <= DELAY_MS\n");
        return 2;
    }
    lanes[0].in = lanes[1].out = open_port(argv[1]);
    lanes[0].out = lanes[1].in = open_port(argv[2]);
    if (lanes[0].in < 0 || lanes[0].out < 0) return 1;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    srandom((unsigned)now_ns());

    while (!stop) {
        struct pollfd p[2] = {{ .fd = lanes[0].in, .events = POLLIN },
                              { .fd = lanes[1].in, .events = POLLIN }};
        int w0 = lane_write(&lanes[0]), w1 = lane_write(&lanes[1]);
        int wait = w0 < 0 ? w1 : (w1 < 0 || w0 < w1 ? w0 : w1);
        if (poll(p, 2, wait < 0 || wait > 100 ? 100 : wait) < 0 && errno != EINTR) break;
        lane_read(&lanes[0], delay_ms, jitter_ms);
        lane_read(&lanes[1], delay_ms, jitter_ms);
    }
    printf("netdelay: %s->%s %lu relayed %lu dropped, %s->%s %lu relayed %lu dropped\n",
           argv[1], argv[2], (unsigned long)lanes[0].relayed, (unsigned long)lanes[0].dropped,
           argv[2], argv[1], (unsigned long)lanes[1].relayed, (unsigned long)lanes[1].dropped);
    return 0;
}
