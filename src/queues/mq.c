#include "queues/mq.h"

void fs_mq_init(fs_mq_t *mq)
{
    fs_list_init(&mq->wild_posted);
    fs_list_init(&mq->unexpected_all);
    mq->next_stamp     = 0;
    mq->num_unexpected = 0;
}

void fs_mq_bin_init(fs_mq_bin_t *bin)
{
    fs_list_init(&bin->posted);
    fs_list_init(&bin->unexpected);
}

void fs_mq_post(fs_mq_t *mq, fs_mq_bin_t *bin, fs_mq_recv_t *recv)
{
    recv->stamp = mq->next_stamp++;
    fs_list_push_tail((bin == NULL) ? &mq->wild_posted : &bin->posted,
                      &recv->elem);
}

static fs_mq_recv_t *fs_mq_first_posted(fs_list_t *list, int32_t tag)
{
    fs_list_t *e;

    for (e = list->next; e != list; e = e->next) {
        fs_mq_recv_t *recv = fs_container_of(e, fs_mq_recv_t, elem);
        if (fs_mq_tag_matches(recv->tag, tag)) {
            return recv;
        }
    }
    return NULL;
}

/* The general case of fs_mq_match_posted (mq.h). */
fs_mq_recv_t *fs_mq_match_posted_all(fs_mq_t *mq, fs_mq_bin_t *bin, int32_t tag)
{
    fs_mq_recv_t *specific = fs_mq_first_posted(&bin->posted, tag);
    fs_mq_recv_t *wild     = NULL;
    fs_mq_recv_t *match;

    if (!fs_list_is_empty(&mq->wild_posted)) {
        wild = fs_mq_first_posted(&mq->wild_posted, tag);
    }
    if (wild == NULL) {
        match = specific;
    } else if (specific == NULL) {
        match = wild;
    } else {
        match = (wild->stamp < specific->stamp) ? wild : specific;
    }
    if (match != NULL) {
        fs_list_remove(&match->elem);
    }
    return match;
}

void fs_mq_add_unexpected(fs_mq_t *mq, fs_mq_bin_t *bin, fs_mq_msg_t *msg)
{
    fs_list_push_tail(&bin->unexpected, &msg->src_elem);
    fs_list_push_tail(&mq->unexpected_all, &msg->all_elem);
    ++mq->num_unexpected;
}

fs_mq_msg_t *fs_mq_find_unexpected(fs_mq_t *mq, fs_mq_bin_t *bin, int32_t tag)
{
    fs_list_t *e;

    if (bin != NULL) {
        for (e = bin->unexpected.next; e != &bin->unexpected; e = e->next) {
            fs_mq_msg_t *msg = fs_container_of(e, fs_mq_msg_t, src_elem);
            if (fs_mq_tag_matches(tag, msg->tag)) {
                return msg;
            }
        }
        return NULL;
    }
    for (e = mq->unexpected_all.next; e != &mq->unexpected_all; e = e->next) {
        fs_mq_msg_t *msg = fs_container_of(e, fs_mq_msg_t, all_elem);
        if (fs_mq_tag_matches(tag, msg->tag)) {
            return msg;
        }
    }
    return NULL;
}

void fs_mq_remove_unexpected(fs_mq_t *mq, fs_mq_msg_t *msg)
{
    fs_list_remove(&msg->src_elem);
    fs_list_remove(&msg->all_elem);
    --mq->num_unexpected;
}

int fs_mq_cancel(fs_mq_t *mq, fs_mq_recv_t *recv)
{
    (void)mq;
    if (!fs_list_is_linked(&recv->elem)) {
        return 0;
    }
    fs_list_remove(&recv->elem);
    return 1;
}
