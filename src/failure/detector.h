/* Heartbeat failure detector: the protocol only.
 *
 * No threads, no transport, no clock of its own: the caller (the detector
 * thread, src/detector/hb.c; or a simulator in the unit tests) passes the
 * time to every call and carries messages through fs_det_ops_t.  Ranks are
 * MPI_COMM_WORLD ranks 0..n-1.
 *
 * Observation ring (SC16, as in ULFM): every process sends a BEAT every
 * period to its observer, the nearest live successor; it watches its
 * observed, the nearest live predecessor.  An observed process silent for
 * timeout is suspected, and a suspicion is final (MPI-FT 17.3): it is
 * failed everywhere.  The observer then asks the next live predecessor to
 * send it beats (OBSERVE).  A process only accepts an OBSERVE that is at
 * least as far along the ring as its current observer: observers only move
 * away, so a nearer request is stale.
 *
 * Propagation: a newly learned failure is sent (FAILED) to the binomial
 * graph neighbours me +- 2^k (distance 1 repaired to the nearest live
 * process), each process forwarding only what is new to it: at most
 * 2 n ceil(log2 n) messages per failure.  Anti-entropy makes it reliable
 * when forwarders die during the flood: every BEAT carries the sender's
 * failed count and digest; on a mismatch the receiver sends its failed
 * bitmap (SYNC), and whoever learns something from a SYNC floods it again
 * and answers with its own bitmap if the sender lacked something.
 *
 * Leaving is not failing: a process that finalizes floods LEAVE over its
 * binomial graph; everyone treats it as gone (the ring skips it) but never
 * reports it as failed.  The departed set is part of the anti-entropy
 * (count, digest and SYNC cover failed and left ranks), so a LEAVE lost on
 * every path is repaired within a period, before the ring edge it crossed
 * times out.  Left wins: a process learning that a rank it holds as failed
 * had left (SYNC or a forwarded LEAVE) moves it to the left set, so views
 * converge; what its host was told stays told.
 *
 * Identity: every message carries a magic, the protocol version and the
 * job's identity (fs_det_config_t.job); a message without all three
 * matching is foreign (another job's stale detector on a reused port, or
 * junk) and is dropped and counted before anything reads it.
 *
 * Memory is O(n) bits: two bitmaps (failed, gone), O(log n) neighbour
 * scratch and a fixed table for rate limits (fs_det_memory).
 *
 * Exclusion: messages from a process known failed are dropped and answered
 * (at most once per period) with FAILED naming it; a process that receives
 * FAILED naming itself calls ops->excluded and must end.
 *
 * Across hosts (ops->host says which processes share a host):
 *  - a process on another host is suspected after timeout_remote, not
 *    timeout, and a suspicion there is not yet final: a link flap costs
 *    more than its own length (Linux evicts the neighbour entries of a link
 *    that lost its carrier and re-resolves them once a second: a 0.3 s
 *    flap silences the link for about 1 s, a 2 s one for up to 3 s);
 *  - host check: when an observer suspects a process p on another host, it
 *    PROBEs p and the predecessors the ring would watch next on p's host
 *    (at most FS_DET_PROBE_MAX) every period, each to answer with a BEAT.
 *    p answers: it is alive (its OBSERVE is sent again).  Another answers
 *    and p still has not 3 periods later: the host is reachable, p is
 *    failed (hung or dead), with the probed that did not answer.  Nobody
 *    answers: the host is unreachable, crashed or behind an outage, and
 *    all of them are failed at once when it has been silent for
 *    timeout_host (counted from p's last beat): the longest outage the job
 *    tolerates, and the time to exclude a lost host;
 *  - partition rule: the side of a partition that cannot hear the others
 *    cannot be told it is excluded, so it must find out itself.  A process
 *    that learns, within one unstable period (no failure learned for
 *    2 (timeout_host + period) closes it), the failure of at least half
 *    of the processes alive before it (exactly half: only if the lowest of
 *    them is among the lost; the half holding it carries on) is on the
 *    minority side: ops->partitioned, and it must end.  A job on several
 *    hosts therefore does not outlive the loss of half of its processes at
 *    once; a job on one host cannot be partitioned and the rule is off. */
#ifndef FS_FAILURE_DETECTOR_H
#define FS_FAILURE_DETECTOR_H

#include "common/fs_status.h"

#include <stddef.h>
#include <stdint.h>

typedef enum fs_det_msg_type {
    FS_DET_BEAT    = 1,  /* alive; count/digest of the sender's gone set */
    FS_DET_OBSERVE = 2,  /* "I observe you now: send me your beats" */
    FS_DET_FAILED  = 3,  /* subject has failed */
    FS_DET_LEAVE   = 4,  /* subject finalized normally (sent by it, forwarded) */
    FS_DET_SYNC    = 5,  /* data: the sender's failed bitmap, then its left
                            bitmap, fs_det_sync_len(n) bytes */
    FS_DET_PROBE   = 6,  /* "answer with a BEAT": is your host still there? */
    FS_DET_ASK     = 7   /* "has subject, a process of your host, exited?"
                            (fs_det_check) */
} fs_det_msg_type_t;

