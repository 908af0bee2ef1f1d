/* The failure detector's thread (see hb.h).
 *
 * One thread owns the detector's datagram instance (dg.h, UDP: no
 * connections to set up or break while processes die) and its fs_det_t; no
 * other thread touches them.  The MPI thread talks to it
 * through a mutex for the rare commands (arm, leave, stop, stats) and
 * through per-rank atomic flags for failures the engine found; both wake
 * the thread with the transport's signal.  The thread sleeps on the
 * transport's file descriptor until a message arrives or the detector's
 * next deadline.
 *
 * Transport upcalls only queue what arrived; the protocol runs between
 * progress calls, so nothing is sent from inside one.  Errors of detector
 * connections (none with UDP) are not failures: only heartbeat silence, or
 * the engine, decides. */
#define _GNU_SOURCE
#include "detector/hb.h"
#include "detector/pidwatch.h"
#include "common/fs_log.h"
#include "common/fs_time.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Buffers are a fixed number of messages, whatever n: per-process memory
 * stays O(n) bits (a SYNC is 2 bits per rank).  Best effort: a message that
 * finds them full is dropped like a lost datagram; beats repeat and
 * anti-entropy repairs. */
#define FS_HB_RXQ      256  /* messages queued by one progress call */
#define FS_HB_RX_DATA  8    /* of which carrying a SYNC payload */
#define FS_HB_EARLY    64   /* engine reports kept until fs_hb_arm */

typedef struct fs_hb_rx {
    fs_det_msg_t msg;
    size_t       len;
    uint8_t     *data;              /* sync_len bytes */
} fs_hb_rx_t;

typedef struct fs_hb_peer {
    fs_dg_peer_t    *ep;            /* opened on first use */
    const void      *addr;          /* its datagram address */
    size_t           addr_len;
    fs_pw_id_t       proc;          /* to watch it exit (pidwatch.h) */
} fs_hb_peer_t;

struct fs_hb {
    const fs_dg_ops_t *dg_ops;
    fs_dg_t           *dg;
    const char        *if_include;  /* params->hb_if */
    fs_det_config_t    det_cfg;
    pthread_t          thread;
    pthread_mutex_t    lock;
    pthread_cond_t     cond;
    /* under lock */
    int                started;     /* transport open (or failed: start_status) */
    fs_status_t        start_status;
    int                armed, leave, left, stop;
    double             armed_at;    /* fs_time_now() at fs_hb_arm */
    fs_hb_host_t       host;
    uint8_t           *pub;         /* published address: datagram address, */
    size_t             pub_len;     /* then fs_pw_id_t */
    fs_det_stats_t     stats_copy;
    int                multi_host;   /* some process is on another host */
    /* engine reports and checks (fs_hb_check): any thread; bitmaps */
    _Atomic uint64_t  *reported;
    _Atomic uint64_t  *checked;
    atomic_uint        checks;
    uint32_t           early[FS_HB_EARLY];  /* under lock, before arm */
    unsigned           nearly;
    atomic_uint        reports;
    /* detector thread only */
    fs_det_t          *det;
    fs_hb_peer_t      *peers;
    uint8_t           *addr_buf;
    fs_hb_rx_t         rxq[FS_HB_RXQ];
    unsigned           rx_count, rx_data_used;
    uint64_t           rx_dropped;
    size_t             sync_len;
    uint8_t           *rx_data;
    uint32_t           watch_rank;  /* whose exit watch_fd shows (n: none) */
    int                watch_fd;    /* -1: none */
    int                watch_fired; /* watch_fd was readable */
};

fs_status_t fs_hb_enabled(const fs_params_t *params, int *enabled_p)
{
    *enabled_p = params->hb_period_ms > 0;
    if (!*enabled_p) {
        return FS_OK;
    }
    if (params->hb_timeout_ms < 3 * params->hb_period_ms) {
        FS_ERROR("pml_failstop_hb_timeout_ms (%d) must be at least 3 x "
                 "pml_failstop_hb_period_ms (%d)", params->hb_timeout_ms,
                 params->hb_period_ms);
        return FS_ERR_INVALID;
    }
    if (params->hb_timeout_remote_ms < params->hb_timeout_ms) {
        FS_ERROR("pml_failstop_hb_timeout_remote_ms (%d) must be at least "
                 "pml_failstop_hb_timeout_ms (%d)", params->hb_timeout_remote_ms,
                 params->hb_timeout_ms);
        return FS_ERR_INVALID;
    }
    if (params->hb_timeout_host_ms < params->hb_timeout_remote_ms) {
        FS_ERROR("pml_failstop_hb_timeout_host_ms (%d) must be at least "
                 "pml_failstop_hb_timeout_remote_ms (%d)", params->hb_timeout_host_ms,
                 params->hb_timeout_remote_ms);
        return FS_ERR_INVALID;
    }
    return FS_OK;
}

