/* Unit tests of the agreement (src/failure/agree.c): its API's checks, the
 * rules the simulator cannot tell apart from their back-ups (a decided
 * process answers an UP; an accepted node answers a re-gathering orphan; a
 * fenced sender is not heard), message size, and every malformed message
 * refused with FS_ERR_PROTO and no effect. */
#include "failure/agree_int.h"

#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#define U_MAX  8
#define U_MSGS 256

typedef struct u_msg {
    uint32_t from, to;
    size_t   len;
    uint8_t  data[512];
} u_msg_t;

typedef struct u_net {
    uint32_t          n;
    fs_agree_t       *a[U_MAX];
    uint32_t          id[U_MAX];
    u_msg_t           q[U_MSGS];
    size_t            head, tail;
    int               decided[U_MAX];
    fs_agree_result_t res[U_MAX];
    uint64_t          fd[U_MAX];
} u_net_t;

static u_net_t net;

static fs_status_t u_send(void *arg, uint32_t to, const void *msg, size_t len)
{
    u_msg_t *m = &net.q[net.tail++ % U_MSGS];

    cr_assert_leq(len, sizeof(m->data));
    cr_assert_lt(net.tail - net.head, U_MSGS);
    m->from = *(uint32_t *)arg;
    m->to   = to;
    m->len  = len;
    memcpy(m->data, msg, len);
    return FS_OK;
}

static void u_decided(void *arg, const fs_agree_result_t *res)
{
    uint32_t me = *(uint32_t *)arg;

    net.decided[me]++;
    net.res[me] = *res;
    net.fd[me]  = res->failed[0];
}

static void u_init(uint32_t n)
{
    static const fs_agree_ops_t ops = { u_send, u_decided };
    uint32_t r;

    memset(&net, 0, sizeof(net));
    net.n = n;
    for (r = 0; r < n; r++) {
        fs_agree_config_t cfg = { .n = n, .me = r };

        net.id[r] = r;
        cr_assert_eq(fs_agree_create(&cfg, &ops, &net.id[r], &net.a[r]), FS_OK);
    }
}

static void u_fini(void)
{
    uint32_t r;

    for (r = 0; r < net.n; r++)
        fs_agree_destroy(net.a[r]);
}

static void u_start(uint32_t r, uint64_t v)
{
    fs_agree_input_t in = { .nv = 1, .op = { FS_AGREE_AND }, .v = { v } };
    uint32_t seq;

    cr_assert_eq(fs_agree_start(net.a[r], &in, &seq), FS_OK);
}

static u_msg_t *u_pop(void)
{
    cr_assert_lt(net.head, net.tail, "no message queued");
    return &net.q[net.head++ % U_MSGS];
}

/* Delivers queued messages, first in first out, until none is left. */
static void u_pump(void)
{
    while (net.head < net.tail) {
        u_msg_t *m = u_pop();

        if (!fs_bm_test(net.a[m->to]->gone, m->to))
            cr_assert_eq(fs_agree_recv(net.a[m->to], m->data, m->len), FS_OK);
    }
}

Test(agree, the_api_refuses_bad_arguments)
{
    static const fs_agree_ops_t ops = { u_send, u_decided };
    fs_agree_config_t bad[] = { { .n = 0 }, { .n = 4, .me = 4 } };
    fs_agree_input_t in = { .nv = 5 };
    fs_agree_t *a;
    uint32_t seq, i;

    for (i = 0; i < 2; i++)
        cr_assert_eq(fs_agree_create(&bad[i], &ops, NULL, &a), FS_ERR_INVALID);
    u_init(2);
    cr_assert_eq(fs_agree_start(net.a[0], &in, &seq), FS_ERR_INVALID);
    in.nv = 1;
    in.op[0] = 7;
    cr_assert_eq(fs_agree_start(net.a[0], &in, &seq), FS_ERR_INVALID);
    cr_assert_eq(fs_agree_gone(net.a[0], 2, 1), FS_ERR_INVALID);
    cr_assert_eq(net.tail, 0, "a refused call sent something");
    u_fini();
}

Test(agree, a_single_member_decides_its_own_value_at_once)
{
    u_init(1);
    u_start(0, 0x5a);
    cr_assert_eq(net.decided[0], 1);
    cr_assert_eq(net.res[0].v[0], 0x5a);
    cr_assert_eq(net.res[0].nfailed, 0);
    cr_assert_eq(net.tail, 0);
    u_fini();
}

