/* Matching queues: order, wildcards, negative tags, cancel. */
#include <criterion/criterion.h>

#include "queues/mq.h"

#define NPEERS 4

static fs_mq_t mq;
static fs_mq_bin_t bins[NPEERS];

static void setup(void)
{
    int i;

    fs_mq_init(&mq);
    for (i = 0; i < NPEERS; ++i) {
        fs_mq_bin_init(&bins[i]);
    }
}

TestSuite(mq, .init = setup);

static void recv_init(fs_mq_recv_t *r, int32_t src, int32_t tag)
{
    fs_list_init(&r->elem);
    r->src = src;
    r->tag = tag;
}

static void post(fs_mq_recv_t *r, int32_t src, int32_t tag)
{
    recv_init(r, src, tag);
    fs_mq_post(&mq, (src == FS_ANY_SOURCE) ? NULL : &bins[src], r);
}

static void arrive(fs_mq_msg_t *m, int32_t src, int32_t tag)
{
    m->src = src;
    m->tag = tag;
    fs_mq_add_unexpected(&mq, &bins[src], m);
}

Test(mq, tag_predicate)
{
    cr_expect(fs_mq_tag_matches(5, 5));
    cr_expect(!fs_mq_tag_matches(5, 6));
    cr_expect(fs_mq_tag_matches(FS_ANY_TAG, 0));
    cr_expect(fs_mq_tag_matches(FS_ANY_TAG, 123456));
    /* collective tags are negative: ANY_TAG must never take them */
    cr_expect(!fs_mq_tag_matches(FS_ANY_TAG, -16));
    cr_expect(!fs_mq_tag_matches(FS_ANY_TAG, -31078));
    cr_expect(fs_mq_tag_matches(-16, -16));
}

Test(mq, posted_in_post_order_same_tag)
{
    fs_mq_recv_t a, b, c;

    post(&a, 1, 7);
    post(&b, 1, 7);
    post(&c, 1, 7);
    cr_expect_eq(fs_mq_match_posted(&mq, &bins[1], 7), &a);
    cr_expect_eq(fs_mq_match_posted(&mq, &bins[1], 7), &b);
    cr_expect_eq(fs_mq_match_posted(&mq, &bins[1], 7), &c);
    cr_expect_null(fs_mq_match_posted(&mq, &bins[1], 7));
}

Test(mq, posted_skips_other_tags_and_sources)
{
    fs_mq_recv_t a, b;

    post(&a, 1, 3);
    post(&b, 2, 7);
    cr_expect_null(fs_mq_match_posted(&mq, &bins[1], 7));
    cr_expect_eq(fs_mq_match_posted(&mq, &bins[2], 7), &b);
    cr_expect_eq(fs_mq_match_posted(&mq, &bins[1], 3), &a);
}

Test(mq, wildcard_posted_first_wins)
{
    fs_mq_recv_t wild, specific;

    post(&wild, FS_ANY_SOURCE, FS_ANY_TAG);
    post(&specific, 2, 9);
    cr_expect_eq(fs_mq_match_posted(&mq, &bins[2], 9), &wild);
    cr_expect_eq(fs_mq_match_posted(&mq, &bins[2], 9), &specific);
}

Test(mq, specific_posted_first_wins)
{
    fs_mq_recv_t wild, specific;

    post(&specific, 2, 9);
    post(&wild, FS_ANY_SOURCE, 9);
    cr_expect_eq(fs_mq_match_posted(&mq, &bins[2], 9), &specific);
    cr_expect_eq(fs_mq_match_posted(&mq, &bins[3], 9), &wild);
}

Test(mq, wildcard_any_tag_ignores_negative_tag)
{
    fs_mq_recv_t wild, coll;

    post(&wild, FS_ANY_SOURCE, FS_ANY_TAG);
    cr_expect_null(fs_mq_match_posted(&mq, &bins[0], -16));
    post(&coll, 0, -16);
    cr_expect_eq(fs_mq_match_posted(&mq, &bins[0], -16), &coll);
    cr_expect_eq(fs_mq_match_posted(&mq, &bins[0], 4), &wild);
}