#define FS_DET_MAGIC   0x5346u   /* "FS" in the first two bytes, little-endian */
#define FS_DET_VERSION 4u

/* Wire header (32 bytes, host byte order: one machine family per job). */
typedef struct fs_det_msg {
    uint16_t magic;      /* FS_DET_MAGIC */
    uint8_t  version;    /* FS_DET_VERSION */
    uint8_t  type;       /* fs_det_msg_type_t */
    uint32_t sender;     /* world rank */
    uint32_t subject;    /* FAILED: the failed rank; LEAVE: who left */
    uint32_t count;      /* BEAT, SYNC: failed + left ranks the sender knows */
    uint64_t digest;     /* BEAT, SYNC: digest of those two sets */
    uint64_t job;        /* the job's identity (fs_det_config_t.job) */
} fs_det_msg_t;

typedef enum fs_det_cause {
    FS_DET_CAUSE_TIMEOUT,    /* this detector's own suspicion */
    FS_DET_CAUSE_MESSAGE,    /* another detector said so (FAILED or SYNC) */
    FS_DET_CAUSE_REPORT,     /* fs_det_report: the local engine/transport */
    FS_DET_CAUSE_EXIT        /* this detector's: the observed process exited
                                without a departure (fs_det_exited) */
} fs_det_cause_t;

typedef struct fs_det_ops {
    /* Sends msg (and data, len bytes, for SYNC) to world rank to.  Best
     * effort: a message to a dead process may be lost silently. */
    void (*send)(void *arg, uint32_t to, const fs_det_msg_t *msg,
                 const void *data, size_t len);
    /* rank is newly known failed (once per rank, never for this process). */
    void (*failed)(void *arg, uint32_t rank, fs_det_cause_t cause);
    /* Process `by` says this process has failed: it must end itself. */
    void (*excluded)(void *arg, uint32_t by);
    /* Optional (NULL: every process is on this host): an identity of the
     * host rank runs on (processes on one host share it).  Asked at create
     * time, when the observed changes and when a host is probed. */
    uint64_t (*host)(void *arg, uint32_t rank);
    /* The partition rule found this process on the minority side (lost of
     * view processes, view including this one): it must end itself.  Needed
     * with host. */
    void (*partitioned)(void *arg, uint32_t lost, uint32_t view);
    /* Optional (NULL: never known): 1 if rank, a process of this host, has
     * exited (its process id says so); a few system calls, called at most
     * once per period per rank, only when another process ASKs. */
    int (*exited)(void *arg, uint32_t rank);
    /* Optional (NULL: never known): 1 if rank, a process of this host, is
     * there and not stopped (its process id says so); called when its
     * timeout runs out.  Such a process gets one timeout more before it is
     * suspected: a detector thread starved on an oversubscribed node is
     * not a failure; still silent after that, it is hung.  A stopped
     * process (SIGSTOP) gets none. */
    int (*runnable)(void *arg, uint32_t rank);
} fs_det_ops_t;

/* Most processes of one host probed at once (more are found one by one). */
#define FS_DET_PROBE_MAX 256

typedef struct fs_det_config {
    uint32_t n;          /* world size, >= 1 */
    uint32_t me;         /* this process's world rank, < n */
    double   period;     /* seconds between beats */
    double   timeout;    /* seconds of silence before a suspicion (>= 2 period) */
    double   grace;      /* extra seconds allowed for the first beat (start-up) */
    uint64_t job;        /* identity every process of the job agrees on */
    double   timeout_remote; /* timeout for a process on another host
                                (>= timeout; 0: the same as timeout) */
    double   timeout_host;   /* a host none of whose probed processes
                                answers is failed once silent this long:
                                the longest outage tolerated (>=
                                timeout_remote; 0: the same) */
} fs_det_config_t;

typedef struct fs_det_stats {
    uint64_t beats_sent;
    uint64_t beats_received;
    uint64_t suspicions;         /* failures this detector decided itself */
    uint64_t host_checks;        /* silent processes on other hosts probed */
    uint64_t asks;               /* fs_det_check: processes asked about */
    uint64_t extensions;         /* silent but runnable: one timeout more */
    uint64_t failed_sent;        /* FAILED messages sent (propagation cost) */
    uint64_t syncs_sent;
    uint64_t refused;            /* messages dropped: sender known failed */
    uint64_t foreign;            /* dropped: magic, version or job not ours */
    uint64_t malformed;          /* dropped: bad type, rank or length */
    double   max_beat_gap;       /* seconds, largest gap between beats of an observed process */
    double   max_self_late;      /* seconds, largest lateness of fs_det_tick vs its deadline */
    uint32_t multi_host;         /* 1: the job spans hosts (partition rule on) */
} fs_det_stats_t;

