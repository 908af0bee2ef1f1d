/* The shared-memory rings of the short lane (src/transport/shm_ring.c).
 * What they are for: a sender that dies in the middle of writing a message
 * stalls its own ring only; every other sender's messages, and what the
 * dead one published before, are still read.  Also: payloads inline and in
 * the ring's data area arrive intact and in order, a full ring or data area
 * refuses, room is reused only once read and a payload that would cross the
 * area's end starts at its beginning, an oversized length or a place outside
 * the area is reported rather than read, acknowledgement words reach their
 * own sender only, and a sender cannot attach
 * to a segment that is not the one its address names or has no ring left.
 * Pages: a ring's entries are mapped when it is opened, its data area whole
 * before its first payload, never page by page inside a stream; memory the
 * segment cannot have is refused, not a SIGBUS. */
#include <criterion/criterion.h>

#include "transport/shm_ring.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BUF 1024u
#define BIG 20000u      /* three fit a 64 KiB data area, not four */
#define KILLS 10u

typedef struct got {
    unsigned  n;
    unsigned  bad;
    uint64_t  hdr[4096];
    size_t    len[4096];
    uint8_t   first[4096];
    uint8_t   last[4096];
    uint8_t   intact[4096];    /* every byte as the first */
    uint32_t  slot[4096];
} got_t;

static fs_ring_rx_t rx;
static got_t got;

static void on_msg(void *arg, uint32_t slot, unsigned tag, const void *hdrp, size_t hlen,
                   void *data, size_t len, int ok)
{
    got_t *g = arg;
    uint64_t hdr = 0;

    if (!ok) {
        ++g->bad;
        return;
    }
    cr_assert_eq(hlen, sizeof(hdr));
    cr_assert_eq(tag, 5);
    memcpy(&hdr, hdrp, sizeof(hdr));
    if (g->n < 4096) {
        g->hdr[g->n]   = hdr;
        g->slot[g->n]  = slot;
        g->len[g->n]   = len;
        g->first[g->n] = (len > 0) ? ((uint8_t *)data)[0] : 0;
        g->last[g->n]  = (len > 0) ? ((uint8_t *)data)[len - 1] : 0;
        g->intact[g->n] = 1;
        for (size_t i = 1; i < len; ++i) {
            if (((uint8_t *)data)[i] != ((uint8_t *)data)[0]) {
                g->intact[g->n] = 0;
                break;
            }
        }
    }
    ++g->n;
}

static void poll_all(void)
{
    while (fs_ring_poll(&rx, on_msg, &got) != 0) {
    }
}

static void setup(void)
{
    memset(&got, 0, sizeof(got));
    cr_assert_eq(fs_ring_rx_create(&rx, 4, 16, BUF, 0), FS_OK);
}

static void teardown(void)
{
    fs_ring_rx_destroy(&rx);
}

static int send_fill(fs_ring_tx_t *tx, uint64_t hdr, size_t len, uint8_t fill)
{
    static uint8_t data[BIG];

    memset(data, fill, len);
    return fs_ring_send(tx, 5, &hdr, sizeof(hdr), data, len);
}

TestSuite(shm_ring, .init = setup, .fini = teardown, .timeout = 20);

Test(shm_ring, inline_and_buffered_payloads_arrive_intact_and_in_order)
{
    /* inline beside the 8-byte header, then in the entry's buffer */
    const size_t sizes[] = {0, 1, FS_RING_BYTES - 8, FS_RING_BYTES - 7, BUF};
    fs_ring_tx_t tx;
    unsigned i;

    cr_assert_eq(fs_ring_tx_open(&tx, &rx.addr), FS_OK);
    for (i = 0; i < 5; ++i) {
        cr_assert(send_fill(&tx, 100 + i, sizes[i], (uint8_t)(i + 1)));
    }
    poll_all();
    cr_assert_eq(got.n, 5);
    for (i = 0; i < 5; ++i) {
        cr_expect_eq(got.hdr[i], 100 + i);
        cr_expect_eq(got.len[i], sizes[i]);
        if (sizes[i] > 0) {
            cr_expect_eq(got.first[i], i + 1, "message %u", i);
            cr_expect_eq(got.last[i], i + 1, "message %u", i);
        }
    }
    fs_ring_tx_close(&tx);
}

