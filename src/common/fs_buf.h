/* Where the data of one message lives in user memory, and how to move it.
 * Contiguous buffers are plain (ptr, len); anything else goes through the
 * host's datatype engine (Open MPI's convertor) via fs_dt_ops_t. */
#ifndef FS_BUF_H
#define FS_BUF_H

#include <stddef.h>
#include <string.h>

typedef struct fs_dt_ops {
    /* Packs up to max bytes of the message starting at offset into dst;
     * returns the number of bytes packed. */
    size_t (*pack)(void *dt, size_t offset, void *dst, size_t max);
    /* Unpacks len bytes that belong at offset; returns bytes consumed. */
    size_t (*unpack)(void *dt, size_t offset, const void *src, size_t len);
} fs_dt_ops_t;

typedef struct fs_buf {
    void   *ptr;    /* contiguous data when dt == NULL */
    size_t  len;    /* bytes; for receives, the capacity */
    void   *dt;     /* non-NULL: opaque datatype state for fs_dt_ops_t */
} fs_buf_t;

static inline void fs_buf_set_contig(fs_buf_t *buf, void *ptr, size_t len)
{
    buf->ptr = ptr;
    buf->len = len;
    buf->dt  = NULL;
}

/* Copies len bytes of message data arriving at offset into buf, dropping
 * whatever lies beyond its capacity (truncation). */
static inline void fs_buf_unpack(const fs_dt_ops_t *ops, const fs_buf_t *buf,
                                 size_t offset, const void *src, size_t len)
{
    if (offset >= buf->len) {
        return;
    }
    if (len > buf->len - offset) {
        len = buf->len - offset;
    }
    if (buf->dt == NULL) {
        memcpy((char *)buf->ptr + offset, src, len);
    } else {
        ops->unpack(buf->dt, offset, src, len);
    }
}

/* Packs up to max bytes of buf starting at offset; returns bytes packed. */
static inline size_t fs_buf_pack(const fs_dt_ops_t *ops, const fs_buf_t *buf,
                                 size_t offset, void *dst, size_t max)
{
    size_t len;

    if (offset >= buf->len) {
        return 0;
    }
    len = buf->len - offset;
    if (len > max) {
        len = max;
    }
    if (buf->dt == NULL) {
        memcpy(dst, (const char *)buf->ptr + offset, len);
        return len;
    }
    return ops->pack(buf->dt, offset, dst, len);
}

#endif
