/* The one error-classification table of failstop.
 *
 * Every status a transport can report -- UCX ucs_status_t, libfabric FI_E*
 * plus prov_errno, InfiniBand ibv_wc_status and ibv_event_type -- maps to one
 * fault class.  The rows carry numbers plus the symbolic name as a string,
 * because src/failure/ must not include transport headers; the unit test
 * cross-checks every number against the real headers.
 *
 * Rules the table follows:
 *  - local or unknown errors are never blamed on a peer (each source ends with
 *    a default row: LOCAL_FATAL);
 *  - a flush is a consequence, never a cause: it follows the error that put
 *    the endpoint or QP into error;
 *  - a status that may just mean "slow" is a suspicion, not a fail-stop.
 *
 * Lookup: rows are scanned in order; the first row whose source, code range,
 * prov_errno (or wildcard) and context mask match wins.  docs/
 * ERROR-CLASSIFICATION.md is a readable copy of the table. */
#ifndef FS_FAILURE_CLASSIFY_H
#define FS_FAILURE_CLASSIFY_H

#include <stddef.h>
#include <stdint.h>

typedef enum fs_fault_class {
    FS_FAULT_NONE = 0,          /* success or "not an error" */
    FS_FAULT_PEER_FAILSTOP,     /* the peer process is gone */
    FS_FAULT_PEER_SUSPECTED,    /* the peer may be dead, hung or just slow */
    FS_FAULT_FLUSH,             /* consequence of an earlier error: follows its cause */
    FS_FAULT_LOCAL_FATAL,       /* local/link/device problem: never blamed on a peer */
    FS_FAULT_TRANSIENT,         /* retry later */
    FS_FAULT_USER_ERROR         /* misuse: fail this operation only */
} fs_fault_class_t;

typedef enum fs_fault_source {
    FS_FAULT_SRC_UCX,           /* ucs_status_t (negative errors) */
    FS_FAULT_SRC_OFI,           /* FI_E* (positive, as in fi_cq_err_entry.err) + prov_errno */
    FS_FAULT_SRC_IBV_WC,        /* enum ibv_wc_status */
    FS_FAULT_SRC_IBV_ASYNC,     /* enum ibv_event_type */
    FS_FAULT_SRC_CMA,           /* errno of process_vm_readv (failstop's own
                                   rendezvous between processes of a node) */
    FS_FAULT_SRC_LAST = FS_FAULT_SRC_CMA
} fs_fault_source_t;

/* Contexts: a bitmask.  Pass one of OP, EP_ERROR or SLOW_LINK (the link kind
 * the status came from), or EP_CREATE for a status of endpoint creation or
 * connection.  Rows are ordered so that a mask mixing SLOW_LINK or EP_CREATE
 * with OP/EP_ERROR classifies like SLOW_LINK or EP_CREATE alone: the more
 * cautious reading wins.  Context 0 matches only context-free rows. */
#define FS_FAULT_CTX_OP        0x1u  /* completion of an operation on a process-death-reporting link (tcp, shm) */
#define FS_FAULT_CTX_EP_ERROR  0x2u  /* endpoint error callback / EQ event on such a link */
#define FS_FAULT_CTX_SLOW_LINK 0x4u  /* same, but on a link where a timeout may just mean a slow/hung peer (IB RC/UD/DC, EFA, CXI) */
#define FS_FAULT_CTX_EP_CREATE 0x8u  /* status returned when creating/connecting an endpoint */
/* A modifier, passed with one of the above by fs_fault_cross_host: the link
 * goes to another host, through a network that can drop, time out or reset
 * it (a link flap, a middlebox, a forged reset) while the peer lives.  Rows
 * for it come first for their code: there a status that reads as a death
 * on its own is FLUSH (a suspicion the failure detector decides). */
#define FS_FAULT_CTX_CROSS_HOST 0x10u
#define FS_FAULT_CTX_ANY       0x1fu
#define FS_FAULT_PROV_ANY      INT32_MIN   /* prov_errno wildcard */

typedef struct fs_fault_row {
    fs_fault_source_t source;
    int32_t           code;         /* first code of the row */
    int32_t           code_last;    /* inclusive; equal to code for a single code */
    int32_t           prov_errno;   /* OFI only; FS_FAULT_PROV_ANY elsewhere */
    uint32_t          contexts;     /* FS_FAULT_CTX_* mask the row applies to */
    fs_fault_class_t  cls;
    const char       *name;         /* symbolic name(s); "A..B" for a range, "ERR+PROV" for OFI with prov_errno */
    const char       *reason;       /* one line: why this class */
} fs_fault_row_t;

/* Never returns NULL: falls back to the source's default row.  prov_errno is
 * ignored for sources other than OFI (pass 0).  For OFI, code may be given as
 * FI_E* or as a function's -FI_E* return; prov_errno is used as reported.
 * Classify only posting returns, completions and endpoint/EQ events, not the
 * return of fi_cancel (its -FI_ENOENT just means "nothing to cancel"). */
const fs_fault_row_t *fs_fault_classify(fs_fault_source_t source, int32_t code,
                                        int32_t prov_errno, uint32_t context);

/* The reading of row (a transport's classification of a status on an
 * established link) when that link goes to another host: the row for the
 * same status with FS_FAULT_CTX_CROSS_HOST added, row itself where none
 * differs. */
const fs_fault_row_t *fs_fault_cross_host(const fs_fault_row_t *row);

/* "PEER_FAILSTOP" etc.; "INVALID" for a value outside the enum. */
const char *fs_fault_class_name(fs_fault_class_t cls);

/* For tests/docs: the whole table. */
const fs_fault_row_t *fs_fault_table(size_t *count_p);

#endif
