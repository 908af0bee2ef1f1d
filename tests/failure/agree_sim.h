/* A discrete-event simulator of n agreement endpoints (src/failure/agree.c):
 * fake clock, per-message latency with jitter (so messages overtake each
 * other), kills at chosen moments or on chosen messages, a view oracle
 * (each survivor learns each failure after its own delay), zombies (an
 * excluded process runs on until it learns it), and a checker of the
 * properties every decision must have (docs/DESIGN.md "Agreement").
 *
 * Inputs are chosen so the decision shows who contributed: word 0 ORs
 * bit i for member i, word 1 ANDs its complement, word 2 is a MAX and
 * word 3 a MIN of per-member values. */
#ifndef FS_TEST_AGREE_SIM_H
#define FS_TEST_AGREE_SIM_H

#include "failure/agree.h"

#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AS_MAX   64
#define AS_INST  256       /* instances per run */
#define AS_NEVER 1e300

typedef struct as_sim as_sim_t;

enum { AS_EV_MSG, AS_EV_START, AS_EV_LEARN, AS_EV_STOP };

typedef struct as_ev {
    double   t;
    uint64_t seq;
    int      kind;
    uint32_t to, about;    /* MSG: to; START: proc; LEARN: observer, about */
    uint8_t *data;
    size_t   len;
} as_ev_t;

typedef struct as_dec {
    int      decided;
    uint64_t v[FS_AGREE_MAX_WORDS];
    uint64_t fd;
    int      unacked;
    double   at;
} as_dec_t;

typedef struct as_proc {
    as_sim_t   *sim;
    uint32_t    rank;
    fs_agree_t *a;
    int         stopped;        /* crashed, or a zombie that learned */
    double      killed_at;      /* in X from then; AS_NEVER */
    uint32_t    started;        /* instances started */
    uint32_t    scheduled;      /* starts scheduled */
    uint64_t    view_at_start[AS_INST];
    uint64_t    acked_at_start[AS_INST];
    uint64_t    known;          /* failures learned */
    uint64_t    ack_mask;       /* acked = known & ack_mask at start */
    as_dec_t    dec[AS_INST];
    uint64_t    sent[4];
} as_proc_t;

/* Kill 'who' when it is about to send its nth message of 'type'
 * (after: that message still goes out). */
typedef struct as_trap {
    uint32_t who, type, nth, after, used;
    double   zombie;           /* > 0: keeps running that long */
} as_trap_t;

struct as_sim {
    uint32_t  n, ninst, outstanding;
    int       star;
    double    now, lat, jitter, learn_min, learn_max, think;
    uint64_t  rng, seq;
    double    learn_at[AS_MAX][AS_MAX]; /* > 0: o learns x's failure this late */
    uint64_t  slow;            /* these observers learn after slow_delay */
    double    slow_delay;
    as_ev_t  *heap;
    size_t    len, cap;
    as_trap_t trap[8];
    uint32_t  ntrap;
    uint64_t  killed;          /* X */
    uint64_t  msgs;
    as_proc_t p[AS_MAX];
};

static inline uint64_t as_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static inline double as_uniform(uint64_t *s, double lo, double hi)
{
    return lo + (hi - lo) * (double)(as_rand(s) >> 11) / 9007199254740992.0;
}

static inline int as_before(const as_ev_t *a, const as_ev_t *b)
{
    return (a->t < b->t) || ((a->t == b->t) && (a->seq < b->seq));
}

static inline void as_push(as_sim_t *s, as_ev_t ev)
{
    size_t i;

    if (s->len == s->cap) {
        s->cap  = s->cap ? 2 * s->cap : 1024;
        s->heap = realloc(s->heap, s->cap * sizeof(*s->heap));
        cr_assert_not_null(s->heap);
    }
    ev.seq = s->seq++;
    i = s->len++;
    s->heap[i] = ev;
    while ((i > 0) && as_before(&s->heap[i], &s->heap[(i - 1) / 2])) {
        as_ev_t tmp = s->heap[i];
        s->heap[i] = s->heap[(i - 1) / 2];
        s->heap[(i - 1) / 2] = tmp;
        i = (i - 1) / 2;
    }
}

