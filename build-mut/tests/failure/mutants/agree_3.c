/* Fault-tolerant uniform agreement: the protocol (agree.h says what, the
 * design and its proof are in docs/DESIGN.md "Agreement").
 *
 * Per instance and process: gather the subtree's contributions for the
 * current ballot (= coordinator) and pass them up; the coordinator proposes
 * the highest accepted proposal it gathered, or a fresh one; members accept
 * a proposal only of their current ballot and pass the acceptors up; the
 * coordinator decides when every member it does not know gone accepted, and
 * the decision floods the tree.  A view change moves the tree; everything
 * is re-sent towards the new one. */
#include "failure/agree_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- the tree over the live members, rooted at the coordinator ----------- */

static uint32_t fs_agree_member_at(const fs_agree_t *a, uint32_t pos)
{
    uint32_t x = fs_bm_next(a->live, a->cfg.n, 0);

    while ((pos-- > 0) && (x < a->cfg.n))
        x = fs_bm_next(a->live, a->cfg.n, x + 1);
    return x;
}

static uint32_t fs_agree_lowbit(uint32_t pos, uint32_t nlive)
{
    return pos ? (pos & (~pos + 1)) : nlive;
}

static uint32_t fs_agree_parent(const fs_agree_t *a)
{
    uint32_t pos = fs_bm_rank(a->live, a->cfg.me);

    if (pos == 0)
        return FS_AGREE_NONE;
    return a->cfg.star ? a->coord : fs_agree_member_at(a, pos & (pos - 1));
}

/* Every live member of this process's subtree (the whole tree at the
 * coordinator) is in set. */
static int fs_agree_covers(const fs_agree_t *a, const uint64_t *set)
{
    uint32_t n = a->cfg.n, nlive = fs_bm_count(a->live, n);
    uint32_t pos = fs_bm_rank(a->live, a->cfg.me), end, x, k = 0;

    end = (a->cfg.star && pos) ? pos + 1 : pos + fs_agree_lowbit(pos, nlive);
    for (x = a->cfg.me; (x < n) && (pos + k < end); x = fs_bm_next(a->live, n, x + 1), k++) {
        if (!fs_bm_test(set, x))
            return 0;
    }
    return 1;
}

static void fs_agree_send(fs_agree_t *a, uint32_t to, uint8_t type, size_t len)
{
    a->cnt.sent[type]++;
    (void)a->ops.send(a->arg, to, a->txbuf, len);
}

static void fs_agree_send_prop(fs_agree_t *a, const fs_agree_rec_t *r, uint32_t to,
                               uint8_t type, uint32_t ballot, const fs_agree_prop_t *p)
{
    fs_agree_send(a, to, type, fs_agree_wire_prop(a, r, type, ballot, p, a->txbuf));
}

/* Sends to every child in the current tree except 'except' and those in
 * skip (NULL: none). */
static void fs_agree_send_down(fs_agree_t *a, const fs_agree_rec_t *r, uint8_t type,
                               uint32_t ballot, const fs_agree_prop_t *p, uint32_t except,
                               const uint64_t *skip)
{
    uint32_t n = a->cfg.n, nlive = fs_bm_count(a->live, n);
    uint32_t pos = fs_bm_rank(a->live, a->cfg.me), step, to;
    size_t len = fs_agree_wire_prop(a, r, type, ballot, p, a->txbuf);

    if (a->cfg.star) {
        for (to = (pos == 0) ? fs_bm_next(a->live, n, 0) : n; to < n;
             to = fs_bm_next(a->live, n, to + 1)) {
            if ((to != a->cfg.me) && (to != except) && !(skip && fs_bm_test(skip, to)))
                fs_agree_send(a, to, type, len);
        }
        return;
    }
    for (step = 1; (step < fs_agree_lowbit(pos, nlive)) && (pos + step < nlive); step <<= 1) {
        to = fs_agree_member_at(a, pos + step);
        if ((to != except) && !(skip && fs_bm_test(skip, to)))
            fs_agree_send(a, to, type, len);
    }
}

/* ---- states and records --------------------------------------------------- */

static uint64_t fs_agree_identity(uint8_t op)
{
    return ((op == FS_AGREE_AND) || (op == FS_AGREE_MIN)) ? ~(uint64_t)0 : 0;
}

static uint64_t fs_agree_join(uint8_t op, uint64_t x, uint64_t y)
{
    switch (op) {
    case FS_AGREE_AND: return x & y;
    case FS_AGREE_OR:  return x | y;
    case FS_AGREE_MAX: return x > y ? x : y;
    default:           return x < y ? x : y;
    }
}

