/* The agreement's state, shared by agree.c (the protocol) and agree_wire.c
 * (message encoding).  Internal to src/failure/. */
#ifndef FS_FAILURE_AGREE_INT_H
#define FS_FAILURE_AGREE_INT_H

#include "failure/agree.h"
#include "common/fs_bitmap.h"

#define FS_AGREE_NONE   UINT32_MAX   /* no ballot */
#define FS_AGREE_AHEAD  4096         /* instances a peer may be ahead of us */

/* A proposal: what is decided. */
typedef struct fs_agree_prop {
    uint64_t  v[FS_AGREE_MAX_WORDS];
    uint32_t  unacked;
    uint32_t  lo;        /* every contributor had decided every instance <= lo */
    uint64_t *fd;        /* F_D */
} fs_agree_prop_t;

/* The merged state of a subtree for one ballot. */
typedef struct fs_agree_state {
    uint32_t        ballot;
    uint64_t        v[FS_AGREE_MAX_WORDS];
    uint32_t        lo;
    uint64_t       *c;           /* contributors */
    uint64_t       *acc;         /* members that accepted this ballot's proposal */
    uint64_t       *fv;          /* union of contributors' failed views */
    uint64_t       *nak;         /* union of what contributors have NOT acknowledged */
    uint32_t        acc_ballot;  /* highest accepted proposal among contributors */
    fs_agree_prop_t accp;
    struct fs_agree_state *next; /* buffered states, by ballot */
} fs_agree_state_t;

typedef enum fs_agree_rec_status {
    FS_AGREE_REC_NEW     = 0,    /* known from a message only */
    FS_AGREE_REC_RUNNING = 1,    /* started here */
    FS_AGREE_REC_DECIDED = 2
} fs_agree_rec_status_t;

typedef struct fs_agree_rec {
    struct fs_agree_rec *next;
    uint32_t         seq;
    int              status;
    int              started;
    int              delivered;
    uint32_t         nv;         /* 0 and op unset until known */
    uint8_t          op[FS_AGREE_MAX_WORDS];
    /* this process's own contribution */
    uint64_t         own_v[FS_AGREE_MAX_WORDS];
    uint32_t         own_lo;
    uint64_t        *own_fv, *own_nak;
    /* the highest proposal this process accepted */
    uint32_t         my_ballot;
    fs_agree_prop_t  mine;
    fs_agree_state_t m;          /* for ballot m.ballot = the coordinator */
    fs_agree_state_t *buf;       /* states received for higher ballots */
    int              sent;       /* last UP reflects m and went to parent */
    uint32_t         parent;     /* FS_AGREE_NONE at the coordinator */
    fs_agree_prop_t  decision;
} fs_agree_rec_t;

struct fs_agree {
    fs_agree_config_t   cfg;
    fs_agree_ops_t      ops;
    void               *arg;
    uint64_t           *gone;     /* failed or left */
    uint64_t           *failed;
    uint64_t           *live;     /* ~gone, within n */
    uint32_t            coord;
    uint32_t            next_seq; /* last started */
    uint32_t            done_upto;
    uint32_t            gc_lo;    /* records <= it are freed */
    fs_agree_rec_t     *recs;
    uint8_t            *txbuf;
    uint64_t           *rx;       /* scratch bitmaps of a message being parsed */
    uint64_t           *own;      /* scratch: this process's C and A */
    size_t              msg_max;
    fs_agree_counters_t cnt;
};

/* Wire header, host byte order (one architecture per job, as every
 * failstop header).  UP carries: V, sets C A FV NAK, then the accepted
 * proposal if acc_ballot != NONE; PROPOSE/DECIDE carry the proposal. */
typedef struct fs_agree_hdr {
    uint8_t  type;
    uint8_t  nv;
    uint8_t  ops;         /* 2 bits per word */
    uint8_t  pad;
    uint32_t seq;
    uint32_t from;
    uint32_t ballot;      /* UP: the coordinator the state is for; else the proposer */
    uint32_t acc_ballot;  /* UP: ballot of the carried proposal, or NONE */
    uint32_t lo;          /* UP: merged lo */
} fs_agree_hdr_t;

/* a message being decoded: pointers into the buffer's scratch */
typedef struct fs_agree_in {
    fs_agree_hdr_t   h;
    fs_agree_state_t st;         /* UP */
    fs_agree_prop_t  prop;       /* PROPOSE, DECIDE */
} fs_agree_in_t;

size_t      fs_agree_wire_max(uint32_t n);
size_t      fs_agree_rx_words(uint32_t n);
size_t      fs_agree_wire_up(fs_agree_t *a, const fs_agree_rec_t *r, uint8_t *out);
size_t      fs_agree_wire_prop(fs_agree_t *a, const fs_agree_rec_t *r, uint8_t type,
                               uint32_t ballot, const fs_agree_prop_t *p, uint8_t *out);
fs_status_t fs_agree_wire_parse(const fs_agree_t *a, const void *msg, size_t len,
                                uint64_t *scratch, fs_agree_in_t *in_p);

#endif
