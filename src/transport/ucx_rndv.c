/* UCX transport: failstop's own single-copy rendezvous between processes
 * of a node, on the short lane's rings.
 *
 *   sender                                   receiver
 *   takes an acknowledgement word of its
 *   ring, clears it; RTS entry (engine    -> engine told: a descriptor
 *   header + {address, length, pid,          (FS_TL_RX_RNDV)
 *   word, generation})                       recv_data: process_vm_readv of
 *                                            the payload into the buffer
 *   progress sees the word say            <- the word := generation | DONE
 *   "generation, done": op completes         (also when the engine drops it)
 *
 * Why: UCP's rendezvous request and answer cross UCX's shared-memory FIFO,
 * which a sender killed inside its write stops for good (shm_ring.h), and
 * UCP's active-message rendezvous costs a protocol round of its own above
 * the copy (osu_bw 16 KiB 0.8x pml ucx).  Here the request is one ring
 * entry, the answer one word the receiver writes in its own segment (the
 * sender maps its ring's part of it): nothing goes the other way.
 *
 * Failure: a sender that dies leaves its requests behind; the read finds no
 * process (ESRCH, a row of the classification table: the receive fails
 * with the sender's failure) and the engine releases descriptors it kept
 * once told.  A receiver that dies never answers: the sender's operation
 * ends when the engine, told of the failure, cancels it, or when the
 * endpoint closes.  A word is reused only once answered (or with its
 * ring), so a late answer never completes another message; the generation
 * guards against a stale word all the same.
 *
 * Handles: a sender's op handle and a receiver's descriptor are the state's
 * address with bits 63 and 62 set (the fragments' have bit 63 only). */
#define _GNU_SOURCE
#include "transport/ucx_int.h"
#include "common/fs_log.h"
#include "failure/fault_status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#define FS_UCX_RR_DONE    1u     /* answer: the payload was read or dropped */
#define FS_UCX_RR_FAILED  2u     /* answer: the read failed */
#define FS_UCX_RR_BOUNCE  (64u << 10)

typedef struct fs_ucx_rr_tx {
    fs_tl_op_t  *op;         /* NULL once cancelled: waits for its answer */
    fs_tl_ep_t  *tep;
    unsigned     word;
    uint32_t     gen;
    fs_list_t    elem;       /* tl->rr.pending */
} fs_ucx_rr_tx_t;

typedef enum {
    FS_UCX_RR_HELD,          /* the engine has it, or is deciding */
    FS_UCX_RR_TAKEN          /* fetched or dropped inside its upcall */
} fs_ucx_rr_state_t;

typedef struct fs_ucx_rr_rx {
    uint8_t           state;
    pid_t             pid;
    uint64_t          addr;
    uint64_t          len;
    uint32_t          gen;
    _Atomic uint64_t *ack;
} fs_ucx_rr_rx_t;

static void *fs_ucx_rr_tag(void *state)
{
    return (void *)((uintptr_t)state | ((uintptr_t)3 << 62));
}

static void *fs_ucx_rr_untag(const void *tagged)
{
    return (void *)((uintptr_t)tagged & ~((uintptr_t)3 << 62));
}

/* ---- sending ------------------------------------------------------------- */

fs_status_t fs_ucx_rr_send(fs_tl_t *tl, fs_tl_ep_t *tep, const void *hdr, size_t hdr_len,
                           const fs_buf_t *buf, fs_tl_op_t *op)
{
    fs_ucx_rr_tx_t *tx = fs_mpool_get(&tl->rr.tx_pool);
    fs_ucx_rr_rts_t rts;

    if ((tx == NULL) || !fs_ring_ack_take(&tep->lane, &tx->word)) {
        if (tx != NULL) {
            fs_mpool_put(&tl->rr.tx_pool, tx);
        }
        return FS_ERR_AGAIN;        /* UCP's rendezvous takes it */
    }
    tx->gen  = ++tl->rr.gen;
    tx->op   = op;
    tx->tep  = tep;
    rts.addr = (uintptr_t)buf->ptr;
    rts.len  = buf->len;
    rts.pid  = tl->rr.pid;
    rts.word = tx->word;
    rts.gen  = tx->gen;
    rts.pad  = 0;
    if (!fs_ring_send(&tep->lane, FS_UCX_RING_RTS, hdr, hdr_len, &rts, sizeof(rts))) {
        fs_ring_ack_give(&tep->lane, tx->word);
        fs_mpool_put(&tl->rr.tx_pool, tx);
        return FS_ERR_AGAIN;        /* ring full */
    }
    fs_list_push_tail(&tl->rr.pending, &tx->elem);
    op->busy   = 1;
    op->handle = fs_ucx_rr_tag(tx);
    return FS_INPROGRESS;
}