Test(shm_ring, a_full_ring_refuses_until_the_receiver_reads)
{
    fs_ring_tx_t tx;
    unsigned i;

    cr_assert_eq(fs_ring_tx_open(&tx, &rx.addr), FS_OK);
    for (i = 0; i < 16; ++i) {
        cr_assert(send_fill(&tx, i, 8, 0));
    }
    cr_expect_not(send_fill(&tx, 16, 8, 0), "a 17th message in 16 entries");
    poll_all();
    cr_expect_eq(got.n, 16);
    cr_expect(send_fill(&tx, 16, 8, 0), "room again once read");
    fs_ring_tx_close(&tx);
}

/* Pages of [p, p + len) that are in memory, and how many there are. */
static unsigned resident(const void *p, size_t len, unsigned *pages_p)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)p / page * page, hi = ((uintptr_t)p + len + page - 1) / page * page;
    unsigned char vec[1024];
    unsigned n = (unsigned)((hi - lo) / page), in = 0, i;

    cr_assert_leq(n, sizeof(vec));
    cr_assert_eq(mincore((void *)lo, hi - lo, vec), 0);
    for (i = 0; i < n; ++i) {
        in += vec[i] & 1;
    }
    *pages_p = n;
    return in;
}

Test(shm_ring, entries_are_mapped_at_open_the_data_area_before_its_first_payload)
{
    fs_ring_rx_t big;
    fs_ring_tx_t tx;
    size_t size;
    unsigned n, in;

    /* 256 entries: 32 KiB of them, several pages */
    cr_assert_eq(fs_ring_rx_create(&big, 1, 256, BUF, 0), FS_OK);
    cr_assert_eq(fs_ring_tx_open(&tx, &big.addr), FS_OK);
    size = tx.data_mask + 1;
    in   = resident(tx.ring, 256 * sizeof(fs_ring_entry_t), &n);
    cr_expect_eq(in, n, "%u of %u pages of entries mapped at open", in, n);
    cr_assert(send_fill(&tx, 1, 8, 1));
    in = resident(tx.data, size, &n);
    cr_expect_lt(in, n, "an inline payload maps the data area (%u of %u pages)", in, n);
    cr_assert(send_fill(&tx, 2, FS_RING_BYTES, 2));
    in = resident(tx.data, size, &n);
    cr_expect_eq(in, n, "%u of %u pages of the data area after its first payload", in, n);
    fs_ring_tx_close(&tx);
    fs_ring_rx_destroy(&big);
}

/* A segment that cannot have a ring's memory (its tmpfs or memory cgroup
 * full; here its file cut short under a mapped sender): a store there would
 * be a SIGBUS.  The sender leaves the data area unused, so payloads beyond
 * an entry are refused (the caller sends them another way) while those an
 * entry holds still go; a ring whose entries cannot be had is not opened. */
Test(shm_ring, memory_the_segment_cannot_have_is_refused_not_a_sigbus)
{
    fs_ring_tx_t tx, later;
    off_t data_off;

    cr_assert_eq(fs_ring_tx_open(&tx, &rx.addr), FS_OK);
    data_off = (rx.slot0 - rx.base) + ((uint8_t *)tx.data - (uint8_t *)tx.map);   /* slot 0 */
    cr_assert_eq(ftruncate(rx.fd, data_off), 0);
    cr_expect(send_fill(&tx, 1, 8, 1), "a payload in its entry");
    cr_expect_not(send_fill(&tx, 2, FS_RING_BYTES, 2), "a payload for the data area, refused");
    cr_expect_not(send_fill(&tx, 3, FS_RING_BYTES, 3), "and again");
    cr_expect(send_fill(&tx, 4, 8, 4), "entries still in use");
    poll_all();
    cr_expect_eq(got.n, 2);
    cr_expect(got.hdr[0] == 1 && got.hdr[1] == 4, "%llu %llu", (unsigned long long)got.hdr[0],
              (unsigned long long)got.hdr[1]);
    cr_expect_eq(fs_ring_tx_open(&later, &rx.addr), FS_ERR_NO_MEMORY,
                 "slot 1 lies wholly past the segment's end");
    fs_ring_tx_close(&tx);
}

/* Payloads too large for an entry take the data area in turn: room is used
 * again only once the receiver has read the message in it, and a payload
 * that would cross the area's end starts at its beginning. */
