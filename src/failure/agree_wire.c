/* Agreement messages: encoding and checked decoding.  A set of members goes
 * as runs of consecutive members, or as a raw bitmap when that is shorter:
 * a failure-free subtree is one run, each hole adds one. */
#include "failure/agree_int.h"

#include <string.h>

#define FS_AGREE_SET_RAW 0x80000000u
#define FS_AGREE_SETS_RX 6          /* C, A, FV, NAK, the carried F_D, spare */

static size_t fs_agree_set_max(uint32_t n)
{
    return sizeof(uint32_t) + fs_bm_words(n) * sizeof(uint64_t);
}

size_t fs_agree_wire_max(uint32_t n)
{
    size_t prop = FS_AGREE_MAX_WORDS * sizeof(uint64_t) + 2 * sizeof(uint32_t) +
                  fs_agree_set_max(n);

    return sizeof(fs_agree_hdr_t) + FS_AGREE_MAX_WORDS * sizeof(uint64_t) +
           4 * fs_agree_set_max(n) + prop;
}

size_t fs_agree_rx_words(uint32_t n)
{
    return FS_AGREE_SETS_RX * fs_bm_words(n);
}

/* First member at or after i that is not in b, or n. */
static uint32_t fs_agree_next_clear(const uint64_t *b, uint32_t n, uint32_t i)
{
    while ((i < n) && fs_bm_test(b, i)) {
        if (((i % 64) == 0) && (b[i / 64] == ~(uint64_t)0))
            i += 64;
        else
            i++;
    }
    return i < n ? i : n;
}

static size_t fs_agree_put(uint8_t *out, size_t off, const void *p, size_t len)
{
    memcpy(out + off, p, len);
    return off + len;
}

static size_t fs_agree_put_set(uint8_t *out, size_t off, const uint64_t *b, uint32_t n)
{
    size_t raw = fs_bm_words(n) * sizeof(uint64_t), tag_off = off;
    uint32_t runs = 0, i = fs_bm_next(b, n, 0), tag;

    off += sizeof(uint32_t);
    while (i < n) {
        uint32_t end = fs_agree_next_clear(b, n, i), run[2] = { i, end - i };

        if ((size_t)(runs + 1) * sizeof(run) > raw) {
            tag = FS_AGREE_SET_RAW;
            off = fs_agree_put(out, tag_off, &tag, sizeof(tag));
            return fs_agree_put(out, off, b, raw);
        }
        off = fs_agree_put(out, off, run, sizeof(run));
        runs++;
        i = fs_bm_next(b, n, end);
    }
    fs_agree_put(out, tag_off, &runs, sizeof(runs));
    return off;
}

static size_t fs_agree_put_prop(uint8_t *out, size_t off, uint32_t nv,
                                const fs_agree_prop_t *p, uint32_t n)
{
    off = fs_agree_put(out, off, p->v, nv * sizeof(uint64_t));
    off = fs_agree_put(out, off, &p->unacked, sizeof(p->unacked));
    off = fs_agree_put(out, off, &p->lo, sizeof(p->lo));
    return fs_agree_put_set(out, off, p->fd, n);
}

static void fs_agree_put_hdr(const fs_agree_t *a, const fs_agree_rec_t *r,
                             fs_agree_hdr_t *h, uint8_t type)
{
    uint32_t w;

    memset(h, 0, sizeof(*h));
    h->type = type;
    h->nv   = (uint8_t)r->nv;
    for (w = 0; w < r->nv; w++)
        h->ops |= (uint8_t)(r->op[w] << (2 * w));
    h->seq  = r->seq;
    h->from = a->cfg.me;
}

size_t fs_agree_wire_up(fs_agree_t *a, const fs_agree_rec_t *r, uint8_t *out)
{
    const fs_agree_state_t *s = &r->m;
    uint32_t n = a->cfg.n;
    fs_agree_hdr_t h;
    size_t off;

    fs_agree_put_hdr(a, r, &h, FS_AGREE_UP);
    h.ballot     = s->ballot;
    h.acc_ballot = s->acc_ballot;
    h.lo         = s->lo;
    off = fs_agree_put(out, 0, &h, sizeof(h));
    off = fs_agree_put(out, off, s->v, r->nv * sizeof(uint64_t));
    off = fs_agree_put_set(out, off, s->c, n);
    off = fs_agree_put_set(out, off, s->acc, n);
    off = fs_agree_put_set(out, off, s->fv, n);
    off = fs_agree_put_set(out, off, s->nak, n);
    if (s->acc_ballot != FS_AGREE_NONE)
        off = fs_agree_put_prop(out, off, r->nv, &s->accp, n);
    return off;
}

