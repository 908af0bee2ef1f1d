/* libFuzzer target: the failure detector's datagrams (issue 10, items 6
 * and 11 of its done-means).  One detector (rank 3 of 16) gets a script of
 * records: a datagram (any 32-byte header, any payload length), a tick, a
 * report, an exit its host saw, a departure.  Invariants, checked on every call:
 *   - only a datagram with this job's magic, version and identity may make
 *     it end (ops->excluded): anything foreign must be harmless;
 *   - what it sends is well-formed: ours, to a rank < n other than itself,
 *     a payload only for SYNC and of the SYNC length;
 *   - every failure is reported once, never this process.
 * A record's high bit stamps the header as ours, so the fuzzer also reaches
 * the protocol's states.  Seeds: tests/fuzz/corpus/det. */
#include "failure/detector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N   16
#define ME  3
#define JOB 0x0123456789abcdefull

static int     fz_ours;           /* the datagram being handled is ours */
static uint8_t fz_failed[N];

static int fz_is_ours(const fs_det_msg_t *m)
{
    return (m->magic == FS_DET_MAGIC) && (m->version == FS_DET_VERSION) && (m->job == JOB);
}

static void fz_send(void *arg, uint32_t to, const fs_det_msg_t *msg, const void *data,
                    size_t len)
{
    (void)arg;
    (void)data;
    if (!fz_is_ours(msg) || (to >= N) || (to == ME) || (msg->sender != ME) ||
        ((msg->type == FS_DET_SYNC) ? (len != fs_det_sync_len(N)) : (len != 0))) {
        fprintf(stderr, "fuzz_det: malformed send: type %u to %u len %zu\n",
                msg->type, to, len);
        abort();
    }
}

static void fz_failed_cb(void *arg, uint32_t rank, fs_det_cause_t cause)
{
    (void)arg;
    (void)cause;
    if ((rank >= N) || (rank == ME) || fz_failed[rank]++) {
        fprintf(stderr, "fuzz_det: failure of %u reported wrongly\n", rank);
        abort();
    }
}

static void fz_excluded(void *arg, uint32_t by)
{
    (void)arg;
    if (!fz_ours || (by >= N)) {
        fprintf(stderr, "fuzz_det: excluded by a foreign datagram (by %u)\n", by);
        abort();
    }
}

static const fs_det_ops_t fz_ops = {fz_send, fz_failed_cb, fz_excluded};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fs_det_config_t cfg = {N, ME, 0.1, 0.4, 0.2, JOB};
    const uint8_t *p = data, *end = data + size;
    uint8_t payload[64];
    double now = 0;
    fs_det_t *det;

    memset(fz_failed, 0, sizeof(fz_failed));
    if (fs_det_create(&cfg, &fz_ops, NULL, &det) != FS_OK) {
        abort();
    }
    fs_det_start(det, now);
    while (p < end) {
        uint8_t op = *p++;
        fs_det_msg_t m;
        size_t len, have;

        switch (op & 3) {
        case 0:
        case 1:
            have = (size_t)(end - p) < sizeof(m) ? (size_t)(end - p) : sizeof(m);
            memset(&m, 0, sizeof(m));
            memcpy(&m, p, have);
            p += have;
            if (op & 0x80) {
                m.magic   = FS_DET_MAGIC;
                m.version = FS_DET_VERSION;
                m.job     = JOB;
            }
            len  = (op >> 2) & 7;                  /* 0..7; SYNC needs 4 */
            have = (size_t)(end - p) < len ? (size_t)(end - p) : len;
            memset(payload, 0, sizeof(payload));
            memcpy(payload, p, have);
            p += have;
            fz_ours = fz_is_ours(&m);
            fs_det_rx(det, &m, len ? payload : NULL, len, now);
            fz_ours = 0;
            break;
        case 2:
            now += (double)(op >> 2) * 0.01;
            fs_det_tick(det, now);
            break;
        default:
            if (op & 0x80) {
                fs_det_leave(det, now);
            } else if (op & 0x40) {
                /* the host saw a process exit (the observed or anyone) */
                fs_det_exited(det, (uint32_t)(op >> 2) % (N + 2), now);
            } else {
                fs_det_report(det, (uint32_t)(op >> 2) % (N + 2), now);
            }
            break;
        }
    }
    fs_det_destroy(det);
    return 0;
}