static void fs_agree_prop_copy(fs_agree_prop_t *dst, const fs_agree_prop_t *src, uint32_t n)
{
    memcpy(dst->v, src->v, sizeof(dst->v));
    dst->unacked = src->unacked;
    dst->lo      = src->lo;
    fs_bm_copy(dst->fd, src->fd, n);
}

static void fs_agree_state_clear(const fs_agree_rec_t *r, fs_agree_state_t *s,
                                 uint32_t ballot, uint32_t n)
{
    uint32_t w;

    s->ballot     = ballot;
    s->lo         = UINT32_MAX;
    s->acc_ballot = FS_AGREE_NONE;
    for (w = 0; w < FS_AGREE_MAX_WORDS; w++)
        s->v[w] = fs_agree_identity(r->op[w]);
    fs_bm_zero(s->c, n);
    fs_bm_zero(s->acc, n);
    fs_bm_zero(s->fv, n);
    fs_bm_zero(s->nak, n);
}

/* Five bitmaps from one block: c, acc, fv, nak, accp.fd. */
static void fs_agree_state_bind(fs_agree_state_t *s, uint64_t *block, size_t wd)
{
    s->c       = block;
    s->acc     = block + wd;
    s->fv      = block + 2 * wd;
    s->nak     = block + 3 * wd;
    s->accp.fd = block + 4 * wd;
}

/* dst joins src (same ballot); returns whether dst changed. */
static int fs_agree_merge(const fs_agree_rec_t *r, fs_agree_state_t *dst,
                          const fs_agree_state_t *src, uint32_t n)
{
    int grew = 0;
    uint32_t w;

    for (w = 0; w < r->nv; w++) {
        uint64_t j = fs_agree_join(r->op[w], dst->v[w], src->v[w]);

        grew |= (j != dst->v[w]);
        dst->v[w] = j;
    }
    if (src->lo < dst->lo) {
        dst->lo = src->lo;
        grew = 1;
    }
    grew |= fs_bm_or(dst->c, src->c, n);
    grew |= fs_bm_or(dst->acc, src->acc, n);
    grew |= fs_bm_or(dst->fv, src->fv, n);
    grew |= fs_bm_or(dst->nak, src->nak, n);
    if ((src->acc_ballot != FS_AGREE_NONE) &&
        ((dst->acc_ballot == FS_AGREE_NONE) || (src->acc_ballot < dst->acc_ballot))) {
        dst->acc_ballot = src->acc_ballot;
        fs_agree_prop_copy(&dst->accp, &src->accp, n);
        grew = 1;
    }
    return grew;
}

/* This process's own contribution joined into s. */
static int fs_agree_merge_own(const fs_agree_t *a, const fs_agree_rec_t *r,
                              fs_agree_state_t *s)
{
    fs_agree_state_t own = { .ballot = s->ballot, .lo = r->own_lo,
                             .acc_ballot = r->my_ballot };
    uint64_t *c = a->own, *acc = a->own + fs_bm_words(a->cfg.n);

    fs_bm_zero(c, a->cfg.n);
    fs_bm_zero(acc, a->cfg.n);
    fs_bm_set(c, a->cfg.me);
    if (r->my_ballot == s->ballot)
        fs_bm_set(acc, a->cfg.me);
    memcpy(own.v, r->own_v, sizeof(own.v));
    own.c = c;
    own.acc = acc;
    own.fv = r->own_fv;
    own.nak = r->own_nak;
    own.accp = r->mine;
    return fs_agree_merge(r, s, &own, a->cfg.n);
}

static fs_agree_rec_t *fs_agree_rec_find(fs_agree_t *a, uint32_t seq)
{
    fs_agree_rec_t *r;

    for (r = a->recs; r != NULL; r = r->next) {
        if (r->seq == seq)
            return r;
    }
    return NULL;
}

static fs_agree_rec_t *fs_agree_rec_new(fs_agree_t *a, uint32_t seq)
{
    size_t wd = fs_bm_words(a->cfg.n);
    fs_agree_rec_t *r = calloc(1, sizeof(*r) + 9 * wd * sizeof(uint64_t));
    uint64_t *block;

    if (r == NULL)
        return NULL;
    block = (uint64_t *)(r + 1);
    r->seq        = seq;
    r->my_ballot  = FS_AGREE_NONE;
    r->own_fv     = block;
    r->own_nak    = block + wd;
    r->mine.fd    = block + 2 * wd;
    r->decision.fd = block + 3 * wd;
    fs_agree_state_bind(&r->m, block + 4 * wd, wd);
    fs_agree_state_clear(r, &r->m, a->coord, a->cfg.n);
    r->parent     = FS_AGREE_NONE;
    r->next       = a->recs;
    a->recs       = r;
    a->cnt.records++;
    return r;
}

