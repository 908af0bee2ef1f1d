/* Per-channel sequencing: in order, early (parked), stale, wraparound. */
#include <criterion/criterion.h>

#include "endpoint/seq.h"

static fs_seq_item_t items[64];

static fs_seq_item_t *item(int i, uint16_t seq)
{
    fs_list_init(&items[i].elem);
    items[i].seq = seq;
    return &items[i];
}

Test(seq, in_order_is_one_compare)
{
    fs_seq_rx_t rx;

    fs_seq_rx_init(&rx);
    cr_expect_eq(fs_seq_check(&rx, 0), FS_SEQ_IN_ORDER);
    fs_seq_advance(&rx);
    cr_expect_eq(fs_seq_check(&rx, 1), FS_SEQ_IN_ORDER);
    cr_expect_eq(fs_seq_check(&rx, 0), FS_SEQ_STALE);
    cr_expect_eq(fs_seq_check(&rx, 5), FS_SEQ_EARLY);
}

Test(seq, reorders_parked_messages)
{
    fs_seq_rx_t rx;
    uint16_t arrival[] = {3, 1, 4, 2};
    int i, delivered = 0;
    fs_seq_item_t *ready;

    fs_seq_rx_init(&rx);
    for (i = 0; i < 4; ++i) {
        cr_assert_eq(fs_seq_check(&rx, arrival[i]), FS_SEQ_EARLY);
        fs_seq_park(&rx, item(i, arrival[i]));
    }
    cr_expect_eq(rx.num_parked, 4);
    cr_expect_null(fs_seq_next_ready(&rx), "0 has not arrived");
    /* 0 arrives and is delivered, then 1..4 come out of the park in order */
    cr_assert_eq(fs_seq_check(&rx, 0), FS_SEQ_IN_ORDER);
    fs_seq_advance(&rx);
    while ((ready = fs_seq_next_ready(&rx)) != NULL) {
        cr_expect_eq(ready->seq, (uint16_t)(delivered + 1));
        fs_seq_advance(&rx);
        ++delivered;
    }
    cr_expect_eq(delivered, 4);
    cr_expect_eq(rx.num_parked, 0);
    cr_expect_eq(rx.expected, 5);
}

Test(seq, wraps_around_16_bits)
{
    fs_seq_rx_t rx;
    fs_seq_item_t *ready;

    fs_seq_rx_init(&rx);
    rx.expected = 65534;
    cr_expect_eq(fs_seq_check(&rx, 65534), FS_SEQ_IN_ORDER);
    cr_expect_eq(fs_seq_check(&rx, 0), FS_SEQ_EARLY, "0 follows 65535");
    cr_expect_eq(fs_seq_check(&rx, 65533), FS_SEQ_STALE);
    fs_seq_park(&rx, item(0, 1));
    fs_seq_park(&rx, item(1, 65535));
    fs_seq_park(&rx, item(2, 0));
    fs_seq_advance(&rx);                       /* 65534 delivered */
    ready = fs_seq_next_ready(&rx);
    cr_assert_not_null(ready);
    cr_expect_eq(ready->seq, 65535);
    fs_seq_advance(&rx);
    ready = fs_seq_next_ready(&rx);
    cr_assert_not_null(ready);
    cr_expect_eq(ready->seq, 0);
    fs_seq_advance(&rx);
    ready = fs_seq_next_ready(&rx);
    cr_assert_not_null(ready);
    cr_expect_eq(ready->seq, 1);
}

Test(seq, gap_keeps_later_messages_parked)
{
    fs_seq_rx_t rx;

    fs_seq_rx_init(&rx);
    fs_seq_park(&rx, item(0, 2));
    fs_seq_advance(&rx);                       /* 0 delivered, 1 missing */
    cr_expect_null(fs_seq_next_ready(&rx));
    cr_expect_eq(rx.num_parked, 1);
}