static inline as_ev_t as_pop(as_sim_t *s)
{
    as_ev_t top = s->heap[0];
    size_t i = 0;

    s->heap[0] = s->heap[--s->len];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        as_ev_t tmp;

        if ((l < s->len) && as_before(&s->heap[l], &s->heap[m])) m = l;
        if ((r < s->len) && as_before(&s->heap[r], &s->heap[m])) m = r;
        if (m == i) break;
        tmp = s->heap[i]; s->heap[i] = s->heap[m]; s->heap[m] = tmp;
        i = m;
    }
    return top;
}

/* x fails now: in X; every other process learns after its own delay; x
 * itself stops now, or after 'zombie' seconds of running on. */
static inline void as_kill(as_sim_t *s, uint32_t x, double zombie)
{
    uint32_t o;

    if (s->p[x].killed_at < AS_NEVER)
        return;
    s->p[x].killed_at = s->now;
    s->killed |= 1ull << x;
    for (o = 0; o < s->n; o++) {
        as_ev_t ev = { .kind = AS_EV_LEARN, .to = o, .about = x };

        if (o == x)
            continue;
        ev.t = s->now + ((s->learn_at[o][x] > 0) ? s->learn_at[o][x]
                         : ((s->slow >> o) & 1) ? s->slow_delay
                         : as_uniform(&s->rng, s->learn_min, s->learn_max));
        as_push(s, ev);
    }
    if (zombie > 0) {
        as_ev_t ev = { .kind = AS_EV_STOP, .t = s->now + zombie, .to = x };
        as_push(s, ev);
    } else {
        s->p[x].stopped = 1;
    }
}

static inline fs_status_t as_send(void *arg, uint32_t to, const void *msg, size_t len)
{
    as_proc_t *p = arg;
    as_sim_t *s = p->sim;
    uint8_t type = *(const uint8_t *)msg;
    as_ev_t ev = { .kind = AS_EV_MSG, .to = to, .len = len };
    uint32_t i;

    cr_assert_lt(to, s->n);
    cr_assert_neq(to, p->rank, "%u sends to itself", p->rank);
    if (p->stopped)
        return FS_ERR_LOCAL;      /* died earlier in this same call */
    p->sent[type]++;
    for (i = 0; i < s->ntrap; i++) {
        as_trap_t *t = &s->trap[i];

        if (!t->used && (t->who == p->rank) && (t->type == type) && (p->sent[type] == t->nth)) {
            t->used = 1;
            if (!t->after) {
                as_kill(s, p->rank, t->zombie);
                if (p->stopped)
                    return FS_ERR_LOCAL;
            } else {
                ev.data = malloc(len);
                memcpy(ev.data, msg, len);
                ev.t = s->now + s->lat;
                as_push(s, ev);
                s->msgs++;
                as_kill(s, p->rank, t->zombie);
                return FS_OK;
            }
        }
    }
    ev.data = malloc(len);
    cr_assert_not_null(ev.data);
    memcpy(ev.data, msg, len);
    ev.t = s->now + s->lat + (s->jitter > 0 ? as_uniform(&s->rng, 0, s->jitter) : 0);
    as_push(s, ev);
    s->msgs++;
    return FS_OK;
}

static inline void as_schedule_start(as_sim_t *s, uint32_t r, double at)
{
    as_ev_t ev = { .kind = AS_EV_START, .t = at, .to = r };

    s->p[r].scheduled++;
    as_push(s, ev);
}

static inline void as_decided(void *arg, const fs_agree_result_t *res)
{
    as_proc_t *p = arg;
    as_sim_t *s = p->sim;
    as_dec_t *d;

    cr_assert(res->seq >= 1 && res->seq <= s->ninst, "seq %u", res->seq);
    d = &p->dec[res->seq - 1];
    cr_assert(!d->decided, "%u decided instance %u twice", p->rank, res->seq);
    d->decided = 1;
    d->at = s->now;
    d->unacked = res->unacked;
    memcpy(d->v, res->v, sizeof(d->v));
    d->fd = res->failed[0];
    cr_assert_eq(res->nfailed, (uint32_t)__builtin_popcountll(d->fd));
    /* the next instance, unless it is already running (outstanding) */
    if ((p->scheduled < s->ninst) && (p->scheduled < res->seq + s->outstanding))
        as_schedule_start(s, p->rank, s->now + s->think);
}