Test(shm_ring, data_room_is_reused_only_once_read_and_wraps_whole)
{
    fs_ring_tx_t tx;
    unsigned i, round;

    fs_ring_rx_destroy(&rx);
    cr_assert_eq(fs_ring_rx_create(&rx, 4, 64, BIG, (64u << 10)), FS_OK);
    cr_assert_eq(rx.addr.data_size, (64u << 10));
    cr_assert_eq(fs_ring_tx_open(&tx, &rx.addr), FS_OK);
    for (round = 0; round < 3; ++round) {
        memset(&got, 0, sizeof(got));
        for (i = 0; i < 3; ++i) {
            cr_assert(send_fill(&tx, i, BIG, (uint8_t)(round * 16 + i + 1)));
        }
        cr_expect_not(send_fill(&tx, 99, BIG, 0xee), "a fourth with the area in use");
        cr_expect(send_fill(&tx, 3, 8, 0x77), "a small one still fits an entry");
        poll_all();
        cr_assert_eq(got.n, 4);
        for (i = 0; i < 3; ++i) {
            cr_expect_eq(got.hdr[i], i);
            cr_expect_eq(got.len[i], BIG);
            cr_expect(got.intact[i] && (got.first[i] == round * 16 + i + 1),
                      "round %u: message %u overwritten", round, i);
        }
        /* the area is free again: the next one starts at its beginning */
        memset(&got, 0, sizeof(got));
        cr_assert(send_fill(&tx, 4, BIG, 0x55), "room again once read");
        poll_all();
        cr_expect(got.intact[0] && (got.first[0] == 0x55));
    }
    fs_ring_tx_close(&tx);
}

/* A message that leaves its payload with the sender names an acknowledgement
 * word of its ring: the receiver finds it from the ring the entry came by
 * and writes it, and that sender alone reads it; a word outside the ring's
 * is refused; the words run out, come back, and are cleared when taken. */
Test(shm_ring, acknowledgement_words_reach_their_own_sender_only)
{
    fs_ring_tx_t t0, t1;
    unsigned idx, more[FS_RING_ACKS], i;
    _Atomic uint64_t *w;

    cr_assert_eq(fs_ring_tx_open(&t0, &rx.addr), FS_OK);
    cr_assert_eq(fs_ring_tx_open(&t1, &rx.addr), FS_OK);
    cr_assert(fs_ring_ack_take(&t1, &idx));
    cr_assert(send_fill(&t1, idx, 8, 0));
    poll_all();
    cr_assert_eq(got.n, 1);
    w = fs_ring_rx_ack(&rx, got.slot[0], (uint32_t)got.hdr[0]);
    cr_assert_not_null(w);
    atomic_store(w, 0x1234);
    cr_expect_eq(fs_ring_ack_read(&t1, idx), 0x1234);
    cr_expect_eq(fs_ring_ack_read(&t0, idx), 0, "another sender's word written");
    cr_expect_null(fs_ring_rx_ack(&rx, got.slot[0], FS_RING_ACKS));
    cr_expect_null(fs_ring_rx_ack(&rx, 2, 0), "a ring no sender has claimed");
    for (i = 1; i < FS_RING_ACKS; ++i) {
        cr_assert(fs_ring_ack_take(&t1, &more[i]));
        cr_assert_neq(more[i], idx);
    }
    cr_expect_not(fs_ring_ack_take(&t1, &more[0]), "more words than the ring has");
    atomic_store(fs_ring_rx_ack(&rx, got.slot[0], more[5]), 77);
    fs_ring_ack_give(&t1, more[5]);
    cr_assert(fs_ring_ack_take(&t1, &more[0]));
    cr_expect_eq(more[0], more[5]);
    cr_expect_eq(fs_ring_ack_read(&t1, more[0]), 0, "a word taken again is not cleared");
    fs_ring_tx_close(&t0);
    fs_ring_tx_close(&t1);
}

/* The point of the rings: a sender stopped between writing an entry and
 * publishing it (as a process killed there) holds up nobody else. */
Test(shm_ring, a_sender_stopped_inside_a_write_stalls_its_own_ring_only)
{
    fs_ring_tx_t dead, live;
    unsigned i;

    cr_assert_eq(fs_ring_tx_open(&dead, &rx.addr), FS_OK);
    cr_assert_eq(fs_ring_tx_open(&live, &rx.addr), FS_OK);
    for (i = 0; i < 3; ++i) {
        cr_assert(send_fill(&dead, 10 + i, 8, 0xd));
    }
    /* the fourth is written but its "written" word never set */
    dead.ring[dead.head & dead.mask].hlen = 8;
    dead.ring[dead.head & dead.mask].len  = 8;
    for (i = 0; i < 5; ++i) {
        cr_assert(send_fill(&live, 20 + i, 8, 0x1));
    }
    poll_all();
    cr_assert_eq(got.n, 8, "%u of the 3 + 5 published messages read", got.n);
    for (i = 0; i < 3; ++i) {
        cr_expect_eq(got.hdr[i], 10 + i);
    }
    for (i = 0; i < 5; ++i) {
        cr_expect_eq(got.hdr[3 + i], 20 + i);
    }
    fs_ring_tx_close(&dead);
    fs_ring_tx_close(&live);
}

