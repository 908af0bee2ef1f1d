/* Fault-tolerant uniform agreement over the members of one communicator
 * (docs/DESIGN.md "Agreement"; the study behind it: docs/notes/agreement-study.md §5).
 *
 * A single-decree Paxos per instance, over a tree rooted at the lowest
 * member this process does not know gone; the ballot is that coordinator's
 * index, so ballots only grow as views grow (the detector's views only
 * grow and a process in them is fenced).  Waves: gather (UP), propose,
 * accept (UP carrying the acceptors), decide.  Every merge is an
 * idempotent join, so re-sends, duplicates and reordering are harmless.
 * No clock: a failure is learned through fs_agree_gone, never guessed.
 *
 * Members are indices 0..n-1 of the communicator's group (the engine maps
 * them to processes).  One fs_agree_t per communicator; not thread-safe
 * (the engine calls it under its lock); callbacks never re-enter it. */
#ifndef FS_FAILURE_AGREE_H
#define FS_FAILURE_AGREE_H

#include <stddef.h>
#include <stdint.h>

#include "common/fs_status.h"

#define FS_AGREE_MAX_WORDS 4     /* value words an instance agrees on */

typedef struct fs_agree fs_agree_t;

/* Merge of each value word: only idempotent joins (a SUM would count a
 * re-sent contribution twice). */
typedef enum fs_agree_op {
    FS_AGREE_AND = 0,
    FS_AGREE_OR  = 1,
    FS_AGREE_MAX = 2,
    FS_AGREE_MIN = 3
} fs_agree_op_t;

typedef struct fs_agree_input {
    uint32_t        nv;                      /* 0..FS_AGREE_MAX_WORDS */
    uint8_t         op[FS_AGREE_MAX_WORDS];  /* fs_agree_op_t per word */
    uint64_t        v[FS_AGREE_MAX_WORDS];
    const uint64_t *acked;   /* members this process acknowledged failed (n bits); NULL: none */
} fs_agree_input_t;

/* The decision: identical at every process that decides the instance. */
typedef struct fs_agree_result {
    uint32_t        seq;
    uint32_t        nv;
    uint64_t        v[FS_AGREE_MAX_WORDS]; /* each word merged over the contributors */
    const uint64_t *failed;   /* F_D (n bits): the non-contributors and every failure a
                               * contributor knew at its start; valid during the callback */
    uint32_t        nfailed;
    int             unacked;  /* a member of F_D is not acknowledged by every contributor */
} fs_agree_result_t;

typedef struct fs_agree_ops {
    /* Sends msg to member 'to'.  An error is not retried: the protocol re-sends
     * whenever the view changes, and a peer that cannot be reached fails. */
    fs_status_t (*send)(void *arg, uint32_t to, const void *msg, size_t len);
    /* Instance res->seq, started here, is decided (once per instance). */
    void        (*decided)(void *arg, const fs_agree_result_t *res);
} fs_agree_ops_t;

typedef struct fs_agree_config {
    uint32_t n;          /* members */
    uint32_t me;         /* this process's index */
    int      star;       /* 1: star tree (4 hops), 0: binomial (4 log2 n hops) */
} fs_agree_config_t;

typedef struct fs_agree_counters {
    uint64_t sent[4];          /* by message type (index fs_agree_msg_type) */
    uint64_t dropped_stale;    /* older ballot, freed instance, fenced sender */
    uint64_t records;          /* instance records alive now */
} fs_agree_counters_t;

enum fs_agree_msg_type { FS_AGREE_UP = 1, FS_AGREE_PROPOSE = 2, FS_AGREE_DECIDE = 3 };

fs_status_t fs_agree_create(const fs_agree_config_t *cfg, const fs_agree_ops_t *ops,
                            void *arg, fs_agree_t **a_p);
void        fs_agree_destroy(fs_agree_t *a);

/* Starts this process's next instance (instances are numbered 1, 2, ... in
 * call order, the same at every member) with its contribution.  The
 * decision may come before this returns. */
fs_status_t fs_agree_start(fs_agree_t *a, const fs_agree_input_t *in, uint32_t *seq_p);

/* A message from another member.  FS_ERR_PROTO: malformed, nothing changed. */
fs_status_t fs_agree_recv(fs_agree_t *a, const void *msg, size_t len);

/* Member m is gone: failed (fenced by the detector) or, failed == 0, left
 * after MPI_Finalize.  Views only grow; repeating one is harmless. */
fs_status_t fs_agree_gone(fs_agree_t *a, uint32_t m, int failed);

/* Longest message this instance sends or accepts (for receive buffers). */
size_t      fs_agree_msg_max(const fs_agree_t *a);
/* The number fs_agree_start will give the next instance. */
uint32_t    fs_agree_next_seq(const fs_agree_t *a);
uint32_t    fs_agree_coordinator(const fs_agree_t *a);
void        fs_agree_counters(const fs_agree_t *a, fs_agree_counters_t *c_p);

#endif