size_t fs_agree_wire_prop(fs_agree_t *a, const fs_agree_rec_t *r, uint8_t type,
                          uint32_t ballot, const fs_agree_prop_t *p, uint8_t *out)
{
    fs_agree_hdr_t h;
    size_t off;

    fs_agree_put_hdr(a, r, &h, type);
    h.ballot     = ballot;
    h.acc_ballot = FS_AGREE_NONE;
    off = fs_agree_put(out, 0, &h, sizeof(h));
    return fs_agree_put_prop(out, off, r->nv, p, a->cfg.n);
}

/* ---- decoding: every length and member index is checked ---------------- */

typedef struct fs_agree_rd {
    const uint8_t *p;
    size_t         len, off;
} fs_agree_rd_t;

static int fs_agree_get(fs_agree_rd_t *rd, void *dst, size_t len)
{
    if (rd->len - rd->off < len)
        return -1;
    memcpy(dst, rd->p + rd->off, len);
    rd->off += len;
    return 0;
}

static int fs_agree_get_set(fs_agree_rd_t *rd, uint64_t *b, uint32_t n)
{
    uint32_t tag, k, i;

    fs_bm_zero(b, n);
    if (fs_agree_get(rd, &tag, sizeof(tag)) != 0)
        return -1;
    if (tag == FS_AGREE_SET_RAW) {
        if (fs_agree_get(rd, b, fs_bm_words(n) * sizeof(uint64_t)) != 0)
            return -1;
        return ((n % 64) && (b[n / 64] >> (n % 64))) ? -1 : 0;  /* bits past n */
    }
    if (tag > n)
        return -1;
    for (k = 0; k < tag; k++) {
        uint32_t run[2];

        if ((fs_agree_get(rd, run, sizeof(run)) != 0) || (run[0] >= n) ||
            (run[1] == 0) || (run[1] > n - run[0]))
            return -1;
        for (i = run[0]; i < run[0] + run[1]; i++)
            fs_bm_set(b, i);
    }
    return 0;
}

static int fs_agree_get_prop(fs_agree_rd_t *rd, uint32_t nv, fs_agree_prop_t *p,
                             uint64_t *fd, uint32_t n)
{
    p->fd = fd;
    return ((fs_agree_get(rd, p->v, nv * sizeof(uint64_t)) != 0) ||
            (fs_agree_get(rd, &p->unacked, sizeof(p->unacked)) != 0) ||
            (fs_agree_get(rd, &p->lo, sizeof(p->lo)) != 0) ||
            (p->unacked > 1) || (fs_agree_get_set(rd, fd, n) != 0)) ? -1 : 0;
}

static int fs_agree_get_up(fs_agree_rd_t *rd, fs_agree_in_t *in, uint64_t *scratch,
                           uint32_t n)
{
    fs_agree_state_t *s = &in->st;
    size_t wd = fs_bm_words(n);

    memset(s, 0, sizeof(*s));
    s->ballot     = in->h.ballot;
    s->acc_ballot = in->h.acc_ballot;
    s->lo         = in->h.lo;
    s->c   = scratch;
    s->acc = scratch + wd;
    s->fv  = scratch + 2 * wd;
    s->nak = scratch + 3 * wd;
    if ((fs_agree_get(rd, s->v, in->h.nv * sizeof(uint64_t)) != 0) ||
        (fs_agree_get_set(rd, s->c, n) != 0) || (fs_agree_get_set(rd, s->acc, n) != 0) ||
        (fs_agree_get_set(rd, s->fv, n) != 0) || (fs_agree_get_set(rd, s->nak, n) != 0))
        return -1;
    if (s->acc_ballot == FS_AGREE_NONE)
        return 0;
    return ((s->acc_ballot >= n) ||
            (fs_agree_get_prop(rd, in->h.nv, &s->accp, scratch + 4 * wd, n) != 0)) ? -1 : 0;
}

fs_status_t fs_agree_wire_parse(const fs_agree_t *a, const void *msg, size_t len,
                                uint64_t *scratch, fs_agree_in_t *in_p)
{
    fs_agree_rd_t rd = { msg, len, 0 };
    uint32_t n = a->cfg.n;
    int bad;

    if (fs_agree_get(&rd, &in_p->h, sizeof(in_p->h)) != 0)
        return FS_ERR_PROTO;
    if ((in_p->h.type < FS_AGREE_UP) || (in_p->h.type > FS_AGREE_DECIDE) ||
        (in_p->h.nv > FS_AGREE_MAX_WORDS) || (in_p->h.from >= n) ||
        (in_p->h.from == a->cfg.me) || (in_p->h.ballot >= n) || (in_p->h.seq == 0))
        return FS_ERR_PROTO;
    if (in_p->h.type == FS_AGREE_UP)
        bad = fs_agree_get_up(&rd, in_p, scratch, n);
    else
        bad = fs_agree_get_prop(&rd, in_p->h.nv, &in_p->prop, scratch, n);
    return (bad || (rd.off != len)) ? FS_ERR_PROTO : FS_OK;
}