static void fs_agree_buf_free(fs_agree_rec_t *r, uint32_t upto)
{
    fs_agree_state_t **pp = &r->buf;

    while (*pp != NULL) {
        fs_agree_state_t *s = *pp;

        if (s->ballot <= upto) {
            *pp = s->next;
            free(s);
        } else {
            pp = &s->next;
        }
    }
}

static void fs_agree_rec_free(fs_agree_t *a, fs_agree_rec_t *r)
{
    fs_agree_rec_t **pp = &a->recs;

    while (*pp != r)
        pp = &(*pp)->next;
    *pp = r->next;
    fs_agree_buf_free(r, UINT32_MAX);
    free(r);
    a->cnt.records--;
}


/* ---- the protocol ------------------------------------------------------------ */

static void fs_agree_step(fs_agree_t *a, fs_agree_rec_t *r);

static void fs_agree_reply(fs_agree_t *a, const fs_agree_rec_t *r, uint32_t to)
{
    fs_agree_send_prop(a, r, to, FS_AGREE_DECIDE, a->coord, &r->decision);
}

static void fs_agree_deliver(fs_agree_t *a, fs_agree_rec_t *r)
{
    fs_agree_result_t res = { .seq = r->seq, .nv = r->nv, .failed = r->decision.fd,
                              .unacked = (int)r->decision.unacked };
    fs_agree_rec_t *d;

    if (!r->started || r->delivered || (r->status != FS_AGREE_REC_DECIDED))
        return;
    r->delivered = 1;
    while (((d = fs_agree_rec_find(a, a->done_upto + 1)) != NULL) && d->delivered)
        a->done_upto++;
    /* lo is at most every contributor's done_upto; ours bounds it against a
     * corrupt value, which must never make live instances look stale */
    if ((r->decision.lo > a->gc_lo) && (r->decision.lo != UINT32_MAX))
        a->gc_lo = r->decision.lo < a->done_upto ? r->decision.lo : a->done_upto;
    memcpy(res.v, r->decision.v, sizeof(res.v));
    res.nfailed = fs_bm_count(r->decision.fd, a->cfg.n);
    a->ops.decided(a->arg, &res);
}

static void fs_agree_decide(fs_agree_t *a, fs_agree_rec_t *r, const fs_agree_prop_t *p,
                            uint32_t from)
{
    uint32_t parent = fs_agree_parent(a);

    if (p != &r->decision)
        fs_agree_prop_copy(&r->decision, p, a->cfg.n);
    r->status = FS_AGREE_REC_DECIDED;
    r->parent = parent;
    fs_agree_buf_free(r, UINT32_MAX);
    fs_agree_send_down(a, r, FS_AGREE_DECIDE, a->coord, &r->decision, from, NULL);
    if ((parent != FS_AGREE_NONE) && (parent != from))
        fs_agree_reply(a, r, parent);
    fs_agree_deliver(a, r);
}

/* The coordinator's one proposal for its ballot: the highest accepted
 * proposal it gathered (one may have been decided), or a fresh one. */
static void fs_agree_propose(fs_agree_t *a, fs_agree_rec_t *r)
{
    fs_agree_state_t *m = &r->m;
    fs_agree_prop_t *p = &r->mine;
    uint32_t n = a->cfg.n;
    uint64_t hit = 0;
    size_t w;

    if (m->acc_ballot != FS_AGREE_NONE) {
        fs_agree_prop_copy(p, &m->accp, n);
    } else {
        memcpy(p->v, m->v, sizeof(p->v));
        p->lo = m->lo;
        /* F_D: the members that did not contribute (failed, not left), and
         * every failure any contributor or this coordinator knew */
        for (w = 0; w < fs_bm_words(n); w++) {
            uint64_t left = a->gone[w] & ~a->failed[w];
            uint64_t in_g = ((w + 1) * 64 <= n) ? ~(uint64_t)0
                            : (((uint64_t)1 << (n % 64)) - 1);

            p->fd[w] = ((~m->c[w] & ~left) | m->fv[w] | a->failed[w]) & in_g;
            hit |= p->fd[w] & m->nak[w];
        }
        p->unacked = (hit != 0);
    }
    r->my_ballot = a->cfg.me;
    fs_bm_set(m->acc, a->cfg.me);
    fs_agree_send_down(a, r, FS_AGREE_PROPOSE, a->cfg.me, p, FS_AGREE_NONE, NULL);
}