typedef struct fs_det fs_det_t;

/* Allocates everything the detector will ever need (nothing after). */
fs_status_t fs_det_create(const fs_det_config_t *config, const fs_det_ops_t *ops,
                          void *arg, fs_det_t **det_p);
void        fs_det_destroy(fs_det_t *det);

/* Starts observing: the first beat goes out now; the observed process has
 * timeout + grace for its first beat. */
void        fs_det_start(fs_det_t *det, double now);

/* Sends due beats and suspects a silent observed process.  A call much later
 * than the next deadline (more than timeout / 2: this process itself was
 * stopped or starved) suspects nobody and restarts the observed process's
 * timeout instead. */
void        fs_det_tick(fs_det_t *det, double now);

/* A message arrived (data/len: SYNC bitmaps, else NULL/0).  Foreign
 * messages (magic, version, job) and malformed ones (bad type or ranks,
 * wrong SYNC length) are dropped and counted. */
void        fs_det_rx(fs_det_t *det, const fs_det_msg_t *msg, const void *data,
                      size_t len, double now);

/* The local engine or transport found rank failed (fail-stop).  Learned like
 * any failure (propagated, ring repaired); ops->failed is called too. */
void        fs_det_report(fs_det_t *det, uint32_t rank, double now);

/* The observed process has exited: its host can tell (a process of this
 * host, watched by process id: src/detector/hb.c).  Unless its departure
 * (LEAVE, directly or by anti-entropy) arrives first, it is suspected
 * FS_DET_EXIT_PERIODS periods from now, not a timeout after its last beat:
 * an exit without a departure is a crash.  The wait covers a LEAVE sent
 * just before the exit and not yet read.  Ignored for any rank but the
 * observed. */
#define FS_DET_EXIT_PERIODS 2
void        fs_det_exited(fs_det_t *det, uint32_t rank, double now);

/* The local engine's link to rank, a process on another host, broke with an
 * error a network outage gives as well as a death (a reset, a timeout):
 * a suspicion, not a verdict.  Its host-mates (the nearest live processes
 * before it in the ring that share its host, at most FS_DET_ASK_MATES) are
 * ASKed every period, until rank is gone or timeout_host + period passed;
 * one that sees it exited (ops->exited) treats that as an exit it watched
 * (FS_DET_EXIT_PERIODS for its departure, then failed everywhere).  A live
 * rank stays what it was: its beats and the ring decide, as for anyone.  At
 * most FS_DET_ASK_MAX at once; more are left to the ring. */
#define FS_DET_ASK_MAX   8
#define FS_DET_ASK_MATES 2
void        fs_det_check(fs_det_t *det, uint32_t rank, double now);

/* This process finalizes: LEAVE to observer and observed; from then on the
 * detector sends nothing and suspects nobody. */
void        fs_det_leave(fs_det_t *det, double now);

/* Time of the next thing fs_det_tick has to do. */
double      fs_det_next_deadline(const fs_det_t *det);

int         fs_det_is_failed(const fs_det_t *det, uint32_t rank);
int         fs_det_is_left(const fs_det_t *det, uint32_t rank);
uint32_t    fs_det_failed_count(const fs_det_t *det);
uint32_t    fs_det_observed(const fs_det_t *det);   /* n if none */
uint32_t    fs_det_observer(const fs_det_t *det);   /* n if none */
/* Seconds of silence after which rank would be suspected. */
double      fs_det_timeout_of(const fs_det_t *det, uint32_t rank);
const fs_det_stats_t *fs_det_stats(const fs_det_t *det);

/* Bytes this detector allocated (O(n) bits; for the scale simulator). */
size_t      fs_det_memory(const fs_det_t *det);

/* Length of a SYNC payload for n processes: two bitmaps. */
size_t      fs_det_sync_len(uint32_t n);

/* Digest of a failed set: XOR over its ranks of a 64-bit mix of the rank. */
uint64_t    fs_det_digest_rank(uint32_t rank);

/* Binomial-graph neighbours of me among n with the ranks in gone (a bitmap,
 * bit r of byte r / 8 set: failed or left; NULL: none) skipped: me +- 2^k for 2^k < n, distance 1
 * repaired to the nearest live process in that direction, duplicates and me
 * removed.  Writes at most max ranks to out; returns how many. */
uint32_t    fs_det_bmg(uint32_t n, uint32_t me, const uint8_t *gone, uint32_t *out,
                       uint32_t max);

#endif