/* ---- datagrams (detector thread, inside progress) ------------------------- */

static void fs_hb_recv(void *arg, const void *hdr, size_t hdr_len, const void *data,
                       size_t len)
{
    fs_hb_t *hb = arg;
    fs_hb_rx_t *slot;

    if ((hdr_len != sizeof(fs_det_msg_t)) || (hb->det == NULL) || (len > hb->sync_len)) {
        return;             /* before arming, or malformed: a later beat repairs it */
    }
    if ((hb->rx_count == FS_HB_RXQ) ||
        ((len != 0) && (hb->rx_data_used == FS_HB_RX_DATA))) {
        ++hb->rx_dropped;
        return;
    }
    slot = &hb->rxq[hb->rx_count++];
    memcpy(&slot->msg, hdr, sizeof(slot->msg));
    slot->len  = len;
    slot->data = NULL;
    if (len != 0) {
        slot->data = hb->rx_data + (size_t)hb->rx_data_used++ * hb->sync_len;
        memcpy(slot->data, data, len);
    }
}

/* ---- sending (fs_det_ops_t) ------------------------------------------------ */

static fs_dg_peer_t *fs_hb_peer_ep(fs_hb_t *hb, fs_hb_peer_t *peer)
{
    if ((peer->ep == NULL) &&
        (hb->dg_ops->peer_open(hb->dg, peer->addr, peer->addr_len, &peer->ep) != FS_OK)) {
        peer->ep = NULL;
    }
    return peer->ep;
}

/* Best effort: beats repeat, syncs repair what a full socket drops. */
static void fs_hb_send(void *arg, uint32_t to, const fs_det_msg_t *msg,
                       const void *data, size_t len)
{
    fs_hb_t *hb = arg;
    fs_dg_peer_t *ep;

    if ((len > hb->sync_len) || ((ep = fs_hb_peer_ep(hb, &hb->peers[to])) == NULL)) {
        return;
    }
    (void)hb->dg_ops->send(hb->dg, ep, msg, sizeof(*msg), data, len);
}

static void fs_hb_failed(void *arg, uint32_t rank, fs_det_cause_t cause)
{
    fs_hb_t *hb = arg;

    FS_INFO("failure detector: process %u failed (%s)", rank,
            (cause == FS_DET_CAUSE_TIMEOUT) ? "no heartbeat: suspected" :
            (cause == FS_DET_CAUSE_EXIT)    ? "exited without finalizing" :
            (cause == FS_DET_CAUSE_MESSAGE) ? "reported by another process" :
                                              "reported by this process");
    /* counters first: whoever sees the failure may read them */
    pthread_mutex_lock(&hb->lock);
    hb->stats_copy = *fs_det_stats(hb->det);
    pthread_mutex_unlock(&hb->lock);
    hb->host.failed(hb->host.arg, rank, cause);
}

static void fs_hb_excluded(void *arg, uint32_t by)
{
    fs_hb_t *hb = arg;

    hb->host.excluded(hb->host.arg, by);
}

static uint64_t fs_hb_host(void *arg, uint32_t rank)
{
    fs_hb_t *hb = arg;

    return hb->dg_ops->addr_host(hb->dg, hb->peers[rank].addr, hb->peers[rank].addr_len);
}

/* rank on another host than this process (never without addr_host). */
static int fs_hb_remote(fs_hb_t *hb, uint32_t rank)
{
    return fs_hb_host(hb, rank) != fs_hb_host(hb, hb->det_cfg.me);
}

static void fs_hb_partitioned(void *arg, uint32_t lost, uint32_t view)
{
    fs_hb_t *hb = arg;

    hb->host.partitioned(hb->host.arg, lost, view);
}

static int fs_hb_exited(void *arg, uint32_t rank)
{
    fs_hb_t *hb = arg;

    return fs_pw_exited(&hb->peers[hb->det_cfg.me].proc, &hb->peers[rank].proc);
}

