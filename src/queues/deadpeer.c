#include "queues/deadpeer.h"
#include "queues/mq.h"

#include <stdlib.h>

void fs_dp_init(fs_dp_poison_t *poison)
{
    poison->any_tag  = 0;
    poison->count    = 0;
    poison->capacity = 0;
    poison->tags     = NULL;
}

void fs_dp_cleanup(fs_dp_poison_t *poison)
{
    free(poison->tags);
    fs_dp_init(poison);
}

static int fs_dp_has_tag(const fs_dp_poison_t *poison, int32_t tag)
{
    uint32_t i;

    for (i = 0; i < poison->count; ++i) {
        if (poison->tags[i] == tag) {
            return 1;
        }
    }
    return 0;
}

fs_status_t fs_dp_poison_tag(fs_dp_poison_t *poison, int32_t tag)
{
    int32_t *tags;

    if (tag == FS_ANY_TAG) {
        poison->any_tag = 1;
        return FS_OK;
    }
    if (fs_dp_has_tag(poison, tag)) {
        return FS_OK;
    }
    if (poison->count == poison->capacity) {
        uint32_t cap = poison->capacity ? 2 * poison->capacity : 8;
        tags = realloc(poison->tags, cap * sizeof(*tags));
        if (tags == NULL) {
            poison->any_tag = 1;
            return FS_ERR_NO_MEMORY;
        }
        poison->tags     = tags;
        poison->capacity = cap;
    }
    poison->tags[poison->count++] = tag;
    return FS_OK;
}

int fs_dp_blocks(const fs_dp_poison_t *poison, int32_t tag)
{
    if (fs_dp_is_empty(poison)) {
        return 0;
    }
    /* a wildcard receive could match any poisoned tag's messages; any
     * receive could match what a failed wildcard receive could */
    if (poison->any_tag || (tag == FS_ANY_TAG)) {
        return 1;
    }
    return fs_dp_has_tag(poison, tag);
}

int fs_dp_blocks_message(const fs_dp_poison_t *poison, int32_t msg_tag)
{
    if (fs_dp_is_empty(poison) || fs_mq_tag_is_coll(msg_tag)) {
        return 0;       /* collective traffic follows the collective rules */
    }
    return poison->any_tag || fs_dp_has_tag(poison, msg_tag);
}