Test(agree, two_members_and_a_failure_known_to_one)
{
    u_init(3);
    cr_assert_eq(fs_agree_gone(net.a[1], 2, 1), FS_OK);
    u_start(0, 0xf0);
    u_start(1, 0x3c);
    u_pump();       /* 0 waits for 2 until it learns */
    cr_assert_eq(net.decided[0] + net.decided[1], 0);
    cr_assert_eq(fs_agree_gone(net.a[0], 2, 1), FS_OK);
    u_pump();
    cr_assert_eq(net.decided[0], 1);
    cr_assert_eq(net.decided[1], 1);
    cr_assert_eq(net.res[0].v[0], 0x30);
    cr_assert_eq(net.res[1].v[0], 0x30);
    cr_assert_eq(net.fd[0], 1u << 2);
    cr_assert_eq(net.fd[1], 1u << 2);
    cr_assert_eq(net.res[0].unacked, 1, "nobody acknowledged 2");
    u_fini();
}

/* Rule 8: an UP for a decided instance gets the decision back. */
Test(agree, a_decided_process_answers_an_up_with_the_decision)
{
    u_msg_t up;

    u_init(2);
    u_start(0, 1);
    u_start(1, 1);
    up = *u_pop();                  /* 1's gather UP */
    cr_assert_eq(up.data[0], FS_AGREE_UP);
    cr_assert_eq(fs_agree_recv(net.a[0], up.data, up.len), FS_OK);
    u_pump();
    cr_assert_eq(net.decided[0] + net.decided[1], 2);
    cr_assert_eq(fs_agree_recv(net.a[0], up.data, up.len), FS_OK);   /* a re-send */
    cr_assert_eq(net.tail - net.head, 1);
    cr_assert_eq(u_pop()->data[0], FS_AGREE_DECIDE);
    u_fini();
}

/* An orphan that re-gathers under a node that has accepted gets the
 * proposal back at once (not only when the node's own view changes). */
Test(agree, an_accepted_node_answers_a_regathering_orphan_with_the_proposal)
{
    u_msg_t up;

    u_init(2);
    u_start(0, 1);
    u_start(1, 1);
    up = *u_pop();
    cr_assert_eq(fs_agree_recv(net.a[0], up.data, up.len), FS_OK);
    cr_assert_eq(u_pop()->data[0], FS_AGREE_PROPOSE);      /* lost on the way */
    cr_assert_eq(fs_agree_recv(net.a[0], up.data, up.len), FS_OK);
    cr_assert_eq(net.tail - net.head, 1);
    cr_assert_eq(u_pop()->data[0], FS_AGREE_PROPOSE);
    u_fini();
}

Test(agree, a_fenced_sender_is_not_heard)
{
    fs_agree_counters_t c;
    u_msg_t up;

    u_init(2);
    u_start(0, 1);
    u_start(1, 1);
    up = *u_pop();
    cr_assert_eq(fs_agree_gone(net.a[0], 1, 1), FS_OK);
    cr_assert_eq(net.decided[0], 1, "0 alone decides once 1 is gone");
    net.head = net.tail;
    cr_assert_eq(fs_agree_recv(net.a[0], up.data, up.len), FS_OK);
    cr_assert_eq(net.tail, net.head, "answered a fenced process");
    fs_agree_counters(net.a[0], &c);
    cr_assert_eq(c.dropped_stale, 1);
    u_fini();
}

/* A member that left (finalized) is gone but not failed. */
Test(agree, a_member_that_left_is_not_in_the_failed_set)
{
    u_init(3);
    u_start(0, 1);
    u_start(1, 1);
    cr_assert_eq(fs_agree_gone(net.a[0], 2, 0), FS_OK);
    cr_assert_eq(fs_agree_gone(net.a[1], 2, 0), FS_OK);
    u_pump();
    cr_assert_eq(net.decided[0] + net.decided[1], 2);
    cr_assert_eq(net.res[0].nfailed, 0);
    cr_assert_eq(net.res[0].unacked, 0);
    u_fini();
}