static inline void as_start(as_proc_t *p)
{
    fs_agree_input_t in = { .nv = 4, .op = { FS_AGREE_OR, FS_AGREE_AND, FS_AGREE_MAX,
                                             FS_AGREE_MIN } };
    uint32_t k = p->started, seq;
    uint64_t acked;

    in.v[0] = 1ull << p->rank;
    in.v[1] = ~(1ull << p->rank);
    in.v[2] = 1000 + 7 * (uint64_t)p->rank + k;
    in.v[3] = 5000 + 3 * (uint64_t)p->rank + k;
    acked = p->known & p->ack_mask;
    in.acked = &acked;
    p->view_at_start[k]  = p->known;
    p->acked_at_start[k] = acked;
    p->started++;
    cr_assert_eq(fs_agree_start(p->a, &in, &seq), FS_OK);
    cr_assert_eq(seq, k + 1);
}

static inline void as_init(as_sim_t *s, uint32_t n, int star, uint64_t seed)
{
    static const fs_agree_ops_t ops = { as_send, as_decided };
    uint32_t r;

    memset(s, 0, sizeof(*s));
    s->n = n;
    s->star = star;
    s->ninst = 1;
    s->outstanding = 1;
    s->lat = 1.0;
    s->learn_min = 5.0;
    s->learn_max = 5.0;
    s->rng = seed * 2654435761u + 88172645463325252ull;
    for (r = 0; r < n; r++) {
        fs_agree_config_t cfg = { .n = n, .me = r, .star = star };

        s->p[r].sim = s;
        s->p[r].rank = r;
        s->p[r].killed_at = AS_NEVER;
        s->p[r].ack_mask = ~0ull;
        cr_assert_eq(fs_agree_create(&cfg, &ops, &s->p[r], &s->p[r].a), FS_OK);
    }
}

/* Every process starts its first instances at a time in [0, spread). */
static inline void as_start_all(as_sim_t *s, double spread)
{
    uint32_t r, k;

    for (r = 0; r < s->n; r++) {
        double at = spread > 0 ? as_uniform(&s->rng, 0, spread) : 0;

        for (k = 0; (k < s->outstanding) && (k < s->ninst); k++)
            as_schedule_start(s, r, at);
    }
}

static inline void as_trace(const as_sim_t *s, const as_ev_t *ev)
{
    static const char *kind[] = { "msg", "start", "learn", "stop" };
    static const char *type[] = { "?", "UP", "PROPOSE", "DECIDE" };
    uint32_t w[6];

    if (ev->kind != AS_EV_MSG) {
        fprintf(stderr, "%8.3f %-7s at %u about %u%s\n", s->now, kind[ev->kind], ev->to,
                ev->about, s->p[ev->to].stopped ? " (stopped)" : "");
        return;
    }
    memcpy(w, ev->data + 4, sizeof(w));  /* seq from ballot acc_ballot lo */
    fprintf(stderr, "%8.3f %-7s %u -> %u seq %u ballot %u acc %d%s\n", s->now,
            type[ev->data[0] & 3], w[1], ev->to, w[0], w[2], (int)w[3],
            s->p[ev->to].stopped ? " (stopped)" : "");
}