Test(shm_ring, an_oversized_length_is_reported_not_read)
{
    fs_ring_tx_t tx;

    cr_assert_eq(fs_ring_tx_open(&tx, &rx.addr), FS_OK);
    cr_assert(send_fill(&tx, 1, 8, 0));
    tx.ring[0].len = BUF + 1;   /* a broken or hostile sender */
    cr_assert(send_fill(&tx, 2, BUF, 0));
    tx.ring[1].off = 0xffff;    /* a place past the ring's data area */
    cr_assert(send_fill(&tx, 3, 8, 0));
    poll_all();
    cr_expect_eq(got.bad, 2);
    cr_expect_eq(got.n, 1, "the next message still read");
    cr_expect_eq(got.hdr[0], 3);
    fs_ring_tx_close(&tx);
}

Test(shm_ring, a_sender_attaches_only_to_the_segment_named_while_rings_last)
{
    fs_ring_addr_t wrong = rx.addr;
    fs_ring_tx_t tx[5];
    unsigned i;

    wrong.id ^= 1;
    cr_expect_neq(fs_ring_tx_open(&tx[0], &wrong), FS_OK, "another segment's id");
    wrong = rx.addr;
    wrong.fd = 1000;
    cr_expect_neq(fs_ring_tx_open(&tx[0], &wrong), FS_OK, "no such descriptor");
    for (i = 0; i < 4; ++i) {
        cr_assert_eq(fs_ring_tx_open(&tx[i], &rx.addr), FS_OK, "ring %u of 4", i);
    }
    cr_expect_neq(fs_ring_tx_open(&tx[4], &rx.addr), FS_OK, "a fifth sender in 4 rings");
    for (i = 0; i < 4; ++i) {
        fs_ring_tx_close(&tx[i]);
    }
}

/* Real processes: a sender killed at a random moment of a stream, ten
 * times, while another streams all along: the live stream arrives whole
 * and in order, each dead stream in order up to where it stopped. */
static void stream(const fs_ring_addr_t *addr, uint64_t tag)
{
    fs_ring_tx_t tx;
    uint64_t i = 0;

    /* never outlive the test, whatever ends it */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    alarm(30);
    if ((getppid() == 1) || (fs_ring_tx_open(&tx, addr) != FS_OK)) {
        _exit(2);
    }
    for (;;) {
        if (send_fill(&tx, (tag << 32) | i, 8 + (i % 200), (uint8_t)i)) {
            ++i;
        }
    }
}

static void check_batch(uint64_t *next)
{
    unsigned k;

    for (k = 0; (k < got.n) && (k < 4096); ++k) {
        uint64_t who = got.hdr[k] >> 32, seq = got.hdr[k] & 0xffffffffu;

        cr_assert(who <= KILLS);
        cr_assert_eq(seq, next[who], "stream %lu: message %lu after %lu",
                     (unsigned long)who, (unsigned long)seq, (unsigned long)next[who]);
        cr_assert_eq(got.len[k], 8 + (seq % 200));
        cr_assert_eq(got.last[k], (uint8_t)seq);
        next[who]++;
    }
}

Test(shm_ring, a_sender_killed_mid_stream_stops_no_other_stream)
{
    uint64_t next[KILLS + 1] = {0};
    unsigned kills;
    pid_t live;

    fs_ring_rx_destroy(&rx);
    cr_assert_eq(fs_ring_rx_create(&rx, 32, 16, BUF, 0), FS_OK);
    live = fork();
    if (live == 0) {
        stream(&rx.addr, 0);
    }
    for (kills = 1; kills <= KILLS; ++kills) {
        struct timespec ts = {0, 200000 + (rand() % 2000) * 1000};
        pid_t victim = fork();
        uint64_t before = next[0];

        if (victim == 0) {
            stream(&rx.addr, kills);
        }
        while (next[kills] == 0) {      /* it streams: kill it inside */
            got.n = 0;
            fs_ring_poll(&rx, on_msg, &got);
            check_batch(next);
        }
        while (nanosleep(&ts, &ts) != 0) {
        }
        kill(victim, SIGKILL);
        waitpid(victim, NULL, 0);
        /* the live stream goes on (the suite's timeout if it does not) */
        while (next[0] < before + 300) {
            got.n = 0;
            fs_ring_poll(&rx, on_msg, &got);
            check_batch(next);
        }
    }
    kill(live, SIGKILL);
    waitpid(live, NULL, 0);
}