/* Sets go as runs: a leaf's UP at 1000 members is small. */
Test(agree, messages_grow_with_holes_not_with_members)
{
    static const fs_agree_ops_t ops = { u_send, u_decided };
    fs_agree_config_t cfg = { .n = 1000, .me = 999 };
    fs_agree_input_t in = { .nv = 1 };
    uint32_t seq, id = 999, r;
    fs_agree_t *a;

    memset(&net, 0, sizeof(net));
    cr_assert_eq(fs_agree_create(&cfg, &ops, &id, &a), FS_OK);
    for (r = 100; r < 110; r += 2)
        cr_assert_eq(fs_agree_gone(a, r, 1), FS_OK);
    cr_assert_eq(fs_agree_start(a, &in, &seq), FS_OK);
    cr_assert_eq(net.tail, 1);
    cr_assert_leq(net.q[0].len, sizeof(fs_agree_hdr_t) + 8 + 4 * 4 + 8 * (1 + 1 + 5 + 6),
                  "UP of %zu bytes", net.q[0].len);
    cr_assert_geq(fs_agree_msg_max(a), net.q[0].len);
    fs_agree_destroy(a);
}

/* ---- malformed messages ------------------------------------------------------ */

static void expect_refused(fs_agree_t *a, const void *msg, size_t len, const char *what)
{
    fs_agree_counters_t before, after;

    fs_agree_counters(a, &before);
    cr_assert_eq(fs_agree_recv(a, msg, len), FS_ERR_PROTO, "%s accepted", what);
    fs_agree_counters(a, &after);
    cr_assert_eq(after.records, before.records, "%s left a record", what);
    cr_assert_eq(net.tail, net.head, "%s was answered", what);
}

Test(agree, malformed_messages_are_refused_without_effect)
{
    u_msg_t good;
    uint8_t m[512];
    fs_agree_hdr_t *h = (fs_agree_hdr_t *)m;
    uint32_t *set;

    u_init(4);
    u_start(3, 1);                  /* a leaf: its UP to 2 is a good message */
    good = *u_pop();
    cr_assert_eq(fs_agree_recv(net.a[2], good.data, good.len), FS_OK);
    net.head = net.tail;
#define RESET() memcpy(m, good.data, good.len)
    RESET();
    expect_refused(net.a[2], m, sizeof(*h) - 1, "a short header");
    expect_refused(net.a[2], m, good.len - 1, "a truncated payload");
    expect_refused(net.a[2], m, good.len + 1, "a trailing byte");
    h->type = 0;
    expect_refused(net.a[2], m, good.len, "type 0");
    h->type = 4;
    expect_refused(net.a[2], m, good.len, "type 4");
    RESET(); h->nv = 5;
    expect_refused(net.a[2], m, good.len, "5 value words");
    RESET(); h->from = 4;
    expect_refused(net.a[2], m, good.len, "a sender out of range");
    RESET(); h->from = 2;
    expect_refused(net.a[2], m, good.len, "a message from itself");
    RESET(); h->ballot = 9;
    expect_refused(net.a[2], m, good.len, "a ballot out of range");
    RESET(); h->seq = 0;
    expect_refused(net.a[2], m, good.len, "instance 0");
    RESET(); h->seq = 1 + FS_AGREE_AHEAD + 1;
    expect_refused(net.a[2], m, good.len, "an instance far ahead");
    RESET(); h->ops = FS_AGREE_MAX;
    expect_refused(net.a[2], m, good.len, "another operation on the same instance");
    RESET(); h->acc_ballot = 7;
    expect_refused(net.a[2], m, good.len, "an accepted ballot out of range");
    RESET();
    set = (uint32_t *)(m + sizeof(*h) + 8);           /* C: one run {3} */
    cr_assert_eq(set[0], 1);
    set[1] = 3; set[2] = 2;
    expect_refused(net.a[2], m, good.len, "a run past the last member");
    set[1] = 3; set[2] = 0;
    expect_refused(net.a[2], m, good.len, "an empty run");
    set[0] = 5;
    expect_refused(net.a[2], m, good.len, "more runs than members");
#undef RESET
    u_fini();
}

/* A record made by a message, then started with another operation: the
 * members called different collectives; refused, not merged. */
Test(agree, a_start_that_does_not_match_the_instance_is_refused)
{
    fs_agree_input_t in = { .nv = 2, .op = { FS_AGREE_AND, FS_AGREE_OR } };
    uint32_t seq;

    u_init(2);
    u_start(1, 1);
    cr_assert_eq(fs_agree_recv(net.a[0], u_pop()->data, net.q[0].len), FS_OK);
    cr_assert_eq(fs_agree_start(net.a[0], &in, &seq), FS_ERR_INVALID);
    u_fini();
}
