#include "endpoint/seq.h"

void fs_seq_rx_init(fs_seq_rx_t *rx)
{
    rx->expected   = 0;
    fs_list_init(&rx->parked);
    rx->num_parked = 0;
}

void fs_seq_park(fs_seq_rx_t *rx, fs_seq_item_t *item)
{
    uint16_t distance = (uint16_t)(item->seq - rx->expected);
    fs_list_t *e;

    /* parked lists are short: insertion sort by distance from expected */
    for (e = rx->parked.next; e != &rx->parked; e = e->next) {
        fs_seq_item_t *other = fs_container_of(e, fs_seq_item_t, elem);
        if ((uint16_t)(other->seq - rx->expected) > distance) {
            break;
        }
    }
    fs_list_insert_before(e, &item->elem);
    ++rx->num_parked;
}

fs_seq_item_t *fs_seq_next_ready(fs_seq_rx_t *rx)
{
    fs_seq_item_t *first;

    if (fs_list_is_empty(&rx->parked)) {
        return NULL;
    }
    first = fs_container_of(rx->parked.next, fs_seq_item_t, elem);
    if (first->seq != rx->expected) {
        return NULL;
    }
    fs_list_remove(&first->elem);
    --rx->num_parked;
    return first;
}

fs_seq_item_t *fs_seq_unpark_any(fs_seq_rx_t *rx)
{
    fs_list_t *e = fs_list_pop_head(&rx->parked);

    if (e == NULL) {
        return NULL;
    }
    --rx->num_parked;
    return fs_container_of(e, fs_seq_item_t, elem);
}
