/* The dead-peer receive ordering rule's bookkeeping (rule c/d). */
#include <criterion/criterion.h>

#include "queues/deadpeer.h"
#include "queues/mq.h"

Test(deadpeer, empty_blocks_nothing)
{
    fs_dp_poison_t p;

    fs_dp_init(&p);
    cr_expect(fs_dp_is_empty(&p));
    cr_expect(!fs_dp_blocks(&p, 3));
    cr_expect(!fs_dp_blocks(&p, FS_ANY_TAG), "a live peer poisons nothing");
    cr_expect(!fs_dp_blocks_message(&p, 3));
    fs_dp_cleanup(&p);
}

Test(deadpeer, specific_tag_blocks_same_tag_and_wildcard_tag)
{
    fs_dp_poison_t p;

    fs_dp_init(&p);
    cr_assert_eq(fs_dp_poison_tag(&p, 7), FS_OK);
    cr_expect(fs_dp_blocks(&p, 7), "same tag");
    cr_expect(fs_dp_blocks(&p, FS_ANY_TAG), "MPI_ANY_TAG could match tag 7");
    cr_expect(!fs_dp_blocks(&p, 8), "(d) another specific tag is free");
    cr_expect(fs_dp_blocks_message(&p, 7));
    cr_expect(!fs_dp_blocks_message(&p, 8));
    fs_dp_cleanup(&p);
}

Test(deadpeer, wildcard_tag_blocks_everything_but_collectives)
{
    fs_dp_poison_t p;

    fs_dp_init(&p);
    fs_dp_poison_tag(&p, FS_ANY_TAG);
    cr_expect(fs_dp_blocks(&p, 0));
    cr_expect(fs_dp_blocks(&p, 12345));
    cr_expect(fs_dp_blocks_message(&p, 12345));
    cr_expect(!fs_dp_blocks_message(&p, -16), "collective messages follow 17.7");
    fs_dp_cleanup(&p);
}

Test(deadpeer, many_tags_grow_and_repeat_harmlessly)
{
    fs_dp_poison_t p;
    int32_t t;

    fs_dp_init(&p);
    for (t = 0; t < 100; ++t) {
        cr_assert_eq(fs_dp_poison_tag(&p, t * 3), FS_OK);
        cr_assert_eq(fs_dp_poison_tag(&p, t * 3), FS_OK);
    }
    cr_expect_eq(p.count, 100, "a tag is recorded once");
    cr_expect(fs_dp_blocks(&p, 297));
    cr_expect(!fs_dp_blocks(&p, 298));
    fs_dp_cleanup(&p);
    cr_expect(fs_dp_is_empty(&p));
}