Test(mq, unexpected_specific_takes_earliest_of_source)
{
    fs_mq_msg_t m1, m2, m3;

    arrive(&m1, 1, 5);
    arrive(&m2, 2, 5);
    arrive(&m3, 1, 5);
    cr_expect_eq(fs_mq_find_unexpected(&mq, &bins[1], 5), &m1);
    fs_mq_remove_unexpected(&mq, &m1);
    cr_expect_eq(fs_mq_find_unexpected(&mq, &bins[1], 5), &m3);
    cr_expect_eq(fs_mq_find_unexpected(&mq, &bins[2], FS_ANY_TAG), &m2);
    cr_expect_eq(mq.num_unexpected, 2);
}

Test(mq, unexpected_wildcard_takes_earliest_arrival)
{
    fs_mq_msg_t m1, m2, m3;

    arrive(&m1, 3, 1);
    arrive(&m2, 0, 2);
    arrive(&m3, 1, 2);
    cr_expect_eq(fs_mq_find_unexpected(&mq, NULL, FS_ANY_TAG), &m1);
    cr_expect_eq(fs_mq_find_unexpected(&mq, NULL, 2), &m2);
    fs_mq_remove_unexpected(&mq, &m2);
    cr_expect_eq(fs_mq_find_unexpected(&mq, NULL, 2), &m3);
    /* removal unlinks from both lists */
    cr_expect_null(fs_mq_find_unexpected(&mq, &bins[0], FS_ANY_TAG));
}

Test(mq, unexpected_any_tag_never_takes_collective_message)
{
    fs_mq_msg_t coll, user;

    arrive(&coll, 1, -27);
    arrive(&user, 1, 0);
    cr_expect_eq(fs_mq_find_unexpected(&mq, &bins[1], FS_ANY_TAG), &user);
    cr_expect_eq(fs_mq_find_unexpected(&mq, NULL, FS_ANY_TAG), &user);
    cr_expect_eq(fs_mq_find_unexpected(&mq, &bins[1], -27), &coll);
}

Test(mq, non_overtaking_mixed_tags)
{
    /* messages 0..9 from one source, tags alternate; receives by tag must
     * see each tag's messages in send order */
    fs_mq_msg_t m[10];
    int i, expect_a = 0, expect_b = 1;

    for (i = 0; i < 10; ++i) {
        arrive(&m[i], 2, i % 2);
    }
    for (i = 0; i < 5; ++i) {
        fs_mq_msg_t *a = fs_mq_find_unexpected(&mq, &bins[2], 0);
        fs_mq_msg_t *b = fs_mq_find_unexpected(&mq, &bins[2], 1);
        cr_assert_eq(a, &m[expect_a]);
        cr_assert_eq(b, &m[expect_b]);
        fs_mq_remove_unexpected(&mq, a);
        fs_mq_remove_unexpected(&mq, b);
        expect_a += 2;
        expect_b += 2;
    }
    cr_expect_eq(mq.num_unexpected, 0);
}

Test(mq, cancel_posted_and_matched)
{
    fs_mq_recv_t a, b;

    post(&a, 1, 1);
    post(&b, FS_ANY_SOURCE, 1);
    cr_expect(fs_mq_recv_is_posted(&a));
    cr_expect_eq(fs_mq_cancel(&mq, &a), 1);
    cr_expect(!fs_mq_recv_is_posted(&a));
    cr_expect_eq(fs_mq_cancel(&mq, &a), 0, "second cancel finds nothing");
    cr_expect_eq(fs_mq_match_posted(&mq, &bins[1], 1), &b);
    cr_expect_eq(fs_mq_cancel(&mq, &b), 0, "a matched receive cannot be cancelled");
}

Test(mq, stamps_strictly_increase)
{
    fs_mq_recv_t r[5];
    int i;

    for (i = 0; i < 5; ++i) {
        post(&r[i], (i % 2) ? FS_ANY_SOURCE : 1, 0);
    }
    for (i = 1; i < 5; ++i) {
        cr_expect_gt(r[i].stamp, r[i - 1].stamp);
    }
    /* interleaved wildcard/specific receives are taken strictly in post order */
    for (i = 0; i < 5; ++i) {
        cr_expect_eq(fs_mq_match_posted(&mq, &bins[1], 0), &r[i]);
    }
}
