#include "common/fs_params.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FS_PARAM_FIELD(_field) offsetof(fs_params_t, _field)

const fs_param_desc_t fs_param_table[] = {
    {"verbose", FS_PARAM_INT, "1",
     "Log level: 0 errors, 1 warnings, 2 info, 3 debug, 4 trace (debug and "
     "trace need a debug build)",
     FS_PARAM_FIELD(verbose)},
    {"transport", FS_PARAM_STRING, "ucx",
     "Fabric library that carries MPI traffic: ucx (UCP active messages) or "
     "ofi (libfabric reliable datagrams, provider chosen by ofi_provider). "
     "Anything else: the component does not open",
     FS_PARAM_FIELD(transport)},
    {"ofi_provider", FS_PARAM_STRING, "",
     "With transport ofi: the libfabric provider, as fi_info names it (net, "
     "sockets, tcp;ofi_rxm, shm, udp;ofi_rxd, verbs;ofi_rxm, efa, cxi, ...). "
     "Empty: libfabric's first choice. Verified: net, sockets, tcp;ofi_rxm, "
     "shm, udp;ofi_rxd; the others are read from their sources only. shm is "
     "not safe against a sender killed inside a send (its receiver can stop "
     "for ever inside libfabric: docs/VALIDATION.md); use UCX on a node",
     FS_PARAM_FIELD(ofi_provider)},
    {"ucx_keepalive_ms", FS_PARAM_INT, "100",
     "UCX keepalive interval in ms (UCX_KEEPALIVE_INTERVAL). Shared-memory "
     "peers that die are only noticed by keepalive, so this bounds detection "
     "time on one node. Ignored when UCX_KEEPALIVE_INTERVAL is set",
     FS_PARAM_FIELD(ucx_keepalive_ms)},
    {"ucx_fifo_size", FS_PARAM_INT, "128",
     "Entries of the UCX shared-memory receive FIFO (UCX_SYSV_FIFO_SIZE, "
     "UCX_POSIX_FIFO_SIZE), and of each ring of the short lane (one per pair "
     "of processes, rounded up to a power of two): room for two windows of "
     "64 messages (UCX 1.13 has 64). With 64, a full FIFO sends into UCX's "
     "pending path, which allocates (tf_nomalloc, 4 ranks). Each entry's "
     "receive buffer faults in on first use, so the first N medium messages "
     "between two processes cost about 1 us more each. UCX's FIFO keeps "
     "UCX_*_FIFO_SIZE when those are set",
     FS_PARAM_FIELD(ucx_fifo_size)},
    {"ucx_cma_seg_size", FS_PARAM_SIZE, "4m",
     "Largest piece UCX copies with one process_vm_readv on a node "
     "(UCX_CMA_SEG_SIZE). UCX's 512k splits a 4 MiB message into 8 copies, "
     "one per progress call; 4m measured 1.2x faster at 4 MiB. Ignored when "
     "UCX_CMA_SEG_SIZE is set",
     FS_PARAM_FIELD(ucx_cma_seg_size)},
    {"ucx_frag_max", FS_PARAM_SIZE, "64k",
     "Blocking sends above one UCX segment (8 KiB) and up to this size go "
     "eagerly, one copy at each end as pml ucx's eager: to a process of the "
     "same node as one entry of the short lane (ucx_shm_max), its payload "
     "in the ring's data area, if a collective's (a point-to-point one takes "
     "the lane's rendezvous, ucx_shm_rndv); to others as fragments that each fit one UCX "
     "segment, copied by the receiver straight into the matched receive's "
     "buffer. Not UCX's rendezvous (a round trip and a process_vm_readv: "
     "osu_latency 16 KiB 5.2 -> 1.7 us) nor UCX's multi-fragment eager "
     "(reassembled in a buffer UCX mallocs, then copied again). "
     "Nonblocking, synchronous and larger sends use the single-copy "
     "rendezvous. 0: never; at most 500k",
     FS_PARAM_FIELD(ucx_frag_max)},
    {"ucx_shm_max", FS_PARAM_SIZE, "8k",
     "Contiguous matching messages up to this many bytes to a process of the "
     "same node go over failstop's own shared-memory rings, one per pair of "
     "processes, instead of UCP active messages (whose send takes UCT's "
     "three-piece iov path, about twice UCP's tag send, into a FIFO shared "
     "by all senders, which a sender killed inside its write stops for "
     "good): inline in the 128-byte entry up to 112 bytes with the header, "
     "above in the ring's data area, taken in turn (512 KiB; with more than "
     "8 processes a node a receiver's areas share 4 MiB, at least 16 KiB "
     "each: docs/DESIGN.md). Blocking sends "
     "up to ucx_frag_max go this way too. 0: no lane, every message by UCP; "
     "at most 8k",
     FS_PARAM_FIELD(ucx_shm_max)},
    {"ucx_shm_rndv", FS_PARAM_BOOL, "1",
     "1: contiguous matching messages to a process of the same node that the "
     "short lane does not carry eagerly (nonblocking and synchronous sends "
     "above ucx_shm_max, blocking ones above ucx_frag_max) go by failstop's "
     "own single-copy rendezvous: a request in the lane's ring, the receiver "
     "reads the payload with process_vm_readv and answers in a word beside "
     "the ring. 0: by UCP's rendezvous, whose request and answer cross UCX's "
     "shared FIFO (a sender killed inside that write stops its receiver: "
     "docs/DESIGN.md, the short lane). Off by itself where the kernel's "
     "ptrace rules (Yama ptrace_scope 2 or 3) forbid the read",
     FS_PARAM_FIELD(ucx_shm_rndv)},
    {"self_eager_limit", FS_PARAM_SIZE, "16384",
     "Sends to self up to this many bytes are copied and complete at once; "
     "larger ones wait for the matching receive (rendezvous)",
     FS_PARAM_FIELD(self_eager_limit)},
    {"send_fast_local_max", FS_PARAM_SIZE, "128k",
     "Blocking sends of collective traffic up to this many bytes ask the "
     "transport for the protocol that completes locally soonest (UCX's "
     "FAST_CMPL: eager up to its local rendezvous threshold, as pml ucx's "
     "MPI_Send); 0: none. Open MPI's collectives "
     "exchange with irecv and a blocking send, and eager lets each side go "
     "on at once. Above one UCX segment, up to ucx_frag_max, failstop's own "
     "fragments come first: they complete as soon as UCX has taken them, "
     "whatever the caller. To a process of the node such a send goes "
     "eagerly by the short lane (up to half a ring's data area), where a "
     "point-to-point one above 8 KiB takes the lane's rendezvous "
     "(osu_allreduce at 4 ranks, 64-256 KiB: 1.0-1.5x pml ucx with 64k, "
     "0.84-1.03x with 128k; 256k: osu_alltoall at 2 ranks, 256 KiB, 2.1x "
     "pml ucx, two copies of 256 KiB through the caches; 32-64 KiB at 2 and "
     "4 ranks: 0.7-1.0x eagerly, 1.1-1.75x by rendezvous)",
     FS_PARAM_FIELD(send_fast_local_max)},
    {"finalize_timeout_ms", FS_PARAM_INT, "3000",
     "Upper bound in ms on flushing and closing endpoints in MPI_Finalize, "
     "or the failure detector's bound on its verdict if later (a close "
     "waits for the departure notices to be delivered, through a network "
     "outage the job tolerates); also how long MPI_Finalize waits for "
     "requests still active in it (which peers that have not finalized yet "
     "may complete) before it warns, and goes on waiting",
     FS_PARAM_FIELD(finalize_timeout_ms)},
    {"cause_wait_ms", FS_PARAM_INT, "2000",
     "An operation that fails with an error of unknown cause (a flush, UCX's "
     "catch-all I/O error, a link that broke without saying why, such as a "
     "peer's shared-memory segment that cannot be attached) waits up to this "
     "many ms for its peer's fate: if the peer is found failed the error is "
     "MPI_ERR_RANK_FAIL_STOP, otherwise a local error that blames nobody. Keep "
     "it above hb_timeout_ms, so that the detector's verdict on a peer that "
     "died can arrive",
     FS_PARAM_FIELD(cause_wait_ms)},
    {"max_unexpected_mb", FS_PARAM_INT, "4096",
     "Upper bound in MiB on everything other processes can make this one "
     "hold before its receives: message records, copied or held eager "
     "payloads, rendezvous descriptors, messages for communicators not "
     "created yet. A message past it is not kept: receives from its sender "
     "on its communicator that nothing buffered satisfies end with "
     "MPI_ERR_NO_MEM (the messages sent before it are still delivered)",
     FS_PARAM_FIELD(max_unexpected_mb)},
    {"inject", FS_PARAM_STRING, "",
     "Fault injection for tests, one item or several separated by commas: "
     "RANK:after=N[:SIGNAL] makes world rank RANK kill itself after N "
     "messages sent or received (point-to-point and agreement messages); "
     "RANK:at=PHASE[:SIGNAL] "
     "inside a phase of its life: init (MPI_Init, before the address "
     "exchange), wireup (MPI_Init, endpoints to every process created), "
     "connect (right after handing the first message to a process nothing "
     "was exchanged with to the transport), comm (the first communicator "
     "created after MPI_Init is added, its creation running), finalize "
     "(MPI_Finalize, before the departure is announced), bye "
     "(MPI_Finalize, right after it is announced). SIGNAL: KILL (default), "
     "STOP, TERM, SEGV, ABRT or a number. RANK:hold=PATH makes MPI_Init wait, "
     "past the address exchange and before connecting to anyone, until the "
     "file PATH exists (at most 60 s; the detector beats meanwhile), so that "
     "connection setup runs while a test makes the network misbehave",
     FS_PARAM_FIELD(inject)},
    {"hb_period_ms", FS_PARAM_INT, "100",
     "Heartbeat period in ms of the failure detector (a thread with its own "
     "UDP socket; each process beats to the next one in a ring). It finds "
     "hung processes, which no transport reports. 0 switches the detector "
     "off: then failures are only learned from transports, and propagated by "
     "notices to every process",
     FS_PARAM_FIELD(hb_period_ms)},
    {"hb_timeout_ms", FS_PARAM_INT, "1000",
     "A process whose heartbeats stop for this many ms is suspected, and a "
     "suspicion is final: it is failed everywhere and ends (MPI-FT 17.3). At "
     "least 3 heartbeat periods. A process of the observer's host that is "
     "there and not stopped (its /proc state) gets this long once more: a "
     "heartbeat thread starved on an oversubscribed node is not a failure",
     FS_PARAM_FIELD(hb_timeout_ms)},
    {"hb_timeout_remote_ms", FS_PARAM_INT, "2500",
     "A process on another host (another network stack) whose heartbeats "
     "stop for this many ms is suspected, at least hb_timeout_ms; its host "
     "decides: it and the rest of its host are probed, and if the host "
     "answers and it does not (3 heartbeat periods), it is failed "
     "everywhere and ends; if nobody there answers, hb_timeout_host_ms "
     "applies",
     FS_PARAM_FIELD(hb_timeout_remote_ms)},
    {"hb_timeout_host_ms", FS_PARAM_INT, "4000",
     "A host none of whose probed processes answers is taken as lost (a "
     "crash, or a network outage longer than the job tolerates) once silent "
     "this many ms: its processes are failed everywhere, and a host cut off "
     "from the rest ends its own by the partition rule. At least "
     "hb_timeout_remote_ms. It is the longest outage that costs nothing: a "
     "link flap silences a link for longer than the flap (Linux drops the "
     "neighbour entries of a link that lost its carrier and asks again once "
     "a second, so a 2 s flap costs up to 3 s); the default lets flaps of "
     "up to 2 s pass whatever their phase (docs/PARAMETERS.md)",
     FS_PARAM_FIELD(hb_timeout_host_ms)},
    {"hb_if", FS_PARAM_STRING, "",
     "Interfaces the failure detector publishes to processes on other hosts: "
     "comma-separated interface names or a.b.c.d/len subnets. Empty: every "
     "IPv4 interface that is up and not loopback, the default route's first; "
     "a sender then prefers a peer address in a subnet it shares, and never "
     "sends to an address it has itself (a bridge such as docker0 carries the "
     "same address on every host). Processes in one network stack always use "
     "loopback",
     FS_PARAM_FIELD(hb_if)},
    {"agree_star_max", FS_PARAM_INT, "8",
     "Agreements (MPIX_Comm_agree, and what is built on it) on communicators of up to this many processes run over a star (4 message delays whatever the size, the coordinator sends to every member); larger ones over a binomial tree (4 log2 n delays, at most log2 n messages sent by any member per wave). 0: always the tree",
     FS_PARAM_FIELD(agree_star_max)},
    {"anysource_pending", FS_PARAM_BOOL, "0",
     "What a pending nonblocking MPI_ANY_SOURCE receive gets when a failure "
     "disables MPI_ANY_SOURCE on its communicator. 0: the chapter's rule (MPI-FT "
     "17.6), it completes with MPI_ERR_RANK_FAIL_STOP. 1: ULFM's rule, "
     "MPI_Wait/MPI_Test report MPIX_ERR_PROC_FAILED_PENDING and the receive "
     "stays pending: once MPIX_Comm_failure_ack (or "
     "MPIX_Comm_reenable_any_source) re-enables MPI_ANY_SOURCE, waiting on it "
     "again waits for its message. Blocking receives and probes get the "
     "failure class either way",
     FS_PARAM_FIELD(anysource_pending)},
    {"uniform_collectives", FS_PARAM_BOOL, "0",
     "1: uniformly returning collectives (MPI-FT 17.7, advice to "
     "implementors): each blocking collective is followed by an agreement on "
     "its outcome, and every process returns the same: success everywhere, "
     "or the same error class everywhere, also when a process dies during "
     "it. Costs one agreement per blocking collective; nonblocking ones are "
     "not covered. 0: a failure during a collective can leave some processes "
     "with success (every contribution they needed had arrived) and others "
     "with the failure class",
     FS_PARAM_FIELD(uniform_collectives)},
};

