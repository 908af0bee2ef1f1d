/* libFuzzer target: agreement messages (src/failure/agree.c).  Member 0
 * (the coordinator) of 8 gets a script of records, each an op byte: 0 or 1,
 * a message from another member (a length byte, then that many bytes); 2,
 * a view change (member op >> 2, failed if bit 7); 3, a start.
 * Invariants, checked on every call:
 *   - a refused message (FS_ERR_PROTO) and any accepted one leave it sane:
 *     what it sends parses at its receiver, goes to a member other than
 *     itself, and is a known type;
 *   - starts number instances 1, 2, ...; each is
 *     decided at most once, and only once started; a decision's failed set
 *     holds only members.
 * Seeds: tests/fuzz/corpus/agree (tests/fuzz/seeds.py). */
#include "failure/agree_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N  8
#define ME 0

static fs_agree_t *fz_peer;          /* a parser of what member ME sends */
static uint32_t    fz_started;
static uint8_t     fz_decided[64];

static fs_status_t fz_send(void *arg, uint32_t to, const void *msg, size_t len)
{
    fs_agree_in_t in;

    (void)arg;
    if ((to >= N) || (to == ME) ||
        (fs_agree_wire_parse(fz_peer, msg, len, fz_peer->rx, &in) != FS_OK)) {
        fprintf(stderr, "fuzz_agree: malformed send to %u, %zu bytes\n", to, len);
        abort();
    }
    return FS_OK;
}

static void fz_decided_cb(void *arg, const fs_agree_result_t *res)
{
    (void)arg;
    if ((res->seq == 0) || (res->seq > fz_started) || (res->seq >= sizeof(fz_decided)) ||
        fz_decided[res->seq]++ || (res->failed[0] >> N)) {
        fprintf(stderr, "fuzz_agree: bad decision of instance %u\n", res->seq);
        abort();
    }
}

static const fs_agree_ops_t fz_ops = { fz_send, fz_decided_cb };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fs_agree_config_t cfg = { .n = N, .me = ME }, peer = { .n = N, .me = 1 };
    const uint8_t *p = data, *end = data + size;
    fs_agree_t *a;
    uint32_t seq;

    fz_started = 0;
    memset(fz_decided, 0, sizeof(fz_decided));
    if ((fs_agree_create(&cfg, &fz_ops, NULL, &a) != FS_OK) ||
        (fs_agree_create(&peer, &fz_ops, NULL, &fz_peer) != FS_OK))
        abort();
    while (p < end) {
        uint8_t op = *p++;
        fs_agree_input_t in = { .nv = 1, .op = { FS_AGREE_AND }, .v = { op } };
        size_t len;

        switch (op & 3) {
        case 0:
        case 1:
            len = (p < end) ? *p++ : 0;             /* 0..255 bytes */
            len = (size_t)(end - p) < len ? (size_t)(end - p) : len;
            (void)fs_agree_recv(a, p, len);
            p += len;
            break;
        case 2:
            (void)fs_agree_gone(a, (uint32_t)(op >> 2) % (N + 1), (op >> 7) & 1);
            break;
        default:
            /* the decision may come inside the call; a start is refused
             * only when messages made the instance another operation */
            if (fz_started + 1 >= sizeof(fz_decided))
                break;
            fz_started++;
            if (fs_agree_start(a, &in, &seq) == FS_ERR_INVALID) {
                fz_started--;
            } else if (seq != fz_started) {
                fprintf(stderr, "fuzz_agree: start misnumbered\n");
                abort();
            }
            break;
        }
    }
    fs_agree_destroy(a);
    fs_agree_destroy(fz_peer);
    return 0;
}
