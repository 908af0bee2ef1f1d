/* Pools, parameters, and the parameter documentation staying in sync. */
#include <criterion/criterion.h>

#include "common/fs_mpool.h"
#include "common/fs_params.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

Test(mpool, grows_only_when_empty)
{
    fs_mpool_t mp;
    uint64_t grows = 0;
    void *objs[40];
    int i;

    cr_assert_eq(fs_mpool_init(&mp, "t", 48, 16, 0, &grows), FS_OK);
    for (i = 0; i < 40; ++i) {
        objs[i] = fs_mpool_get(&mp);
        cr_assert_not_null(objs[i]);
        cr_expect_eq((uintptr_t)objs[i] % 16, 0, "objects are 16-byte aligned");
        memset(objs[i], 0xab, 48);
    }
    cr_expect_eq(grows, 3, "40 objects in chunks of 16");
    for (i = 0; i < 40; ++i) {
        fs_mpool_put(&mp, objs[i]);
    }
    /* steady state: reuse without growing */
    for (i = 0; i < 1000; ++i) {
        void *o = fs_mpool_get(&mp);
        fs_mpool_put(&mp, o);
    }
    cr_expect_eq(grows, 3);
    fs_mpool_cleanup(&mp);
}

Test(mpool, reserve_makes_the_first_chunk_at_setup)
{
    fs_mpool_t mp;
    uint64_t grows = 0;
    void *objs[16];
    int i;

    cr_assert_eq(fs_mpool_init(&mp, "t", 48, 16, 0, &grows), FS_OK);
    cr_assert_eq(fs_mpool_reserve(&mp), FS_OK);
    cr_expect_eq(grows, 1);
    cr_assert_eq(fs_mpool_reserve(&mp), FS_OK);
    cr_expect_eq(grows, 1, "a second reserve adds nothing");
    for (i = 0; i < 16; ++i) {
        objs[i] = fs_mpool_get(&mp);
        cr_assert_not_null(objs[i]);
    }
    cr_expect_eq(grows, 1, "the first chunk's objects came without growing");
    for (i = 0; i < 16; ++i) {
        fs_mpool_put(&mp, objs[i]);
    }
    fs_mpool_cleanup(&mp);
}

/* A chunk's pages are mapped when it is made, not faulted in one by one
 * as its elements are first written inside a message stream. */
Test(mpool, a_new_chunk_is_mapped_whole)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char vec[64];
    fs_mpool_t mp;
    uintptr_t lo, hi;
    unsigned i, in = 0;

    /* 16 elements of 8 KiB: the free list writes one page of each */
    cr_assert_eq(fs_mpool_init(&mp, "t", 8192, 16, 0, NULL), FS_OK);
    cr_assert_eq(fs_mpool_reserve(&mp), FS_OK);
    lo = (uintptr_t)mp.chunks & ~(uintptr_t)(page - 1);
    hi = ((uintptr_t)mp.chunks + 16 * 8192 + 64 + page - 1) & ~(uintptr_t)(page - 1);
    cr_assert_leq((hi - lo) / page, sizeof(vec));
    cr_assert_eq(mincore((void *)lo, hi - lo, vec), 0);
    for (i = 0; i < (hi - lo) / page; ++i) {
        in += vec[i] & 1;
    }
    cr_expect_eq(in, (hi - lo) / page, "%u of %zu pages mapped", in, (size_t)((hi - lo) / page));
    fs_mpool_cleanup(&mp);
}

Test(mpool, bounded_pool_says_no)
{
    fs_mpool_t mp;
    void *a, *b, *c;

    fs_mpool_init(&mp, "t", 8, 4, 2, NULL);
    a = fs_mpool_get(&mp);
    b = fs_mpool_get(&mp);
    c = fs_mpool_get(&mp);
    cr_expect_not_null(a);
    cr_expect_not_null(b);
    cr_expect_null(c, "exhaustion is an error, not an abort");
    fs_mpool_put(&mp, a);
    cr_expect_eq(fs_mpool_get(&mp), a);
    fs_mpool_cleanup(&mp);
}

Test(params, defaults_parse)
{
    fs_params_t p;

    fs_params_defaults(&p);
    cr_expect_eq(p.verbose, 1);
    cr_expect_eq(p.ucx_keepalive_ms, 100);
    cr_expect_eq(p.self_eager_limit, 16384);
    cr_expect_str_eq(p.inject, "");
}

Test(params, set_and_reject)
{
    fs_params_t p;

    fs_params_defaults(&p);
    cr_expect_eq(fs_params_set(&p, "self_eager_limit", "64k"), 0);
    cr_expect_eq(p.self_eager_limit, 65536);
    cr_expect_eq(fs_params_set(&p, "verbose", "3"), 0);
    cr_expect_eq(p.verbose, 3);
    cr_expect_eq(fs_params_set(&p, "verbose", "lots"), -1);
    cr_expect_eq(p.verbose, 3, "a rejected value leaves the old one");
    cr_expect_eq(fs_params_set(&p, "no_such_param", "1"), -1);
    cr_expect_eq(fs_params_set(&p, "self_eager_limit", "12q"), -1);
}

Test(params, every_row_has_doc_default_and_unique_name)
{
    size_t i, j;

    for (i = 0; i < fs_param_count; ++i) {
        cr_expect_not_null(fs_param_table[i].defval);
        cr_expect_gt(strlen(fs_param_table[i].doc), 10, "%s needs a doc",
                     fs_param_table[i].name);
        for (j = i + 1; j < fs_param_count; ++j) {
            cr_expect_str_neq(fs_param_table[i].name, fs_param_table[j].name);
        }
    }
}

/* docs/PARAMETERS.md must list every parameter with its default. */
Test(params, documented_in_docs)
{
    FILE *f = fopen("docs/PARAMETERS.md", "r");
    char *text;
    long len;
    size_t i;

    cr_assert_not_null(f, "docs/PARAMETERS.md missing (run from the source tree)");
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = calloc(1, (size_t)len + 1);
    cr_assert_eq(fread(text, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    for (i = 0; i < fs_param_count; ++i) {
        char row[256];
        snprintf(row, sizeof(row), "| `pml_failstop_%s` | `%s` |",
                 fs_param_table[i].name, fs_param_table[i].defval);
        cr_expect_not_null(strstr(text, row), "docs/PARAMETERS.md lacks the row %s", row);
    }
    free(text);
}