static void fs_ucx_rr_tx_free(fs_tl_t *tl, fs_ucx_rr_tx_t *tx, int give_word)
{
    if (give_word) {
        fs_ring_ack_give(&tx->tep->lane, tx->word);
    }
    fs_list_remove(&tx->elem);
    fs_mpool_put(&tl->rr.tx_pool, tx);
}

static void fs_ucx_rr_op_end(fs_tl_op_t *op, fs_status_t status)
{
    op->busy   = 0;
    op->handle = NULL;
    op->cb(op, status, 0);
}

/* The first waiting send whose receiver answered, taken off the list with
 * its word given back; NULL if none.  *answer_p: the answer. */
static fs_ucx_rr_tx_t *fs_ucx_rr_answered(fs_tl_t *tl, uint64_t *answer_p)
{
    fs_list_t *e;

    for (e = tl->rr.pending.next; e != &tl->rr.pending; e = e->next) {
        fs_ucx_rr_tx_t *tx = fs_container_of(e, fs_ucx_rr_tx_t, elem);
        uint64_t answer    = fs_ring_ack_read(&tx->tep->lane, tx->word);

        if ((answer >> 8) == tx->gen) {
            *answer_p = answer;
            return tx;
        }
    }
    return NULL;
}

/* Completes the sends whose receivers answered.  The list is walked anew
 * after each callback: one may send, cancel or close (and so change it). */
unsigned fs_ucx_rr_progress(fs_tl_t *tl)
{
    unsigned count = 0;
    fs_ucx_rr_tx_t *tx;
    uint64_t answer;

    while ((tx = fs_ucx_rr_answered(tl, &answer)) != NULL) {
        fs_tl_op_t *op = tx->op;

        fs_ucx_rr_tx_free(tl, tx, 1);
        ++count;
        if (op != NULL) {
            /* a read that failed at a live receiver: not this peer's death */
            fs_ucx_rr_op_end(op, ((answer & 0xff) == FS_UCX_RR_DONE) ? FS_OK : FS_ERR_LOCAL);
        }
    }
    return count;
}

/* The op ends now; its word stays taken until the receiver answers (or the
 * ring goes), so that a late answer finds no other message there. */
void fs_ucx_rr_cancel(fs_tl_t *tl, fs_tl_op_t *op)
{
    fs_ucx_rr_tx_t *tx = fs_ucx_rr_untag(op->handle);

    (void)tl;
    tx->op = NULL;
    fs_ucx_rr_op_end(op, FS_ERR_CANCELED);
}

/* The endpoint's ring goes: what still waits on it ends (the list walked
 * anew after each callback, as in progress). */
void fs_ucx_rr_ep_close(fs_tl_t *tl, fs_tl_ep_t *tep)
{
    fs_list_t *e = tl->rr.pending.next;

    while (e != &tl->rr.pending) {
        fs_ucx_rr_tx_t *tx = fs_container_of(e, fs_ucx_rr_tx_t, elem);
        fs_tl_op_t *op     = tx->op;

        if (tx->tep != tep) {
            e = e->next;
            continue;
        }
        fs_ucx_rr_tx_free(tl, tx, 0);
        if (op != NULL) {
            fs_ucx_rr_op_end(op, FS_ERR_CANCELED);
        }
        e = tl->rr.pending.next;
    }
}

