/* Wire headers.  Every message is a transport active message whose user
 * header is one of these; payload follows as the AM data (eager) or is
 * fetched by the receiver (rendezvous).  Integers are in host byte order:
 * failstop peers run the same build on the same architecture. */
#ifndef FS_PROTO_HDR_H
#define FS_PROTO_HDR_H

#include <stdint.h>

/* FS_AM_MATCH: one MPI point-to-point message (16 bytes). */
typedef struct fs_hdr_match {
    uint32_t  cid;      /* Open MPI context id of the communicator */
    int32_t   tag;
    int32_t   src;      /* sender's rank in its local group */
    uint16_t  seq;      /* per (communicator, sender, receiver) */
    uint8_t   flags;    /* FS_HDR_F_* */
    uint8_t   pad;
} fs_hdr_match_t;

#define FS_HDR_F_SYNC   0x1u   /* synchronous send (sent as rendezvous) */

/* FS_AM_MATCH, short form (8 bytes), told apart by its length: the same
 * message when context id and rank fit 16 bits, the tag fits int16 (Open
 * MPI's collective tags are small negatives) and no flag is set.  Why: on
 * shared memory UCX inlines the message into a FIFO element whose first
 * cache line holds ~36 bytes of headers and payload; 8 header bytes fewer
 * keep 16-byte messages in one line (a second line costs ~0.1 us). */
typedef struct fs_hdr_short {
    uint16_t  cid;
    uint16_t  src;
    int16_t   tag;
    uint16_t  seq;
} fs_hdr_short_t;

/* FS_AM_CTRL: control messages between engines (24 bytes). */
typedef struct fs_hdr_ctrl {
    uint8_t   type;     /* FS_CTRL_* */
    uint8_t   flags;    /* FS_CTRL_F_* */
    uint8_t   pad[6];
    uint64_t  sender;   /* sender's process id (fs_ep_t.id at the receiver) */
    uint64_t  arg;
} fs_hdr_ctrl_t;

enum {
    /* The sender is finalizing; arg = matching messages it sent to us.  Once
     * we have taken that many, the peer has left: never a failure.  With
     * FS_CTRL_F_RECEIVING it still has receives we could match (freed
     * requests MPI_Finalize must complete), so sends to it stay allowed
     * until its DONE. */
    FS_CTRL_BYE    = 1,
    /* The process named by arg (its id) has failed. */
    FS_CTRL_FAILED = 2,
    /* The sender called MPI_Abort; arg = the error code. */
    FS_CTRL_ABORT  = 3,
    /* The sender, which left with FS_CTRL_F_RECEIVING, receives no more. */
    FS_CTRL_DONE   = 4
};

#define FS_CTRL_F_RECEIVING  0x1u

/* FS_AM_AGREE: an agreement message (src/failure/agree.h) for the
 * communicator cid whose members have fingerprint fp, incarnation inc (16
 * bytes); the message is the payload (REVOKE's: its sender's member index,
 * u32), always eager.  Open MPI reuses context ids, and a communicator
 * freed and made again over the same processes (MPI_Comm_dup of the same
 * parent) has the same fingerprint: inc tells them apart, so that a revoke
 * still on its way for the old one does not revoke the new one. */
typedef struct fs_hdr_agree {
    uint32_t  cid;
    uint16_t  kind;     /* FS_AGREE_KIND_* */
    uint16_t  inc;      /* fs_comm_t.inc: communicators made here before
                           with this cid and fp, plus one (wraps) */
    uint64_t  fp;       /* hash of the members' process ids, in member order
                           (fs_comm_members) */
} fs_hdr_agree_t;

/* The engine's address for the modex: this preamble, then the transport's
 * own.  The wire version is checked once per peer, when its endpoint is
 * created: a peer of another failstop version is refused with a message
 * saying so, and no per-message header pays for a version field.  (Foreign
 * jobs cannot reach the active-message handler at all: the transport only
 * delivers over endpoints opened to addresses from this job's modex, and a
 * UCX worker address is unique to its process.) */
#define FS_WIRE_MAGIC   0x50545346u  /* "FSTP" */
#define FS_WIRE_VERSION 7u

typedef struct fs_hdr_addr {
    uint32_t  magic;    /* FS_WIRE_MAGIC */
    uint16_t  version;  /* FS_WIRE_VERSION */
    uint16_t  pad;
} fs_hdr_addr_t;

enum {
    FS_AGREE_KIND_MSG    = 0,   /* an agreement message (payload) */
    FS_AGREE_KIND_REVOKE = 1    /* the communicator is revoked (no payload) */
};

_Static_assert(sizeof(fs_hdr_match_t) == 16, "match header is 16 bytes");
_Static_assert(sizeof(fs_hdr_short_t) == 8, "short match header is 8 bytes");
_Static_assert(sizeof(fs_hdr_ctrl_t) == 24, "control header is 24 bytes");
_Static_assert(sizeof(fs_hdr_agree_t) == 16, "agreement header is 16 bytes");

#endif