/* Acts on what the predicates allow now. */
static void fs_agree_step(fs_agree_t *a, fs_agree_rec_t *r)
{
    int accepted;

    if ((r->status == FS_AGREE_REC_DECIDED) || !r->started ||
        fs_bm_test(a->gone, a->cfg.me))
        return;
    if (a->coord == a->cfg.me) {
        if ((r->my_ballot != a->cfg.me) && fs_agree_covers(a, r->m.c))
            fs_agree_propose(a, r);
        if ((r->my_ballot == a->cfg.me) && fs_agree_covers(a, r->m.acc))
            fs_agree_decide(a, r, &r->mine, FS_AGREE_NONE);
        return;
    }
    accepted = (r->my_ballot == r->m.ballot);
    if (!r->sent && fs_agree_covers(a, accepted ? r->m.acc : r->m.c) &&
        (r->parent != FS_AGREE_NONE)) {
        fs_agree_send(a, r->parent, FS_AGREE_UP, fs_agree_wire_up(a, r, a->txbuf));
        r->sent = 1;
    }
}

static fs_status_t fs_agree_buffer(fs_agree_t *a, fs_agree_rec_t *r,
                                   const fs_agree_state_t *st)
{
    size_t wd = fs_bm_words(a->cfg.n);
    fs_agree_state_t *s;

    for (s = r->buf; (s != NULL) && (s->ballot != st->ballot); s = s->next)
        ;
    if (s == NULL) {
        s = calloc(1, sizeof(*s) + 5 * wd * sizeof(uint64_t));
        if (s == NULL)
            return FS_ERR_NO_MEMORY;
        fs_agree_state_bind(s, (uint64_t *)(s + 1), wd);
        fs_agree_state_clear(r, s, st->ballot, a->cfg.n);
        s->next = r->buf;
        r->buf  = s;
    }
    fs_agree_merge(r, s, st, a->cfg.n);
    return FS_OK;
}

static fs_status_t fs_agree_on_up(fs_agree_t *a, fs_agree_rec_t *r, fs_agree_in_t *in)
{
    uint32_t b = in->h.ballot, from = in->h.from;

    if (r->status == FS_AGREE_REC_DECIDED) {
        fs_agree_reply(a, r, from);
        return FS_OK;
    }
    if (b < a->coord) {
        a->cnt.dropped_stale++;     /* for a coordinator we know gone */
        return FS_OK;
    }
    if (b > a->coord)               /* we are behind: its sender will not re-send */
        return fs_agree_buffer(a, r, &in->st);
    if (fs_agree_merge(r, &r->m, &in->st, a->cfg.n))
        r->sent = 0;
    /* an orphan re-gathering under a node that has accepted gets the proposal */
    if ((r->my_ballot == b) && !fs_bm_test(r->m.acc, from))
        fs_agree_send_prop(a, r, from, FS_AGREE_PROPOSE, b, &r->mine);
    fs_agree_step(a, r);
    return FS_OK;
}

static void fs_agree_on_propose(fs_agree_t *a, fs_agree_rec_t *r, fs_agree_in_t *in)
{
    uint32_t b = in->h.ballot;

    if (r->status == FS_AGREE_REC_DECIDED) {
        fs_agree_reply(a, r, in->h.from);
        return;
    }
    /* the promise: only the current coordinator's proposal, and only once
     * this process contributed (its state for that ballot is on the way) */
    if ((b != a->coord) || !r->started || (r->my_ballot == b)) {
        a->cnt.dropped_stale += (b != a->coord);
        return;
    }
    fs_agree_prop_copy(&r->mine, &in->prop, a->cfg.n);
    r->my_ballot = b;
    fs_bm_set(r->m.acc, a->cfg.me);
    r->sent = 0;
    fs_agree_send_down(a, r, FS_AGREE_PROPOSE, b, &r->mine, in->h.from, NULL);
    fs_agree_step(a, r);
}

/* Decided records at or below the watermark: no member that contributed to
 * a later decision can still need them (docs/DESIGN.md "Agreement"). */
static void fs_agree_gc(fs_agree_t *a)
{
    fs_agree_rec_t *r, *next;

    for (r = a->recs; r != NULL; r = next) {
        next = r->next;
        if ((r->seq <= a->gc_lo) && (r->status == FS_AGREE_REC_DECIDED))
            fs_agree_rec_free(a, r);
    }
}