/* ---- receiving ----------------------------------------------------------- */

static void fs_ucx_rr_answer(fs_ucx_rr_rx_t *rx, unsigned code)
{
    atomic_store_explicit(rx->ack, ((uint64_t)rx->gen << 8) | code, memory_order_release);
}

int fs_ucx_rr_rts_in(fs_tl_t *tl, uint32_t slot, const void *hdr, size_t hlen,
                     const void *data, size_t len)
{
    _Atomic uint64_t *ack;
    fs_ucx_rr_rts_t rts;
    fs_ucx_rr_rx_t *rx;
    fs_tl_rx_t info;
    fs_status_t status;

    if (len != sizeof(rts)) {
        return 0;
    }
    memcpy(&rts, data, sizeof(rts));    /* the sender's memory: read once */
    ack = fs_ring_rx_ack(&tl->shm.rx, slot, rts.word);
    if ((ack == NULL) || (rts.pid <= 0)) {
        return 0;
    }
    rx = fs_mpool_get(&tl->rr.rx_pool);
    if (rx == NULL) {
        FS_ERROR("UCX transport: no memory for an incoming rendezvous of %llu bytes: "
                 "its sender is told it failed", (unsigned long long)rts.len);
        atomic_store_explicit(ack, ((uint64_t)rts.gen << 8) | FS_UCX_RR_FAILED,
                              memory_order_release);
        return 1;
    }
    rx->state = FS_UCX_RR_HELD;
    rx->pid   = rts.pid;
    rx->addr  = rts.addr;
    rx->len   = rts.len;
    rx->gen   = rts.gen;
    rx->ack   = ack;
    info.desc  = fs_ucx_rr_tag(rx);
    info.flags = FS_TL_RX_RNDV;
    tl->rr.cb_rx = rx;
    status = tl->up.am_recv(tl->up_arg, FS_AM_MATCH, hdr, hlen, NULL, rts.len, &info);
    tl->rr.cb_rx = NULL;
    if ((rx->state == FS_UCX_RR_HELD) && (status == FS_INPROGRESS)) {
        return 1;                   /* the engine keeps it */
    }
    if (rx->state == FS_UCX_RR_HELD) {
        fs_ucx_rr_answer(rx, FS_UCX_RR_DONE);       /* dropped: the sender is done */
    }
    fs_mpool_put(&tl->rr.rx_pool, rx);
    return 1;
}

/* Reads n bytes at the sender's address into buf from offset 0: straight
 * into a contiguous buffer, through the bounce buffer and dt_ops into
 * another.  0 or an errno. */
static int fs_ucx_rr_read(fs_tl_t *tl, const fs_ucx_rr_rx_t *rx, const fs_buf_t *buf, size_t n)
{
    size_t done = 0;

    while (done < n) {
        int direct      = (buf->dt == NULL);
        size_t want     = n - done;
        struct iovec local, remote;
        ssize_t got;

        if (!direct && (want > FS_UCX_RR_BOUNCE)) {
            want = FS_UCX_RR_BOUNCE;
        }
        local.iov_base  = direct ? (uint8_t *)buf->ptr + done : tl->rr.bounce;
        local.iov_len   = want;
        remote.iov_base = (void *)(uintptr_t)(rx->addr + done);
        remote.iov_len  = want;
        got = process_vm_readv(rx->pid, &local, 1, &remote, 1, 0);
        if (got <= 0) {
            return (got == 0) ? EFAULT : errno;
        }
        if (!direct) {
            fs_buf_unpack(tl->dt_ops, buf, done, tl->rr.bounce, (size_t)got);
        }
        done += (size_t)got;
    }
    return 0;
}

/* Fetches the payload at once: no callback.  Truncation reads only what
 * fits (the engine reports it). */