/* Many senders: a poll reads the rings that are busy, not every ring.  A
 * ring idle for FS_RING_IDLE_POLLS polls sleeps (FS_RING_AWAKE_MIN stay
 * awake); its sender's next entry rings the bell, and the next poll reads
 * it and wakes the ring, whichever sleeping ring's turn it is. */
#define MANY 8
static fs_ring_tx_t many[MANY];

static void open_many_and_idle(void)
{
    unsigned i;

    fs_ring_rx_destroy(&rx);
    cr_assert_eq(fs_ring_rx_create(&rx, MANY, 16, BUF, 0), FS_OK);
    for (i = 0; i < MANY; ++i) {
        cr_assert_eq(fs_ring_tx_open(&many[i], &rx.addr), FS_OK);
    }
    for (i = 0; i <= FS_RING_IDLE_POLLS; ++i) {
        cr_assert_eq(fs_ring_poll(&rx, on_msg, &got), 0);
    }
    cr_assert_eq(rx.sched.nawake, FS_RING_AWAKE_MIN, "%u awake", rx.sched.nawake);
    cr_assert_eq(rx.sched.nasleep, MANY - FS_RING_AWAKE_MIN);
}

/* a sleeping ring whose turn is not next */
static uint32_t sleeping_not_next(void)
{
    uint32_t next = rx.sched.asleep[(rx.sched.turn < rx.sched.nasleep) ? rx.sched.turn : 0];
    uint32_t i;

    for (i = 0; i < rx.sched.nasleep; ++i) {
        if (rx.sched.asleep[i] != next) {
            return rx.sched.asleep[i];
        }
    }
    cr_assert_fail("no second sleeping ring");
    return 0;
}

Test(shm_ring, idle_rings_sleep_and_a_sender_wakes_its_own_with_the_bell)
{
    uint32_t s;
    unsigned i;

    open_many_and_idle();
    s = sleeping_not_next();
    cr_expect_eq(atomic_load(&many[s].ctl->asleep), 1, "its sender sees it asleep");
    cr_assert(send_fill(&many[s], 77, 8, 0x3));
    cr_expect_eq(fs_ring_poll(&rx, on_msg, &got), 1, "the next poll reads it");
    cr_expect(got.n == 1 && got.hdr[0] == 77 && got.slot[0] == s);
    cr_expect(rx.sched.is_awake[s], "and wakes its ring");
    cr_expect_eq(atomic_load(&many[s].ctl->asleep), 0);
    for (i = 0; i < MANY; ++i) {
        fs_ring_tx_close(&many[i]);
    }
}

/* A sender that read the flag stale (no fence after its write) does not
 * ring: the sleeping rings' turn, one per poll, still reads its entry. */
Test(shm_ring, an_entry_without_a_bell_is_read_in_the_sleeping_rings_turn)
{
    uint32_t s;
    unsigned i;

    open_many_and_idle();
    s = sleeping_not_next();
    atomic_store(&many[s].ctl->asleep, 0);      /* as the sender saw it */
    cr_assert(send_fill(&many[s], 78, 8, 0x3));
    atomic_store(&many[s].ctl->asleep, 1);
    for (i = 0; (i < MANY) && (got.n == 0); ++i) {
        (void)fs_ring_poll(&rx, on_msg, &got);
    }
    cr_expect(got.n == 1 && got.hdr[0] == 78, "read within one turn of the sleeping rings");
    cr_expect(rx.sched.is_awake[s]);
    for (i = 0; i < MANY; ++i) {
        fs_ring_tx_close(&many[i]);
    }
}

/* A peer's failure: everything its ring holds is read at once, asleep or
 * not (it may have died between its write and its bell). */
Test(shm_ring, polling_all_reads_every_sleeping_ring)
{
    unsigned i, k = 0;

    open_many_and_idle();
    for (i = 0; i < rx.sched.nasleep; ++i) {
        uint32_t s = rx.sched.asleep[i];

        atomic_store(&many[s].ctl->asleep, 0);
        cr_assert(send_fill(&many[s], 100 + s, 8, 0x3));
        atomic_store(&many[s].ctl->asleep, 1);
        ++k;
    }
    cr_expect_eq(fs_ring_poll_all(&rx, on_msg, &got), k);
    cr_expect_eq(got.n, k, "%u of %u read", got.n, k);
    for (i = 0; i < MANY; ++i) {
        fs_ring_tx_close(&many[i]);
    }
}