const size_t fs_param_count = sizeof(fs_param_table) / sizeof(fs_param_table[0]);

static int fs_param_parse_size(const char *text, size_t *value_p)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(text, &end, 0);
    if ((errno != 0) || (end == text)) {
        return -1;
    }
    switch (*end) {
    case 'k': case 'K': v <<= 10; ++end; break;
    case 'm': case 'M': v <<= 20; ++end; break;
    case 'g': case 'G': v <<= 30; ++end; break;
    default: break;
    }
    if (*end != '\0') {
        return -1;
    }
    *value_p = (size_t)v;
    return 0;
}

static int fs_param_parse_int(const char *text, int *value_p)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, 0);
    if ((errno != 0) || (end == text) || (*end != '\0') ||
        (v < -2147483647L) || (v > 2147483647L)) {
        return -1;
    }
    *value_p = (int)v;
    return 0;
}

static int fs_param_parse_bool(const char *text, int *value_p)
{
    if (!strcasecmp(text, "1") || !strcasecmp(text, "true") ||
        !strcasecmp(text, "yes") || !strcasecmp(text, "y")) {
        *value_p = 1;
        return 0;
    }
    if (!strcasecmp(text, "0") || !strcasecmp(text, "false") ||
        !strcasecmp(text, "no") || !strcasecmp(text, "n")) {
        *value_p = 0;
        return 0;
    }
    return -1;
}

static int fs_param_apply(fs_params_t *params, const fs_param_desc_t *desc,
                          const char *value)
{
    void *field = (char *)params + desc->offset;

    switch (desc->type) {
    case FS_PARAM_INT:
        return fs_param_parse_int(value, field);
    case FS_PARAM_BOOL:
        return fs_param_parse_bool(value, field);
    case FS_PARAM_SIZE:
        return fs_param_parse_size(value, field);
    case FS_PARAM_STRING:
        /* The table's defaults are static strings; values set later are
         * owned by whoever set them (the MCA variable system). */
        *(char **)field = (char *)value;
        return 0;
    }
    return -1;
}

void fs_params_defaults(fs_params_t *params)
{
    size_t i;

    memset(params, 0, sizeof(*params));
    for (i = 0; i < fs_param_count; ++i) {
        (void)fs_param_apply(params, &fs_param_table[i], fs_param_table[i].defval);
    }
}

int fs_params_set(fs_params_t *params, const char *name, const char *value)
{
    size_t i;

    for (i = 0; i < fs_param_count; ++i) {
        if (!strcmp(fs_param_table[i].name, name)) {
            return fs_param_apply(params, &fs_param_table[i], value);
        }
    }
    return -1;
}