fs_status_t fs_ucx_rr_recv_data(fs_tl_t *tl, void *desc, const fs_buf_t *buf, size_t msg_len)
{
    fs_ucx_rr_rx_t *rx = fs_ucx_rr_untag(desc);
    size_t n           = (msg_len < rx->len) ? msg_len : rx->len;
    fs_status_t status = FS_OK;
    int err;

    n   = (n < buf->len) ? n : buf->len;
    err = fs_ucx_rr_read(tl, rx, buf, n);
    if (err != 0) {
        const fs_fault_row_t *row = fs_fault_classify(FS_FAULT_SRC_CMA, err, 0,
                                                      FS_FAULT_CTX_OP);
        status = fs_fault_to_status(row->cls);
        FS_DEBUG("rendezvous read of %zu bytes from process %d: %s (%s)", n,
                 (int)rx->pid, strerror(err), fs_fault_class_name(row->cls));
    }
    fs_ucx_rr_answer(rx, (err == 0) ? FS_UCX_RR_DONE : FS_UCX_RR_FAILED);
    if (rx == tl->rr.cb_rx) {
        rx->state = FS_UCX_RR_TAKEN;    /* freed when its upcall returns */
    } else {
        fs_mpool_put(&tl->rr.rx_pool, rx);
    }
    return status;
}

void fs_ucx_rr_release(fs_tl_t *tl, void *desc)
{
    fs_ucx_rr_rx_t *rx = fs_ucx_rr_untag(desc);

    fs_ucx_rr_answer(rx, FS_UCX_RR_DONE);
    if (rx == tl->rr.cb_rx) {
        rx->state = FS_UCX_RR_TAKEN;
    } else {
        fs_mpool_put(&tl->rr.rx_pool, rx);
    }
}

/* ---- setup --------------------------------------------------------------- */

/* Whether peers may read this process's memory: Yama's ptrace_scope 0, or 1
 * once any process is allowed to (as Open MPI's vader and UCX's CMA do). */
static int fs_ucx_rr_readable(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = 0;

    if (f != NULL) {
        if (fscanf(f, "%d", &scope) != 1) {
            scope = 3;
        }
        fclose(f);
    }
    if (scope == 0) {
        return 1;
    }
    return (scope == 1) && (prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) == 0);
}

fs_status_t fs_ucx_rr_init(fs_tl_t *tl, const fs_tl_config_t *cfg)
{
    fs_list_init(&tl->rr.pending);
    tl->rr.pid = (int32_t)getpid();
    /* a chunk of each now: the first rendezvous must not allocate */
    if ((fs_mpool_init(&tl->rr.tx_pool, "ucx-rr-tx", sizeof(fs_ucx_rr_tx_t), 64, 0,
                       NULL) != FS_OK) ||
        (fs_mpool_init(&tl->rr.rx_pool, "ucx-rr-rx", sizeof(fs_ucx_rr_rx_t), 64, 0,
                       NULL) != FS_OK) ||
        (fs_mpool_reserve(&tl->rr.tx_pool) != FS_OK) ||
        (fs_mpool_reserve(&tl->rr.rx_pool) != FS_OK)) {
        return FS_ERR_NO_MEMORY;
    }
    tl->rr.bounce = malloc(FS_UCX_RR_BOUNCE);
    if (tl->rr.bounce == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    tl->rr.on = cfg->shm_rndv && fs_ucx_rr_readable();
    if (cfg->shm_rndv && !tl->rr.on) {
        FS_DEBUG("no rendezvous on the shared-memory lane: ptrace rules forbid "
                 "peers to read this process");
    }
    return FS_OK;
}

/* Sends still waiting are abandoned (their ops are the engine's to end,
 * as UCX's closes'); kept descriptors go with the pool. */
void fs_ucx_rr_fini(fs_tl_t *tl)
{
    if (tl->rr.bounce == NULL) {
        return;
    }
    fs_list_init(&tl->rr.pending);
    fs_mpool_cleanup(&tl->rr.tx_pool);
    fs_mpool_cleanup(&tl->rr.rx_pool);
    free(tl->rr.bounce);
    tl->rr.bounce = NULL;
}