static int fs_hb_runnable(void *arg, uint32_t rank)
{
    fs_hb_t *hb = arg;

    return fs_pw_runnable(&hb->peers[hb->det_cfg.me].proc, &hb->peers[rank].proc);
}

static const fs_det_ops_t fs_hb_det_ops = {
    .send        = fs_hb_send,
    .failed      = fs_hb_failed,
    .excluded    = fs_hb_excluded,
    .host        = fs_hb_host,
    .partitioned = fs_hb_partitioned,
    .exited      = fs_hb_exited,
    .runnable    = fs_hb_runnable,
};

/* ---- the thread ------------------------------------------------------------ */

/* Allocates what the detector needs for n processes (arm time, detector
 * thread; nothing is allocated after this). */
static fs_status_t fs_hb_setup(fs_hb_t *hb, double now)
{
    hb->sync_len = fs_det_sync_len(hb->det_cfg.n);
    hb->rx_data  = calloc(FS_HB_RX_DATA, hb->sync_len);
    if (hb->rx_data == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    if (fs_det_create(&hb->det_cfg, &fs_hb_det_ops, hb, &hb->det) != FS_OK) {
        return FS_ERR_NO_MEMORY;
    }
    fs_det_start(hb->det, now);
    return FS_OK;
}

/* Handles what the MPI thread asked for; returns 0 when the thread must end. */
static int fs_hb_commands(fs_hb_t *hb, double now)
{
    int run;

    pthread_mutex_lock(&hb->lock);
    if (hb->armed && (hb->det == NULL) && (fs_hb_setup(hb, now) != FS_OK)) {
        FS_ERROR("failure detector: out of memory; hung processes will not "
                 "be detected");
        hb->armed = 0;
    }
    if (hb->leave && !hb->left) {
        if (hb->det != NULL) {
            fs_det_leave(hb->det, now);
        }
        hb->left = 1;
    }
    if (hb->det != NULL) {
        hb->stats_copy = *fs_det_stats(hb->det);
    }
    run = !hb->stop;
    pthread_cond_broadcast(&hb->cond);
    pthread_mutex_unlock(&hb->lock);
    return run;
}

/* Hands the ranks set in bits (counted by *count) to take, on this thread. */
static void fs_hb_take_bits(fs_hb_t *hb, _Atomic uint64_t *bits_v, atomic_uint *count,
                            void (*take)(fs_det_t *, uint32_t, double), double now)
{
    uint32_t w, nwords;

    if ((atomic_load_explicit(count, memory_order_acquire) == 0) || (hb->det == NULL)) {
        return;
    }
    /* det_cfg is only read once det exists: this thread set it up under
     * the lock after fs_hb_arm wrote det_cfg */
    nwords = (hb->det_cfg.n + 63) / 64;
    atomic_store_explicit(count, 0, memory_order_relaxed);
    for (w = 0; w < nwords; ++w) {
        uint64_t bits = atomic_exchange_explicit(&bits_v[w], 0, memory_order_acq_rel);

        while (bits != 0) {
            take(hb->det, w * 64 + (uint32_t)__builtin_ctzll(bits), now);
            bits &= bits - 1;
        }
    }
}

static void fs_hb_take_reports(fs_hb_t *hb, double now)
{
    /* the bit words exist once armed; det, this thread's own, is made
     * after fs_hb_arm allocated them (under the lock): no read of the
     * pointers before (tsan: a race with fs_hb_copy_peers) */
    if (hb->det == NULL) {
        return;
    }
    fs_hb_take_bits(hb, hb->reported, &hb->reports, fs_det_report, now);
    fs_hb_take_bits(hb, hb->checked, &hb->checks, fs_det_check, now);
}

/* Watches the observed process exit, when it runs on this host (kernel,
 * network stack, pid namespace).  An exit seen by the last sleep is passed
 * on only now, after the datagrams that arrived with it were read: a
 * process that finalized sent its LEAVE before it exited, and the detector
 * then knows it left. */
static void fs_hb_watch(fs_hb_t *hb, double now)
{
    uint32_t r;

    if (hb->watch_fired) {
        hb->watch_fired = 0;
        fs_pw_close(hb->watch_fd);
        hb->watch_fd = -1;
        fs_det_exited(hb->det, hb->watch_rank, now);
    }
    r = fs_det_observed(hb->det);
    if (r == hb->watch_rank) {
        return;
    }
    fs_pw_close(hb->watch_fd);
    hb->watch_fd   = -1;
    hb->watch_rank = r;
    if ((r >= hb->det_cfg.n) || fs_hb_remote(hb, r)) {
        return;
    }
    if (fs_pw_open(&hb->peers[hb->det_cfg.me].proc, &hb->peers[r].proc, &hb->watch_fd) ==
        FS_ERR_PEER_FAILED) {
        fs_det_exited(hb->det, r, now);
    }
}

static void fs_hb_take_rx(fs_hb_t *hb, double now)
{
    unsigned i;

    /* messages handled here may queue nothing new: sends do not progress */
    for (i = 0; i < hb->rx_count; ++i) {
        fs_det_rx(hb->det, &hb->rxq[i].msg, hb->rxq[i].data, hb->rxq[i].len, now);
    }
    hb->rx_count     = 0;
    hb->rx_data_used = 0;
}

/* A command or a report came after this loop looked for them: its wake-up
 * datagram may already have been drained by the transport's progress, so
 * poll() would not see it (a departure then waited up to 1 s for the
 * LEAVE: "departure not announced within 1000 ms" under load). */
static int fs_hb_command_waits(fs_hb_t *hb)
{
    int waits;

    pthread_mutex_lock(&hb->lock);
    waits = hb->stop || (hb->leave && !hb->left) || (hb->armed && (hb->det == NULL));
    pthread_mutex_unlock(&hb->lock);
    return waits || ((hb->det != NULL) &&
                     ((atomic_load_explicit(&hb->reports, memory_order_acquire) != 0) ||
                      (atomic_load_explicit(&hb->checks, memory_order_acquire) != 0)));
}

/* Sleeps until a datagram arrives, the watched process exits or the
 * detector's deadline. */
static void fs_hb_sleep(fs_hb_t *hb, int fd, double now)
{
    double next = (hb->det != NULL) ? fs_det_next_deadline(hb->det) : now + 1.0;
    struct pollfd pfd[2] = {{fd, POLLIN, 0}, {hb->watch_fd, POLLIN, 0}};
    nfds_t nfds = (hb->watch_fd >= 0) ? 2 : 1;
    double ms = (next - now) * 1e3;

    if (fs_hb_command_waits(hb)) {
        return;                         /* commands pending */
    }
    ms = (ms < 0.0) ? 0.0 : ((ms > 1000.0) ? 1000.0 : ms);
    if ((poll(pfd, nfds, (int)ceil(ms)) > 0) && (nfds == 2) && (pfd[1].revents != 0)) {
        hb->watch_fired = 1;
    }
}

static void fs_hb_loop(fs_hb_t *hb, int fd)
{
    double now = fs_time_now();

    while (fs_hb_commands(hb, now)) {
        now = fs_time_now();
        fs_hb_take_reports(hb, now);
        if ((hb->det != NULL) && !hb->left) {
            fs_det_tick(hb->det, now);
        }
        while (hb->dg_ops->progress(hb->dg) != 0) {
        }
        if (hb->det != NULL) {
            fs_hb_take_rx(hb, fs_time_now());
            fs_hb_watch(hb, fs_time_now());
        }
        fs_hb_sleep(hb, fd, fs_time_now());
        now = fs_time_now();
    }
}

static fs_status_t fs_hb_open(fs_hb_t *hb)
{
    fs_dg_config_t cfg;

    cfg.hdr_len    = sizeof(fs_det_msg_t);
    cfg.if_include = hb->if_include;
    return hb->dg_ops->init(&cfg, fs_hb_recv, hb, &hb->dg);
}

/* Datagrams are out once sent: only the peers' send state to free. */
static void fs_hb_close(fs_hb_t *hb)
{
    uint32_t r;

    for (r = 0; (hb->peers != NULL) && (r < hb->det_cfg.n); ++r) {
        if (hb->peers[r].ep != NULL) {
            hb->dg_ops->peer_close(hb->dg, hb->peers[r].ep);
        }
    }
    fs_pw_close(hb->watch_fd);
    hb->dg_ops->fini(hb->dg);
}

static void *fs_hb_thread(void *arg)
{
    fs_hb_t *hb = arg;
    fs_status_t status = fs_hb_open(hb);
    int fd = (status == FS_OK) ? hb->dg_ops->wait_fd(hb->dg) : -1;

    pthread_mutex_lock(&hb->lock);
    hb->started      = 1;
    hb->start_status = status;
    pthread_cond_broadcast(&hb->cond);
    pthread_mutex_unlock(&hb->lock);
    if (status != FS_OK) {
        return NULL;
    }
    fs_hb_loop(hb, fd);
    fs_hb_close(hb);
    return NULL;
}

/* ---- the MPI thread's side ------------------------------------------------- */

/* The condition variable fs_hb_leave waits on, timed on CLOCK_MONOTONIC. */
static void fs_hb_cond_init(pthread_cond_t *cond)
{
    pthread_condattr_t attr;

    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
}

/* The address every process publishes: where its datagrams go, then what
 * a process of the same host needs to watch it exit. */
static fs_status_t fs_hb_publish(fs_hb_t *hb)
{
    const void *addr;
    size_t len;
    fs_pw_id_t self;

    hb->dg_ops->address(hb->dg, &addr, &len);
    fs_pw_self(&self);
    hb->pub = malloc(len + sizeof(self));
    if (hb->pub == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    memcpy(hb->pub, addr, len);
    memcpy(hb->pub + len, &self, sizeof(self));
    hb->pub_len = len + sizeof(self);
    return FS_OK;
}

fs_status_t fs_hb_start(const fs_params_t *params, const fs_dg_ops_t *dg_ops,
                        fs_hb_t **hb_p)
{
    fs_hb_t *hb = calloc(1, sizeof(*hb));
    fs_status_t status;

    if (hb == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    hb->dg_ops          = dg_ops;
    hb->if_include      = params->hb_if;
    hb->det_cfg.period  = params->hb_period_ms * 1e-3;
    hb->det_cfg.timeout = params->hb_timeout_ms * 1e-3;
    hb->det_cfg.timeout_remote = params->hb_timeout_remote_ms * 1e-3;
    hb->det_cfg.timeout_host   = params->hb_timeout_host_ms * 1e-3;
    hb->watch_fd        = -1;
    hb->watch_rank      = UINT32_MAX;
    pthread_mutex_init(&hb->lock, NULL);
    fs_hb_cond_init(&hb->cond);
    if (pthread_create(&hb->thread, NULL, fs_hb_thread, hb) != 0) {
        status = FS_ERR_NO_MEMORY;
        goto err_free_hb;
    }
    pthread_mutex_lock(&hb->lock);
    while (!hb->started) {
        pthread_cond_wait(&hb->cond, &hb->lock);
    }
    status = hb->start_status;
    pthread_mutex_unlock(&hb->lock);
    if (status != FS_OK) {
        pthread_join(hb->thread, NULL);
        goto err_free_hb;
    }
    if (fs_hb_publish(hb) != FS_OK) {
        fs_hb_stop(hb);
        return FS_ERR_NO_MEMORY;
    }
    *hb_p = hb;
    return FS_OK;

err_free_hb:
    FS_ERROR("cannot start the failure detector (%s); set "
             "pml_failstop_hb_period_ms=0 to run without it",
             fs_status_string(status));
    pthread_cond_destroy(&hb->cond);
    pthread_mutex_destroy(&hb->lock);
    free(hb);
    return status;
}

void fs_hb_address(const fs_hb_t *hb, const void **addr_p, size_t *len_p)
{
    *addr_p = hb->pub;
    *len_p  = hb->pub_len;
}

/* Copies the addresses into one block the detector thread reads. */
static fs_status_t fs_hb_copy_peers(fs_hb_t *hb, uint32_t n,
                                    const void *const *addrs, const size_t *lens)
{
    size_t total = 0, off = 0;
    uint32_t r;

    for (r = 0; r < n; ++r) {
        total += lens[r];
    }
    hb->peers    = calloc(n, sizeof(*hb->peers));
    hb->addr_buf = malloc(total ? total : 1);
    hb->reported = calloc((n + 63) / 64, sizeof(*hb->reported));
    hb->checked  = calloc((n + 63) / 64, sizeof(*hb->checked));
    if ((hb->peers == NULL) || (hb->addr_buf == NULL) || (hb->reported == NULL) ||
        (hb->checked == NULL)) {
        return FS_ERR_NO_MEMORY;
    }
    for (r = 0; r < n; ++r) {
        size_t dg_len = lens[r];

        if (dg_len > sizeof(fs_pw_id_t)) {      /* fs_hb_publish's layout */
            dg_len -= sizeof(fs_pw_id_t);
            memcpy(&hb->peers[r].proc, (const uint8_t *)addrs[r] + dg_len,
                   sizeof(fs_pw_id_t));
        }
        memcpy(hb->addr_buf + off, addrs[r], dg_len);
        hb->peers[r].addr     = hb->addr_buf + off;
        hb->peers[r].addr_len = dg_len;
        off += dg_len;
    }
    return FS_OK;
}

/* Before fs_hb_arm the reports wait in hb->early (a failure found while
 * endpoints are created, in MPI_Init): fs_hb_arm passes them on.  Returns 1
 * if rank was taken care of here. */
static int fs_hb_report_early(fs_hb_t *hb, uint32_t rank)
{
    int done = 1;

    pthread_mutex_lock(&hb->lock);
    if (hb->reported != NULL) {
        done = (rank >= hb->det_cfg.n);
    } else if (hb->nearly < FS_HB_EARLY) {
        hb->early[hb->nearly++] = rank;
    } else {
        FS_WARN("failure detector: too many failures before it started; "
                "process %u is left to its own detection", rank);
    }
    pthread_mutex_unlock(&hb->lock);
    return done;
}

/* The job's identity, the same in every process without a word exchanged:
 * a hash of the detector addresses of all ranks (each an IP address and an
 * ephemeral port), which every process read from the same modex. */
static uint64_t fs_hb_job_id(uint32_t n, const void *const *addrs, const size_t *lens)
{
    uint64_t h = 0xcbf29ce484222325ull ^ n;     /* FNV-1a, 64 bits */
    uint32_t r;
    size_t i;

    for (r = 0; r < n; ++r) {
        const uint8_t *a = addrs[r];

        for (i = 0; i < lens[r]; ++i) {
            h = (h ^ a[i]) * 0x100000001b3ull;
        }
        h = (h ^ 0xff) * 0x100000001b3ull;      /* address boundary */
    }
    return h;
}

fs_status_t fs_hb_arm(fs_hb_t *hb, uint32_t n, uint32_t me,
                      const void *const *addrs, const size_t *lens,
                      const fs_hb_host_t *host)
{
    fs_status_t status;
    unsigned i;

    pthread_mutex_lock(&hb->lock);
    if (hb->armed) {
        pthread_mutex_unlock(&hb->lock);
        return FS_OK;
    }
    status = fs_hb_copy_peers(hb, n, addrs, lens);
    if (status == FS_OK) {
        hb->host        = *host;
        hb->det_cfg.n   = n;
        hb->det_cfg.me  = me;
        hb->det_cfg.job = fs_hb_job_id(n, addrs, lens);
        for (i = 0; (i < n) && !hb->multi_host; ++i) {
            hb->multi_host = (i != me) && fs_hb_remote(hb, i);
        }
        for (i = 0; i < hb->nearly; ++i) {
            if (hb->early[i] < n) {
                atomic_fetch_or_explicit(&hb->reported[hb->early[i] / 64],
                                         1ull << (hb->early[i] % 64),
                                         memory_order_relaxed);
                atomic_fetch_add_explicit(&hb->reports, 1, memory_order_release);
            }
        }
        /* start-up: ranks arm at different moments */
        hb->det_cfg.grace = 1.0 + log((double)n + 1.0);
        hb->armed       = 1;
        hb->armed_at    = fs_time_now();
    }
    pthread_mutex_unlock(&hb->lock);
    hb->dg_ops->signal(hb->dg);
    return status;
}

void fs_hb_report(fs_hb_t *hb, uint32_t rank)
{
    if (fs_hb_report_early(hb, rank)) {
        return;
    }
    atomic_fetch_or_explicit(&hb->reported[rank / 64], 1ull << (rank % 64),
                             memory_order_release);
    atomic_fetch_add_explicit(&hb->reports, 1, memory_order_release);
    hb->dg_ops->signal(hb->dg);
}

void fs_hb_check(fs_hb_t *hb, uint32_t rank)
{
    int armed;

    pthread_mutex_lock(&hb->lock);
    armed = hb->armed && (rank < hb->det_cfg.n);
    pthread_mutex_unlock(&hb->lock);
    if (!armed) {
        return;                     /* before it runs, the ring decides */
    }
    atomic_fetch_or_explicit(&hb->checked[rank / 64], 1ull << (rank % 64),
                             memory_order_release);
    atomic_fetch_add_explicit(&hb->checks, 1, memory_order_release);
    hb->dg_ops->signal(hb->dg);
}

int fs_hb_is_remote(fs_hb_t *hb, uint32_t rank)
{
    int armed;

    /* any thread: what it reads is written once, by fs_hb_arm */
    pthread_mutex_lock(&hb->lock);
    armed = hb->armed;
    pthread_mutex_unlock(&hb->lock);
    return armed && (rank < hb->det_cfg.n) && fs_hb_remote(hb, rank);
}

double fs_hb_timeout_of(fs_hb_t *hb, uint32_t rank)
{
    return fs_det_timeout_of(hb->det, rank);
}

double fs_hb_verdict_bound(fs_hb_t *hb)
{
    const fs_det_config_t *c = &hb->det_cfg;
    double bound = 0, steady;

    pthread_mutex_lock(&hb->lock);
    if (hb->armed) {
        /* a rank that never beat is suspected timeout + grace after its
         * observer armed, and observers arm up to a grace apart; later,
         * timeout after its last beat, a period late at most (across
         * hosts: its host silent for timeout_host, checked each period);
         * then the flood (a fraction of a second, counted as one more
         * period) */
        double t = hb->multi_host ? c->timeout_host + c->period : c->timeout;

        bound  = hb->armed_at + t + 2.0 * c->grace;
        steady = fs_time_now() + t + 2.0 * c->period;
        bound  = ((bound > steady) ? bound : steady) + c->period;
    }
    pthread_mutex_unlock(&hb->lock);
    return bound;
}

void fs_hb_leave(fs_hb_t *hb, double timeout)
{
    struct timespec ts;
    double until;

    /* an absolute deadline on the monotonic clock: spurious wake-ups and
     * clock steps neither cut the wait short nor stretch it */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    until      = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 + timeout;
    ts.tv_sec  = (time_t)until;
    ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
    pthread_mutex_lock(&hb->lock);
    hb->leave = 1;
    hb->dg_ops->signal(hb->dg);
    while (!hb->left &&
           (pthread_cond_timedwait(&hb->cond, &hb->lock, &ts) != ETIMEDOUT)) {
    }
    if (!hb->left) {
        FS_WARN("failure detector: departure not announced within %.0f ms",
                timeout * 1e3);
    }
    pthread_mutex_unlock(&hb->lock);
}

void fs_hb_stop(fs_hb_t *hb)
{
    /* Wake the thread before letting go of the lock: it sees stop only under
     * the lock, and then closes its transport (fs_hb_close frees hb->tl), so
     * a signal sent after the unlock could use a freed transport and a
     * closed, perhaps already reused, file descriptor. */
    pthread_mutex_lock(&hb->lock);
    hb->stop = 1;
    hb->dg_ops->signal(hb->dg);
    pthread_mutex_unlock(&hb->lock);
    pthread_join(hb->thread, NULL);
    if (hb->det != NULL) {
        fs_det_destroy(hb->det);
    }
    free(hb->rx_data);
    free(hb->pub);
    free(hb->peers);
    free(hb->addr_buf);
    free((void *)hb->reported);
    free((void *)hb->checked);
    pthread_cond_destroy(&hb->cond);
    pthread_mutex_destroy(&hb->lock);
    free(hb);
}

void fs_hb_memory(uint32_t n, size_t addr_len, size_t *state_p, size_t *addrs_p)
{
    size_t sync_len = fs_det_sync_len(n);

    /* what fs_hb_start, fs_hb_setup and fs_hb_copy_peers allocate, and the
     * detector's own (sizeof(fs_hb_t) holds the receive queue) */
    *state_p = sizeof(fs_hb_t) + FS_HB_RX_DATA * sync_len +
               (n + 63) / 64 * sizeof(uint64_t);
    *addrs_p = (size_t)n * (sizeof(fs_hb_peer_t) + addr_len);
}

void fs_hb_stats(fs_hb_t *hb, fs_det_stats_t *stats_p)
{
    pthread_mutex_lock(&hb->lock);
    *stats_p = hb->stats_copy;
    pthread_mutex_unlock(&hb->lock);
}