static fs_agree_rec_t *fs_agree_rec_get(fs_agree_t *a, uint32_t seq, uint32_t nv,
                                        const uint8_t *op, fs_status_t *status_p)
{
    fs_agree_rec_t *r = fs_agree_rec_find(a, seq);

    *status_p = FS_OK;
    if (r != NULL) {
        if ((r->nv != nv) || (memcmp(r->op, op, nv) != 0))
            *status_p = FS_ERR_PROTO;   /* members called different operations */
        return r;
    }
    r = fs_agree_rec_new(a, seq);
    if (r == NULL) {
        *status_p = FS_ERR_NO_MEMORY;
        return NULL;
    }
    r->nv = nv;
    memcpy(r->op, op, nv);
    fs_agree_state_clear(r, &r->m, a->coord, a->cfg.n);
    r->parent = fs_agree_parent(a);
    return r;
}

fs_status_t fs_agree_recv(fs_agree_t *a, const void *msg, size_t len)
{
    fs_agree_in_t in;
    fs_agree_rec_t *r;
    uint8_t op[FS_AGREE_MAX_WORDS] = { 0 };
    fs_status_t status;
    uint32_t w;

    status = fs_agree_wire_parse(a, msg, len, a->rx, &in);
    if (status != FS_OK)
        return status;
    if (fs_bm_test(a->failed, in.h.from) || fs_bm_test(a->gone, a->cfg.me) ||
        (in.h.seq <= a->gc_lo)) {
        a->cnt.dropped_stale++;     /* fenced sender, or an instance long decided */
        return FS_OK;
    }
    if (in.h.seq > a->next_seq + FS_AGREE_AHEAD)
        return FS_ERR_PROTO;
    for (w = 0; w < in.h.nv; w++)
        op[w] = (in.h.ops >> (2 * w)) & 3;
    r = fs_agree_rec_get(a, in.h.seq, in.h.nv, op, &status);
    if (status != FS_OK)
        return status;
    switch (in.h.type) {
    case FS_AGREE_UP:
        status = fs_agree_on_up(a, r, &in);
        break;
    case FS_AGREE_PROPOSE:
        fs_agree_on_propose(a, r, &in);
        break;
    default:
        if (r->status != FS_AGREE_REC_DECIDED)
            fs_agree_decide(a, r, &in.prop, in.h.from);
        break;
    }
    fs_agree_gc(a);
    return status;
}

fs_status_t fs_agree_start(fs_agree_t *a, const fs_agree_input_t *in, uint32_t *seq_p)
{
    uint32_t n = a->cfg.n, w;
    fs_status_t status;
    fs_agree_rec_t *r;

    if (in->nv > FS_AGREE_MAX_WORDS)
        return FS_ERR_INVALID;
    for (w = 0; w < in->nv; w++) {
        if (in->op[w] > FS_AGREE_MIN)
            return FS_ERR_INVALID;
    }
    r = fs_agree_rec_get(a, a->next_seq + 1, in->nv, in->op, &status);
    if (status != FS_OK)
        return (status == FS_ERR_PROTO) ? FS_ERR_INVALID : status;
    *seq_p = ++a->next_seq;
    for (w = 0; w < FS_AGREE_MAX_WORDS; w++)
        r->own_v[w] = (w < in->nv) ? in->v[w] : fs_agree_identity(r->op[w]);
    r->own_lo = a->done_upto;
    fs_bm_copy(r->own_fv, a->failed, n);
    for (w = 0; w < fs_bm_words(n); w++)
        r->own_nak[w] = in->acked ? ~in->acked[w] : ~(uint64_t)0;
    if (n % 64)
        r->own_nak[n / 64] &= ((uint64_t)1 << (n % 64)) - 1;
    r->started = 1;
    if (r->status == FS_AGREE_REC_DECIDED) {
        fs_agree_deliver(a, r);
    } else {
        if (fs_agree_merge_own(a, r, &r->m))
            r->sent = 0;
        fs_agree_step(a, r);
    }
    fs_agree_gc(a);
    return FS_OK;
}

