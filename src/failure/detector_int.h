/* The detector's state, shared by its two files: detector.c (the protocol)
 * and det_hosts.c (what a job on several hosts adds: remote timeouts, the
 * host probe, the partition rule).  Internal to src/failure/. */
#ifndef FS_FAILURE_DETECTOR_INT_H
#define FS_FAILURE_DETECTOR_INT_H

#include "failure/detector.h"

/* Rate limits ("at most once per period per peer") for the rare answers:
 * FAILED to a failed sender, SYNC on a digest mismatch.  A small table, not
 * an array per rank: only a handful of peers are ever answered at once, and
 * an evicted entry only allows one answer more. */
#define FS_DET_RATE_SLOTS 32

enum {
    FS_DET_RATE_REFUSE = 0,
    FS_DET_RATE_SYNC   = 1,
    FS_DET_RATE_PROBE  = 2,
    FS_DET_RATE_ASK    = 3    /* rank: the subject asked about */
};

/* fs_det_check's questions (asker) and the exits they found (host-mate). */
typedef struct fs_det_ask {
    uint32_t rank;
    uint32_t nmates;
    uint32_t mates[FS_DET_ASK_MATES];
    double   at;                  /* asker: until; host-mate: the verdict */
} fs_det_ask_t;

typedef struct fs_det_rate {
    uint32_t rank;                /* n: free */
    uint32_t kind;                /* FS_DET_RATE_* */
    double   last;
} fs_det_rate_t;

/* Per rank, two bits: failed (the SYNC's first bitmap) and gone (failed or
 * left; fs_det_bmg's and the ring's view).  Left = gone and not failed. */
struct fs_det {
    fs_det_config_t cfg;
    fs_det_ops_t    ops;
    void           *arg;

    uint8_t        *sync;         /* 2 * nbytes: failed bitmap, left bitmap */
    uint8_t        *bits;         /* = sync: failed */
    uint8_t        *left_bits;    /* = sync + nbytes: left */
    uint8_t        *gone;         /* failed | left */
    size_t          nbytes;       /* (n + 7) / 8 */
    uint32_t       *nbr;          /* scratch for fs_det_bmg */
    uint32_t        max_nbr;
    fs_det_rate_t   rate[FS_DET_RATE_SLOTS];

    uint32_t        count;        /* failed ranks known */
    uint32_t        nleft;        /* left ranks known */
    uint64_t        digest;       /* XOR of fs_det_digest_kind over both sets */

    uint32_t        observed;     /* n if none */
    uint32_t        observer;     /* n if none */
    double          next_beat;    /* when the next BEAT to the observer is due */
    double          obs_deadline; /* the observed process is suspected then */
    double          obs_timeout;  /* timeout or timeout_remote, for observed */
    double          last_beat_at; /* last BEAT from the observed, -inf if none */
    int             obs_exited;   /* the observed exited (fs_det_exited) */
    int             obs_extended; /* its silence got its one timeout more */
    int             started;
    int             left;

    double          watch_at;     /* when the observed was first watched */

    /* host check (det_hosts.c): the observed, silent, first in probe[];
     * the predecessors the ring would watch next on its host after it */
    uint32_t        probe[FS_DET_PROBE_MAX];
    uint8_t         probe_ok[FS_DET_PROBE_MAX];
    uint32_t        nprobe;       /* 0: no check running */
    double          probe_next;   /* next PROBE round and verdict check */
    double          probe_since;  /* the host silent since (observed's last word) */
    double          probe_mate_at; /* a host-mate's first answer, +inf: none */

    /* fs_det_check (det_hosts.c) */
    fs_det_ask_t    asks[FS_DET_ASK_MAX];
    uint32_t        nasks;
    double          ask_next;     /* next round of ASKs */
    fs_det_ask_t    exits[FS_DET_ASK_MAX];
    uint32_t        nexits;

    /* partition rule (multi-host jobs) */
    uint32_t        view_n;       /* alive before the first loss of this period */
    uint32_t        view_low;     /* lowest of them */
    uint32_t        lost;         /* failures learned in this period */
    int             low_lost;     /* view_low among them */
    double          last_loss_at; /* -inf: none yet */

    fs_det_stats_t  stats;
};

/* ---- bitmaps ------------------------------------------------------------- */

static inline int fs_det_bit(const uint8_t *bits, uint32_t r)
{
    return (bits[r >> 3] >> (r & 7)) & 1;
}

static inline void fs_det_bit_set(uint8_t *bits, uint32_t r)
{
    bits[r >> 3] |= (uint8_t)(1u << (r & 7));
}

static inline void fs_det_bit_clear(uint8_t *bits, uint32_t r)
{
    bits[r >> 3] &= (uint8_t)~(1u << (r & 7));
}

/* ---- shared by detector.c and det_hosts.c ------------------------------ */

/* Nearest live process from me in direction dir (me excluded), or n. */
uint32_t fs_det_walk(uint32_t n, uint32_t me, const uint8_t *gone, int dir);
void fs_det_send(fs_det_t *det, uint32_t to, uint8_t type, uint32_t subject);
/* At most once per period per (kind, rank): 1 if this one may go. */
int fs_det_rate_ok(fs_det_t *det, uint32_t kind, uint32_t rank, double now);
/* from: who told us (not told again), n if nobody. */
void fs_det_learn(fs_det_t *det, uint32_t rank, fs_det_cause_t cause,
                  uint32_t from, double now);

/* det_hosts.c */
int fs_det_remote(const fs_det_t *det, uint32_t rank);
void fs_det_probe_host(fs_det_t *det, uint32_t p, double now);
void fs_det_probe_answer(fs_det_t *det, uint32_t from, double now);
void fs_det_probe_step(fs_det_t *det, double now);
void fs_det_probe_cancel(fs_det_t *det);
int fs_det_minority(fs_det_t *det, uint32_t rank, double now);
void fs_det_ask_rx(fs_det_t *det, uint32_t subject, double now);
void fs_det_asks_step(fs_det_t *det, double now);
double fs_det_asks_deadline(const fs_det_t *det);

#endif