static inline void as_run(as_sim_t *s, double until)
{
    while ((s->len > 0) && (s->heap[0].t <= until)) {
        as_ev_t ev = as_pop(s);
        as_proc_t *p = &s->p[ev.to];

        s->now = ev.t;
        cr_assert_lt(s->msgs, 50000000ull, "message storm");
        if (getenv("FS_AGREE_TRACE"))
            as_trace(s, &ev);
        if (p->stopped) {
            free(ev.data);
            continue;
        }
        switch (ev.kind) {
        case AS_EV_MSG:
            cr_assert_eq(fs_agree_recv(p->a, ev.data, ev.len), FS_OK);
            free(ev.data);
            break;
        case AS_EV_START:
            as_start(p);
            break;
        case AS_EV_LEARN:
            p->known |= 1ull << ev.about;
            cr_assert_eq(fs_agree_gone(p->a, ev.about, 1), FS_OK);
            break;
        default:
            p->stopped = 1;
            break;
        }
    }
}

static inline void as_fini(as_sim_t *s)
{
    uint32_t r;

    while (s->len > 0)
        free(as_pop(s).data);
    free(s->heap);
    for (r = 0; r < s->n; r++)
        fs_agree_destroy(s->p[r].a);
}

static inline uint64_t as_sent(const as_sim_t *s, int type)
{
    uint64_t c = 0;
    uint32_t r;

    for (r = 0; r < s->n; r++)
        c += s->p[r].sent[type];
    return c;
}

/* U, T, V1-V4 and R for every instance; ctx names the run in failures. */
static inline void as_check(const as_sim_t *s, const char *ctx)
{
    uint32_t k, r;

    for (k = 0; k < s->ninst; k++) {
        const as_dec_t *ref = NULL;
        uint64_t contrib, x, not_acked = 0;
        uint64_t vmax = 0, vmin = UINT64_MAX;

        for (r = 0; r < s->n; r++) {
            const as_dec_t *d = &s->p[r].dec[k];

            if (s->p[r].killed_at == AS_NEVER)          /* T */
                cr_assert(d->decided, "%s: survivor %u did not decide instance %u",
                          ctx, r, k + 1);
            if (!d->decided)
                continue;
            if (ref == NULL) {
                ref = d;
                continue;
            }
            cr_assert(!memcmp(d->v, ref->v, sizeof(d->v)) && (d->fd == ref->fd) &&  /* U */
                      (d->unacked == ref->unacked),
                      "%s: instance %u: %u decided v0 %#llx fd %#llx unacked %d, "
                      "another v0 %#llx fd %#llx unacked %d", ctx, k + 1, r,
                      (unsigned long long)d->v[0], (unsigned long long)d->fd, d->unacked,
                      (unsigned long long)ref->v[0], (unsigned long long)ref->fd,
                      ref->unacked);
        }
        if (ref == NULL)
            continue;
        contrib = ref->v[0];
        cr_assert_eq(ref->fd & ~s->killed, 0, "%s: instance %u: F_D %#llx not all failed",
                     ctx, k + 1, (unsigned long long)ref->fd);                   /* V1 */
        for (r = 0; r < s->n; r++) {
            if (!((ref->fd >> r) & 1))
                cr_assert((contrib >> r) & 1, "%s: instance %u: %u neither failed nor "
                          "contributed", ctx, k + 1, r);                     /* V2 */
            if (!((contrib >> r) & 1))
                continue;
            cr_assert(s->p[r].started > k, "%s: %u counted, never started %u", ctx, r, k + 1);
            x = 1000 + 7 * (uint64_t)r + k;
            vmax = x > vmax ? x : vmax;
            x = 5000 + 3 * (uint64_t)r + k;
            vmin = x < vmin ? x : vmin;
            cr_assert_eq(s->p[r].view_at_start[k] & ~ref->fd, 0,                 /* V4 */
                         "%s: instance %u: F_D misses a failure %u knew", ctx, k + 1, r);
            not_acked |= ~s->p[r].acked_at_start[k];
        }
        cr_assert_eq(ref->v[1], ~contrib, "%s: AND word", ctx);                 /* V3 */
        cr_assert_eq(ref->v[2], vmax, "%s: MAX word", ctx);
        cr_assert_eq(ref->v[3], vmin, "%s: MIN word", ctx);
        cr_assert_eq(ref->unacked, (ref->fd & not_acked) != 0,                   /* R */
                     "%s: instance %u: unacked %d", ctx, k + 1, ref->unacked);
    }
}

#endif
