/* Intrusive doubly linked list (circular, with a sentinel head). */
#ifndef FS_LIST_H
#define FS_LIST_H

#include <stddef.h>

typedef struct fs_list {
    struct fs_list *next;
    struct fs_list *prev;
} fs_list_t;

#define fs_container_of(_ptr, _type, _member) \
    ((_type *)((char *)(_ptr) - offsetof(_type, _member)))

static inline void fs_list_init(fs_list_t *head)
{
    head->next = head;
    head->prev = head;
}

static inline int fs_list_is_empty(const fs_list_t *head)
{
    return head->next == head;
}

static inline void fs_list_insert_before(fs_list_t *pos, fs_list_t *elem)
{
    elem->next       = pos;
    elem->prev       = pos->prev;
    pos->prev->next  = elem;
    pos->prev        = elem;
}

static inline void fs_list_push_tail(fs_list_t *head, fs_list_t *elem)
{
    fs_list_insert_before(head, elem);
}

static inline void fs_list_push_head(fs_list_t *head, fs_list_t *elem)
{
    fs_list_insert_before(head->next, elem);
}

/* Unlinks elem and points it at itself, so a second removal is harmless and
 * fs_list_is_linked() can tell whether an element is on some list. */
static inline void fs_list_remove(fs_list_t *elem)
{
    elem->prev->next = elem->next;
    elem->next->prev = elem->prev;
    elem->next       = elem;
    elem->prev       = elem;
}

static inline int fs_list_is_linked(const fs_list_t *elem)
{
    return elem->next != elem;
}

static inline fs_list_t *fs_list_pop_head(fs_list_t *head)
{
    fs_list_t *elem = head->next;

    if (elem == head) {
        return NULL;
    }
    fs_list_remove(elem);
    return elem;
}

/* Moves every element of src to the tail of dst, leaving src empty. */
static inline void fs_list_splice_tail(fs_list_t *dst, fs_list_t *src)
{
    if (fs_list_is_empty(src)) {
        return;
    }
    src->next->prev  = dst->prev;
    dst->prev->next  = src->next;
    src->prev->next  = dst;
    dst->prev        = src->prev;
    fs_list_init(src);
}

static inline size_t fs_list_length(const fs_list_t *head)
{
    size_t n = 0;
    const fs_list_t *e;

    for (e = head->next; e != head; e = e->next) {
        ++n;
    }
    return n;
}

#endif