/* The tree moved: re-send towards the new one (docs/DESIGN.md "Agreement"). */
static void fs_agree_on_view(fs_agree_t *a, fs_agree_rec_t *r, uint32_t old_coord)
{
    uint32_t parent = fs_agree_parent(a);
    fs_agree_state_t *s;

    if (r->status == FS_AGREE_REC_DECIDED) {
        /* the new parent may be waiting for our state, new children for
         * the decision their dead parent did not pass on */
        if (((a->coord != old_coord) || (parent != r->parent)) && (parent != FS_AGREE_NONE))
            fs_agree_reply(a, r, parent);
        fs_agree_send_down(a, r, FS_AGREE_DECIDE, a->coord, &r->decision, FS_AGREE_NONE,
                           NULL);
        r->parent = parent;
        return;
    }
    if (a->coord != old_coord) {
        fs_agree_state_clear(r, &r->m, a->coord, a->cfg.n);
        if (r->started)
            fs_agree_merge_own(a, r, &r->m);
        for (s = r->buf; s != NULL; s = s->next) {
            if (s->ballot == a->coord)
                fs_agree_merge(r, &r->m, s, a->cfg.n);
        }
        fs_agree_buf_free(r, a->coord);
        r->sent = 0;
    } else {
        if (parent != r->parent)
            r->sent = 0;
        /* accepted: children adopted since have not seen the proposal */
        if (r->my_ballot == a->coord)
            fs_agree_send_down(a, r, FS_AGREE_PROPOSE, a->coord, &r->mine, FS_AGREE_NONE,
                               r->m.acc);
    }
    r->parent = parent;
    fs_agree_step(a, r);
}

fs_status_t fs_agree_gone(fs_agree_t *a, uint32_t m, int failed)
{
    uint32_t old = a->coord;
    fs_agree_rec_t *r;
    int changed = 0;

    if (m >= a->cfg.n)
        return FS_ERR_INVALID;
    if (!fs_bm_test(a->gone, m)) {
        fs_bm_set(a->gone, m);
        a->live[m / 64] &= ~((uint64_t)1 << (m % 64));
        changed = 1;
    }
    if (failed && !fs_bm_test(a->failed, m)) {
        fs_bm_set(a->failed, m);
        changed = 1;
    }
    if (!changed || fs_bm_test(a->gone, a->cfg.me))
        return FS_OK;
    a->coord = fs_bm_next(a->live, a->cfg.n, 0);
    for (r = a->recs; r != NULL; r = r->next)
        fs_agree_on_view(a, r, old);
    fs_agree_gc(a);
    return FS_OK;
}

fs_status_t fs_agree_create(const fs_agree_config_t *cfg, const fs_agree_ops_t *ops,
                            void *arg, fs_agree_t **a_p)
{
    size_t wd = fs_bm_words(cfg->n), w;
    fs_agree_t *a;

    if ((cfg->n == 0) || (cfg->me >= cfg->n) || (ops->send == NULL) || (ops->decided == NULL))
        return FS_ERR_INVALID;
    a = calloc(1, sizeof(*a));
    if (a == NULL)
        goto err;
    a->cfg     = *cfg;
    a->ops     = *ops;
    a->arg     = arg;
    a->msg_max = fs_agree_wire_max(cfg->n);
    a->gone    = calloc(3 * wd, sizeof(uint64_t));
    a->rx      = calloc(fs_agree_rx_words(cfg->n), sizeof(uint64_t));
    a->own     = calloc(2 * wd, sizeof(uint64_t));
    a->txbuf   = malloc(a->msg_max);
    if ((a->gone == NULL) || (a->rx == NULL) || (a->own == NULL) || (a->txbuf == NULL))
        goto err;
    a->failed = a->gone + wd;
    a->live   = a->gone + 2 * wd;
    for (w = 0; w < cfg->n; w++)
        fs_bm_set(a->live, (uint32_t)w);
    a->coord = 0;
    *a_p = a;
    return FS_OK;

err:
    fs_agree_destroy(a);
    return FS_ERR_NO_MEMORY;
}

void fs_agree_destroy(fs_agree_t *a)
{
    if (a == NULL)
        return;
    while (a->recs != NULL)
        fs_agree_rec_free(a, a->recs);
    free(a->gone);
    free(a->rx);
    free(a->own);
    free(a->txbuf);
    free(a);
}

size_t fs_agree_msg_max(const fs_agree_t *a)
{
    return a->msg_max;
}

uint32_t fs_agree_next_seq(const fs_agree_t *a)
{
    return a->next_seq + 1;
}

uint32_t fs_agree_coordinator(const fs_agree_t *a)
{
    return a->coord;
}

void fs_agree_counters(const fs_agree_t *a, fs_agree_counters_t *c_p)
{
    *c_p = a->cnt;
}
