/* The failure detector's thread: runs the protocol (failure/detector.h) over
 * its own datagram channel (dg.h: UDP, sleeps on its socket), so heartbeats
 * flow while the application computes without calling MPI.
 *
 * Threads: fs_hb_start / arm / leave / stop are called by the process's MPI
 * thread; fs_hb_report from any thread; the host callbacks run on the
 * detector thread and must only hand information over (atomics) or end the
 * process. */
#ifndef FS_DETECTOR_HB_H
#define FS_DETECTOR_HB_H

#include "common/fs_params.h"
#include "common/fs_status.h"
#include "detector/dg.h"
#include "failure/detector.h"

#include <stddef.h>
#include <stdint.h>

typedef struct fs_hb fs_hb_t;

typedef struct fs_hb_host {
    /* rank is newly known failed (detector thread). */
    void (*failed)(void *arg, uint32_t rank, fs_det_cause_t cause);
    /* Process `by` declared this one failed: end the process (detector
     * thread). */
    void (*excluded)(void *arg, uint32_t by);
    /* The partition rule (detector.h) found this process cut off: it lost
     * lost of the view processes alive before; end the process (detector
     * thread). */
    void (*partitioned)(void *arg, uint32_t lost, uint32_t view);
    void  *arg;
} fs_hb_host_t;

/* 1 if params switch the detector on; FS_ERR_INVALID with a message if its
 * parameters are inconsistent. */
fs_status_t fs_hb_enabled(const fs_params_t *params, int *enabled_p);

/* Starts the thread, which opens the datagram channel; returns once its
 * address is known (or opening failed). */
fs_status_t fs_hb_start(const fs_params_t *params, const fs_dg_ops_t *dg_ops,
                        fs_hb_t **hb_p);
void        fs_hb_address(const fs_hb_t *hb, const void **addr_p, size_t *len_p);

/* Starts detecting among n processes (this one is me); addrs[r]/lens[r] are
 * rank r's detector addresses (copied). */
fs_status_t fs_hb_arm(fs_hb_t *hb, uint32_t n, uint32_t me,
                      const void *const *addrs, const size_t *lens,
                      const fs_hb_host_t *host);

/* When, at the latest, a process that has died by now is failed everywhere
 * (fs_time_now's clock): detection, with the start-up grace while ranks are
 * still arming, plus propagation.  0 before fs_hb_arm.  Any thread. */
double      fs_hb_verdict_bound(fs_hb_t *hb);

/* Seconds of silence after which rank is suspected (hb_timeout_ms, or
 * hb_timeout_remote_ms for a process on another host).  Detector thread
 * only: from the host callbacks. */
double      fs_hb_timeout_of(fs_hb_t *hb, uint32_t rank);
/* 1 if rank runs on another host (network stack); the same thread rule. */
int         fs_hb_is_remote(fs_hb_t *hb, uint32_t rank);

/* The local engine found rank failed (any thread). */
void        fs_hb_report(fs_hb_t *hb, uint32_t rank);

/* The local engine's link to rank broke as a death or a network outage
 * breaks it (any thread): fs_det_check.  Ignored before fs_hb_arm. */
void        fs_hb_check(fs_hb_t *hb, uint32_t rank);

/* This process finalizes: announces it and stops suspecting anyone; waits
 * (bounded) until the announcement is out. */
void        fs_hb_leave(fs_hb_t *hb, double timeout);

/* Ends the thread and frees everything. */
void        fs_hb_stop(fs_hb_t *hb);

/* Bytes a detector thread for n processes allocates besides fs_det_memory:
 * *state_p its buffers and flags (O(n) bits), *addrs_p its copy of the n
 * detector addresses of addr_len bytes (the modex data it sends to). */
void        fs_hb_memory(uint32_t n, size_t addr_len, size_t *state_p,
                         size_t *addrs_p);

/* A copy of the detector's counters (zeros before fs_hb_arm). */
void        fs_hb_stats(fs_hb_t *hb, fs_det_stats_t *stats_p);

#endif
