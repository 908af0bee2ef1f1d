/* The error-classification table.  See classify.h for the lookup rule and
 * docs/ERROR-CLASSIFICATION.md for a readable copy.
 *
 * Sources of the facts: /work/shared/research/fabric-failure-behaviour.md
 * (measured on UCX 1.13.1 and libfabric 1.17.0) and verbs-efa-cxi-error-codes.md
 * (read from UCX, libfabric and rdma-core source).  Numbers are Linux values;
 * tests/failure/test_classify.c checks each one against the real headers. */
#include "failure/classify.h"

/* Link kinds that report process death within milliseconds (tcp, shm):
 * there a peer-related status means the process is gone. */
#define FS_CTX_DEATH_LINK  (FS_FAULT_CTX_OP | FS_FAULT_CTX_EP_ERROR)
/* Where a peer-related status is only a suspicion (slow links) or where
 * nothing was established yet (creation).  Rows for these come first for a
 * code, so mixed masks take the cautious reading. */
#define FS_CTX_CAUTIOUS    (FS_FAULT_CTX_SLOW_LINK | FS_FAULT_CTX_EP_CREATE)
#define FS_CTX_ESTABLISHED (FS_CTX_DEATH_LINK | FS_FAULT_CTX_SLOW_LINK)
/* Links to another host (fs_fault_cross_host): what reads as a death, or a
 * final suspicion, on its own is a break whose cause the failure detector
 * decides (FLUSH: the peer's fate, local if none).  Why: a timeout, an
 * unreachable host or a reset of a connection the peer did not close come
 * from a link flap, a middlebox or a forged packet as well as from a death;
 * only the detector's verdict (its timeout, or the peer's host seeing the
 * process gone) is proof.  Statuses a live peer's own side gives (a refused
 * connect: nothing listens there; a fabric naming the endpoint destroyed)
 * keep their reading. */
#define FS_CTX_CROSS       FS_FAULT_CTX_CROSS_HOST
#define FS_WHY_CROSS       "on a link to another host a network outage, a middlebox or a " \
                           "forged reset gives it too: follows the peer's fate (the " \
                           "failure detector's verdict), local if none"

/* Row initialisers: they only fill the struct, so the table reads as data. */
#define FS_UCX_RANGE(_first, _last, _ctx, _cls, _name, _why) \
    {FS_FAULT_SRC_UCX, (_first), (_last), FS_FAULT_PROV_ANY, (_ctx), \
     FS_FAULT_##_cls, _name, _why}
#define FS_UCX(_code, _ctx, _cls, _name, _why) \
    FS_UCX_RANGE(_code, _code, _ctx, _cls, _name, _why)
#define FS_OFI(_code, _prov, _ctx, _cls, _name, _why) \
    {FS_FAULT_SRC_OFI, (_code), (_code), (_prov), (_ctx), \
     FS_FAULT_##_cls, _name, _why}
#define FS_WC(_code, _cls, _name, _why) \
    {FS_FAULT_SRC_IBV_WC, (_code), (_code), FS_FAULT_PROV_ANY, \
     FS_FAULT_CTX_ANY, FS_FAULT_##_cls, _name, _why}
#define FS_ASYNC(_code, _cls, _name, _why) \
    {FS_FAULT_SRC_IBV_ASYNC, (_code), (_code), FS_FAULT_PROV_ANY, \
     FS_FAULT_CTX_ANY, FS_FAULT_##_cls, _name, _why}
#define FS_CMA(_code, _cls, _name, _why) \
    {FS_FAULT_SRC_CMA, (_code), (_code), FS_FAULT_PROV_ANY, \
     FS_FAULT_CTX_ANY, FS_FAULT_##_cls, _name, _why}
/* Last row of every source: unknown codes are local, never a peer's fault. */
#define FS_DEFAULT(_src, _why) \
    {(_src), INT32_MIN, INT32_MAX, FS_FAULT_PROV_ANY, FS_FAULT_CTX_ANY, \
     FS_FAULT_LOCAL_FATAL, "(default)", _why}

#define FS_ANY   FS_FAULT_CTX_ANY
#define FS_PANY  FS_FAULT_PROV_ANY

static const fs_fault_row_t fs_fault_rows[] = {
    /* ---- UCX ucs_status_t ------------------------------------------------ */
    FS_UCX(0, FS_ANY, NONE, "UCS_OK", "success"),
    FS_UCX(1, FS_ANY, NONE, "UCS_INPROGRESS",
           "operation started; not an error"),
    FS_UCX(-1, FS_ANY, TRANSIENT, "UCS_ERR_NO_MESSAGE",
           "nothing to receive or probe yet; poll again"),
    FS_UCX(-2, FS_ANY, TRANSIENT, "UCS_ERR_NO_RESOURCE",
           "send queue or credits exhausted; retry after progress"),
    FS_UCX(-3, FS_FAULT_CTX_EP_ERROR | FS_FAULT_CTX_SLOW_LINK | FS_FAULT_CTX_EP_CREATE,
           LOCAL_FATAL, "UCS_ERR_IO_ERROR",
           "UCX's catch-all for unlisted CQE statuses and errnos: cause unknown, not blamed"),
    FS_UCX(-3, FS_FAULT_CTX_OP, FLUSH, "UCS_ERR_IO_ERROR",
           "an operation's catch-all error on a link that reports process death "
           "(a failed process_vm_readv): follows the endpoint's fate, local if none"),
    FS_UCX(-4, FS_ANY, LOCAL_FATAL, "UCS_ERR_NO_MEMORY",
           "local allocation or registration failed"),
    FS_UCX(-5, FS_ANY, USER_ERROR, "UCS_ERR_INVALID_PARAM", "invalid argument"),
    FS_UCX(-6, FS_FAULT_CTX_EP_CREATE, FLUSH, "UCS_ERR_UNREACHABLE",
           "at ucp_ep_create: over TCP the peer refused the connection (it "
           "died during wire-up, measured), or no transport supports PEER "
           "error handling (posix, sysv, self, cma measured: configuration): "
           "follows the peer's fate, local if none"),
    FS_UCX(-6, FS_CTX_CROSS, FLUSH, "UCS_ERR_UNREACHABLE", FS_WHY_CROSS),
    FS_UCX(-6, FS_CTX_ESTABLISHED, PEER_SUSPECTED, "UCS_ERR_UNREACHABLE",
           "no route to an existing peer (wireup, rdmacm UNREACHABLE)"),
    FS_UCX(-7, FS_ANY, USER_ERROR, "UCS_ERR_INVALID_ADDR",
           "malformed worker or endpoint address"),
    FS_UCX(-8, FS_ANY, USER_ERROR, "UCS_ERR_NOT_IMPLEMENTED",
           "feature not implemented by the selected transports"),
    FS_UCX(-9, FS_ANY, USER_ERROR, "UCS_ERR_MESSAGE_TRUNCATED",
           "receive buffer shorter than the message"),
    FS_UCX(-10, FS_ANY, TRANSIENT, "UCS_ERR_NO_PROGRESS",
           "socket EAGAIN/EINTR; retry"),
    FS_UCX(-11, FS_ANY, USER_ERROR, "UCS_ERR_BUFFER_TOO_SMALL",
           "output buffer too small"),
    FS_UCX(-12, FS_ANY, USER_ERROR, "UCS_ERR_NO_ELEM", "no such element"),
    FS_UCX(-13, FS_ANY, LOCAL_FATAL, "UCS_ERR_SOME_CONNECTS_FAILED",
           "not emitted by ucp/uct; names no peer, so blames none"),
    FS_UCX(-14, FS_ANY, LOCAL_FATAL, "UCS_ERR_NO_DEVICE",
           "no usable local device"),
    FS_UCX(-15, FS_ANY, TRANSIENT, "UCS_ERR_BUSY", "resource busy; retry"),
    FS_UCX(-16, FS_ANY, FLUSH, "UCS_ERR_CANCELED",
           "request canceled, endpoint closed or IB WR_FLUSH_ERR: follows its cause"),
    FS_UCX(-17, FS_ANY, FLUSH, "UCS_ERR_SHMEM_SEGMENT",
           "a peer's shared-memory segment could not be attached: it is gone "
           "when the peer died (measured: a peer that exited before first "
           "contact); follows the peer's fate, local if none"),
    FS_UCX(-18, FS_ANY, USER_ERROR, "UCS_ERR_ALREADY_EXISTS",
           "object already exists"),
    FS_UCX(-19, FS_ANY, USER_ERROR, "UCS_ERR_OUT_OF_RANGE",
           "argument out of range"),
    FS_UCX(-20, FS_CTX_CROSS, FLUSH, "UCS_ERR_TIMED_OUT", FS_WHY_CROSS),
    FS_UCX(-20, FS_ANY, PEER_SUSPECTED, "UCS_ERR_TIMED_OUT",
           "an operation's timeout expired: the peer may be slow"),
    FS_UCX(-21, FS_ANY, USER_ERROR, "UCS_ERR_EXCEEDS_LIMIT",
           "request exceeds a configured limit"),
    FS_UCX(-22, FS_ANY, USER_ERROR, "UCS_ERR_UNSUPPORTED",
           "operation unsupported in this configuration"),
    FS_UCX(-23, FS_ANY, PEER_FAILSTOP, "UCS_ERR_REJECTED",
           "connection refused (ECONNREFUSED, rdmacm REJECTED): nothing listens there"),
    FS_UCX(-24, FS_CTX_CROSS, FLUSH, "UCS_ERR_NOT_CONNECTED", FS_WHY_CROSS),
    FS_UCX(-24, FS_ANY, PEER_FAILSTOP, "UCS_ERR_NOT_CONNECTED",
           "peer endpoint disconnected"),
    FS_UCX(-25, FS_CTX_CROSS, FLUSH, "UCS_ERR_CONNECTION_RESET", FS_WHY_CROSS),
    FS_UCX(-25, FS_ANY, PEER_FAILSTOP, "UCS_ERR_CONNECTION_RESET",
           "shm keepalive found the process gone, tcp RST (measured); "
           "IB REM_OP/REM_ACCESS, rdmacm DISCONNECTED"),
    FS_UCX_RANGE(-59, -40, FS_ANY, LOCAL_FATAL,
                 "UCS_ERR_LAST_LINK_FAILURE..UCS_ERR_FIRST_LINK_FAILURE",
                 "link-failure range: local link or port, not a peer"),
    FS_UCX(-80, FS_CTX_CROSS, FLUSH, "UCS_ERR_ENDPOINT_TIMEOUT", FS_WHY_CROSS),
    FS_UCX(-80, FS_FAULT_CTX_SLOW_LINK, PEER_SUSPECTED, "UCS_ERR_ENDPOINT_TIMEOUT",
           "IB RC/DC retries or UD ACK timeout (30 s): dead, hung or slow peer"),
    FS_UCX(-80, FS_FAULT_CTX_EP_CREATE, FLUSH, "UCS_ERR_ENDPOINT_TIMEOUT",
           "a connect that failed: UCX 1.13's TCP reports a refused connect "
           "(process gone) and an unreachable host (network hiccup) alike "
           "(measured across hosts); follows the peer's fate, local if none"),
    FS_UCX(-80, FS_CTX_DEATH_LINK, PEER_FAILSTOP, "UCS_ERR_ENDPOINT_TIMEOUT",
           "tcp: 2-10 ms after process death (measured); a keepalive timeout "
           "(dead host) looks the same"),
    FS_UCX_RANGE(-89, -60, FS_CTX_CROSS, FLUSH,
                 "UCS_ERR_LAST_ENDPOINT_FAILURE..UCS_ERR_FIRST_ENDPOINT_FAILURE",
                 FS_WHY_CROSS),
    FS_UCX_RANGE(-89, -60, FS_ANY, PEER_SUSPECTED,
                 "UCS_ERR_LAST_ENDPOINT_FAILURE..UCS_ERR_FIRST_ENDPOINT_FAILURE",
                 "other endpoint failures: scoped to the peer, cause unknown"),
    FS_DEFAULT(FS_FAULT_SRC_UCX,
               "unknown status: cannot be attributed to a peer"),

    /* ---- libfabric FI_E* (+ prov_errno) -------------------------------- */
    FS_OFI(0, FS_PANY, FS_ANY, NONE, "FI_SUCCESS", "success"),
    FS_OFI(115, FS_PANY, FS_ANY, NONE, "FI_EINPROGRESS",
           "operation started (fi_connect); not an error"),
    /* prov_errno is an errno only on socket providers (death links); on slow
     * links it is an ibv_wc_status, EFA or CXI code, so the errno rows must
     * not match there: cautious rows come first. */
    FS_OFI(125, FS_PANY, FS_CTX_CROSS, FLUSH, "FI_ECANCELED", FS_WHY_CROSS),
    FS_OFI(125, 4127, FS_FAULT_CTX_SLOW_LINK, PEER_SUSPECTED,
           "FI_ECANCELED+FI_EFA_ERR_PEER_ABORTED",
           "EFA: peer aborted a transfer (also when it only closed an MR): maybe alive"),
    FS_OFI(125, FS_PANY, FS_CTX_CAUTIOUS, FLUSH, "FI_ECANCELED",
           "verbs WR_FLUSH_ERR (prov 5), EFA FLUSHED (1): follows its cause"),
    FS_OFI(125, 107, FS_CTX_DEATH_LINK, PEER_FAILSTOP, "FI_ECANCELED+ENOTCONN",
           "net: every pending send 1-6 ms after process death; rxm (measured)"),
    FS_OFI(125, 104, FS_CTX_DEATH_LINK, PEER_FAILSTOP, "FI_ECANCELED+ECONNRESET",
           "socket provider: connection reset under a pending operation"),
    FS_OFI(125, 32, FS_CTX_DEATH_LINK, PEER_FAILSTOP, "FI_ECANCELED+EPIPE",
           "socket provider: peer closed the connection under a pending operation"),
    FS_OFI(125, FS_PANY, FS_ANY, FLUSH, "FI_ECANCELED",
           "fi_cancel or teardown (prov 0, 2, -125): follows its cause"),
    /* EFA's BAD_DEST_QPN and CXI's VNI_NOT_FOUND name a destroyed endpoint,
     * but the reading across hosts cannot see the provider status (one row
     * for all): the cautious one, which only costs the detector's time */
    FS_OFI(107, FS_PANY, FS_CTX_CROSS, FLUSH, "FI_ENOTCONN", FS_WHY_CROSS),
    FS_OFI(107, FS_PANY, FS_ANY, PEER_FAILSTOP, "FI_ENOTCONN",
           "rxm (prov EPIPE), EFA 9 BAD_DEST_QPN / 14 UNKNOWN_PEER, "
           "CXI VNI_NOT_FOUND: peer endpoint gone"),
    FS_OFI(104, FS_PANY, FS_CTX_CROSS, FLUSH, "FI_ECONNRESET", FS_WHY_CROSS),
    FS_OFI(104, FS_PANY, FS_ANY, PEER_FAILSTOP, "FI_ECONNRESET",
           "connection reset by the peer (rxm, measured once)"),
    FS_OFI(111, FS_PANY, FS_ANY, PEER_FAILSTOP, "FI_ECONNREFUSED",
           "connect refused, rdma_cm REJECTED: nothing listens there"),
    FS_OFI(32, FS_PANY, FS_CTX_CROSS, FLUSH, "EPIPE", FS_WHY_CROSS),
    FS_OFI(32, FS_PANY, FS_ANY, PEER_FAILSTOP, "EPIPE",
           "write to a connection the peer closed (no FI_EPIPE; plain errno)"),
    FS_OFI(108, FS_PANY, FS_CTX_CROSS, FLUSH, "FI_ESHUTDOWN", FS_WHY_CROSS),
    FS_OFI(108, FS_PANY, FS_ANY, PEER_FAILSTOP, "FI_ESHUTDOWN",
           "EQ FI_SHUTDOWN event (passed as FI_ESHUTDOWN), rdma_cm DISCONNECTED"),
    FS_OFI(103, FS_PANY, FS_CTX_CROSS, FLUSH, "FI_ECONNABORTED", FS_WHY_CROSS),
    FS_OFI(103, 8, FS_FAULT_CTX_SLOW_LINK, PEER_FAILSTOP,
           "FI_ECONNABORTED+EFA_IO_COMP_STATUS_REMOTE_ERROR_ABORT",
           "EFA: connection reset by the remote peer"),
    FS_OFI(103, 13, FS_FAULT_CTX_SLOW_LINK, PEER_SUSPECTED,
           "FI_ECONNABORTED+EFA_IO_COMP_STATUS_LOCAL_ERROR_UNRESP_REMOTE",
           "EFA: remote stopped responding"),
    FS_OFI(103, 4124, FS_FAULT_CTX_SLOW_LINK, PEER_SUSPECTED,
           "FI_ECONNABORTED+FI_EFA_ERR_ESTABLISHED_RECV_UNRESP",
           "EFA: receiver unresponsive after the handshake"),
    FS_OFI(103, 4126, FS_FAULT_CTX_SLOW_LINK, PEER_SUSPECTED,
           "FI_ECONNABORTED+FI_EFA_ERR_UNESTABLISHED_RECV_UNRESP",
           "EFA: receiver reachable but never completed the handshake"),
    FS_OFI(103, FS_PANY, FS_FAULT_CTX_SLOW_LINK, PEER_SUSPECTED, "FI_ECONNABORTED",
           "other slow-link aborts: most EFA aborts are timeouts"),
    FS_OFI(103, FS_PANY, FS_ANY, PEER_FAILSTOP, "FI_ECONNABORTED",
           "connection aborted on the peer's side"),
    /* verbs: EIO carries the ibv_wc_status; CXI: EIO carries a C_RC_* code */
    FS_OFI(5, -5, FS_CTX_CROSS, FLUSH, "FI_EIO+-FI_EIO", FS_WHY_CROSS),
    FS_OFI(5, 12, FS_CTX_CROSS, FLUSH, "FI_EIO+IBV_WC_RETRY_EXC_ERR", FS_WHY_CROSS),
    FS_OFI(5, 13, FS_CTX_CROSS, FLUSH, "FI_EIO+IBV_WC_RNR_RETRY_EXC_ERR", FS_WHY_CROSS),
    FS_OFI(5, 16, FS_CTX_CROSS, FLUSH, "FI_EIO+IBV_WC_REM_ABORT_ERR", FS_WHY_CROSS),
    FS_OFI(5, 20, FS_CTX_CROSS, FLUSH, "FI_EIO+IBV_WC_RESP_TIMEOUT_ERR", FS_WHY_CROSS),
    FS_OFI(5, 11, FS_FAULT_CTX_SLOW_LINK, PEER_FAILSTOP,
           "FI_EIO+IBV_WC_REM_OP_ERR", "verbs: responder QP error"),
    FS_OFI(5, 12, FS_FAULT_CTX_SLOW_LINK, PEER_SUSPECTED,
           "FI_EIO+IBV_WC_RETRY_EXC_ERR",
           "verbs: no ACK through all retries: dead process or node, or broken path"),
    FS_OFI(5, 13, FS_FAULT_CTX_SLOW_LINK, PEER_SUSPECTED,
           "FI_EIO+IBV_WC_RNR_RETRY_EXC_ERR",
           "verbs: receiver never posted buffers: hung or dead"),
    FS_OFI(5, 16, FS_FAULT_CTX_SLOW_LINK, PEER_SUSPECTED,
           "FI_EIO+IBV_WC_REM_ABORT_ERR",
           "verbs REM_ABORT_ERR, or CXI C_RC_NO_SPACE (same number): ambiguous"),
    FS_OFI(5, 20, FS_FAULT_CTX_SLOW_LINK, PEER_SUSPECTED,
           "FI_EIO+IBV_WC_RESP_TIMEOUT_ERR",
           "verbs: response timeout (CXI 20: NO_TARGET_MST, also peer-side)"),
    FS_OFI(5, 26, FS_FAULT_CTX_SLOW_LINK, PEER_FAILSTOP,
           "FI_EIO+C_RC_PTLTE_NOT_FOUND",
           "CXI: target portal entry gone = endpoint destroyed"),
    FS_OFI(5, FS_PANY, FS_CTX_CAUTIOUS, LOCAL_FATAL, "FI_EIO",
           "other verbs statuses and CXI codes: not attributable to a peer"),
    FS_OFI(5, -5, FS_CTX_DEATH_LINK, PEER_FAILSTOP, "FI_EIO+-FI_EIO",
           "sockets: pending sends 8-16 ms after peer death; shm: large "
           "message from a dead peer (measured)"),
    FS_OFI(5, FS_PANY, FS_ANY, LOCAL_FATAL, "FI_EIO",
           "I/O error with a local status"),
    FS_OFI(2, FS_PANY, FS_CTX_CROSS, FLUSH, "FI_ENOENT", FS_WHY_CROSS),
    FS_OFI(2, FS_PANY, FS_CTX_CAUTIOUS, USER_ERROR, "FI_ENOENT",
           "no such entry (address or key lookup)"),
    FS_OFI(2, FS_PANY, FS_CTX_DEATH_LINK, PEER_FAILSTOP, "FI_ENOENT",
           "sockets: a send to a dead peer returns -FI_ENOENT at once (measured)"),
    FS_OFI(110, FS_PANY, FS_CTX_CROSS, FLUSH, "FI_ETIMEDOUT", FS_WHY_CROSS),
    FS_OFI(113, FS_PANY, FS_CTX_CROSS, FLUSH, "FI_EHOSTUNREACH", FS_WHY_CROSS),
    FS_OFI(112, FS_PANY, FS_CTX_CROSS, FLUSH, "FI_EHOSTDOWN", FS_WHY_CROSS),
    FS_OFI(110, FS_PANY, FS_ANY, PEER_SUSPECTED, "FI_ETIMEDOUT",
           "timeout; rdma_cm ADDR/ROUTE/CONNECT_ERROR, UNREACHABLE"),
    FS_OFI(113, FS_PANY, FS_ANY, PEER_SUSPECTED, "FI_EHOSTUNREACH",
           "EFA 15 never answered, CXI UNDELIVERABLE (downed links)"),
    FS_OFI(112, FS_PANY, FS_ANY, PEER_SUSPECTED, "FI_EHOSTDOWN",
           "peer host reported down"),
    FS_OFI(121, FS_PANY, FS_ANY, USER_ERROR, "FI_EREMOTEIO",
           "EFA 12 BAD_STATUS: the responder answered with an error, so it is "
           "alive; fail this operation only"),
    FS_OFI(11, FS_PANY, FS_ANY, TRANSIENT, "FI_EAGAIN",
           "retry; EAGAIN to one peer for longer than a deadline is a "
           "suspicion the caller detects (rxm, net)"),
    FS_OFI(4, FS_PANY, FS_ANY, TRANSIENT, "FI_EINTR", "interrupted; retry"),
    FS_OFI(16, FS_PANY, FS_ANY, TRANSIENT, "FI_EBUSY", "resource busy; retry"),
    FS_OFI(105, FS_PANY, FS_ANY, TRANSIENT, "FI_ENOBUFS",
           "no buffer space; retry"),
    FS_OFI(114, FS_PANY, FS_ANY, TRANSIENT, "FI_EALREADY",
           "an earlier request is still in progress; retry"),
    FS_OFI(42, FS_PANY, FS_ANY, TRANSIENT, "FI_ENOMSG",
           "nothing matched (FI_PEEK); poll again"),
    FS_OFI(269, FS_PANY, FS_ANY, TRANSIENT, "FI_ENORX",
           "receiver not ready (EFA 10 RNR): retried"),
    FS_OFI(256, 4127, FS_FAULT_CTX_SLOW_LINK, PEER_SUSPECTED,
           "FI_EOTHER+FI_EFA_ERR_PEER_ABORTED",
           "EFA peer abort reported through the to_fi_errno fallback: maybe alive"),
    FS_OFI(256, FS_PANY, FS_ANY, LOCAL_FATAL, "FI_EOTHER", "unspecified error"),
    FS_OFI(1, FS_PANY, FS_ANY, LOCAL_FATAL, "FI_EPERM",
           "not permitted (privileges, locked-memory limit)"),
    FS_OFI(12, FS_PANY, FS_ANY, LOCAL_FATAL, "FI_ENOMEM",
           "local memory exhausted (EFA 4105 OOM)"),
    FS_OFI(19, FS_PANY, FS_ANY, LOCAL_FATAL, "FI_ENODEV",
           "no device; rdma_cm DEVICE_REMOVAL"),
    FS_OFI(24, FS_PANY, FS_ANY, LOCAL_FATAL, "FI_EMFILE",
           "file-descriptor limit"),
    FS_OFI(28, FS_PANY, FS_ANY, LOCAL_FATAL, "FI_ENOSPC",
           "local table or queue full"),
    FS_OFI(61, FS_PANY, FS_ANY, LOCAL_FATAL, "FI_ENODATA",
           "no matching provider or data: configuration"),
    FS_OFI(98, FS_PANY, FS_ANY, LOCAL_FATAL, "FI_EADDRINUSE",
           "local address in use"),
    FS_OFI(99, FS_PANY, FS_ANY, LOCAL_FATAL, "FI_EADDRNOTAVAIL",
           "local address unavailable; rdma_cm ADDR_CHANGE"),
    FS_OFI(100, FS_PANY, FS_ANY, LOCAL_FATAL, "FI_ENETDOWN",
           "local network interface down"),
    FS_OFI(101, FS_PANY, FS_ANY, LOCAL_FATAL, "FI_ENETUNREACH",
           "no route to the network: local routing"),
    FS_OFI(264, FS_PANY, FS_ANY, LOCAL_FATAL, "FI_ECRC",
           "data corrupted on the link"),
    FS_OFI(268, FS_PANY, FS_ANY, LOCAL_FATAL, "FI_EOVERRUN",
           "queue overrun: completions lost"),
    FS_OFI(7, FS_PANY, FS_ANY, USER_ERROR, "FI_E2BIG", "argument too long"),
    FS_OFI(9, FS_PANY, FS_ANY, USER_ERROR, "FI_EBADF", "bad descriptor"),
    FS_OFI(13, FS_PANY, FS_ANY, USER_ERROR, "FI_EACCES",
           "access denied (MR key, auth key)"),
    FS_OFI(14, FS_PANY, FS_ANY, USER_ERROR, "FI_EFAULT", "bad address"),
    FS_OFI(22, FS_PANY, FS_ANY, USER_ERROR, "FI_EINVAL",
           "invalid argument (EFA 2-7 local/MR errors)"),
    FS_OFI(38, FS_PANY, FS_ANY, USER_ERROR, "FI_ENOSYS", "not implemented"),
    FS_OFI(75, FS_PANY, FS_ANY, USER_ERROR, "FI_EOVERFLOW", "value too large"),
    FS_OFI(90, FS_PANY, FS_ANY, USER_ERROR, "FI_EMSGSIZE",
           "message too long (EFA 6, 11)"),
    FS_OFI(92, FS_PANY, FS_ANY, USER_ERROR, "FI_ENOPROTOOPT",
           "protocol option not available"),
    FS_OFI(95, FS_PANY, FS_ANY, USER_ERROR, "FI_EOPNOTSUPP",
           "operation not supported"),
    FS_OFI(106, FS_PANY, FS_ANY, USER_ERROR, "FI_EISCONN",
           "already connected"),
    FS_OFI(129, FS_PANY, FS_ANY, USER_ERROR, "FI_EKEYREJECTED", "key rejected"),
    FS_OFI(257, FS_PANY, FS_ANY, USER_ERROR, "FI_ETOOSMALL",
           "provided buffer too small"),
    FS_OFI(258, FS_PANY, FS_ANY, USER_ERROR, "FI_EOPBADSTATE",
           "operation not permitted in the current state"),
    FS_OFI(259, FS_PANY, FS_ANY, USER_ERROR, "FI_EAVAIL",
           "not a status: read the error entry and classify its err"),
    FS_OFI(260, FS_PANY, FS_ANY, USER_ERROR, "FI_EBADFLAGS",
           "flags not supported"),
    FS_OFI(261, FS_PANY, FS_ANY, USER_ERROR, "FI_ENOEQ", "no event queue bound"),
    FS_OFI(262, FS_PANY, FS_ANY, USER_ERROR, "FI_EDOMAIN",
           "invalid resource domain"),
    FS_OFI(263, FS_PANY, FS_ANY, USER_ERROR, "FI_ENOCQ",
           "no completion queue bound"),
    FS_OFI(265, FS_PANY, FS_ANY, USER_ERROR, "FI_ETRUNC",
           "receive buffer shorter than the message"),
    FS_OFI(266, FS_PANY, FS_ANY, USER_ERROR, "FI_ENOKEY",
           "required key not available"),
    FS_OFI(267, FS_PANY, FS_ANY, USER_ERROR, "FI_ENOAV",
           "no address vector bound"),
    FS_DEFAULT(FS_FAULT_SRC_OFI,
               "unknown error: cannot be attributed to a peer"),

    /* ---- ibv_wc_status ---------------------------------------------------- */
    FS_WC(0, NONE, "IBV_WC_SUCCESS", "success"),
    FS_WC(1, USER_ERROR, "IBV_WC_LOC_LEN_ERR",
          "length of our work request does not fit"),
    FS_WC(2, LOCAL_FATAL, "IBV_WC_LOC_QP_OP_ERR", "local QP consistency error"),
    FS_WC(3, LOCAL_FATAL, "IBV_WC_LOC_EEC_OP_ERR", "local EE context error (RD)"),
    FS_WC(4, USER_ERROR, "IBV_WC_LOC_PROT_ERR", "bad lkey or MR in our post"),
    FS_WC(5, FLUSH, "IBV_WC_WR_FLUSH_ERR",
          "QP already in error: follows the completion error that caused it"),
    FS_WC(6, USER_ERROR, "IBV_WC_MW_BIND_ERR", "memory-window bind failed"),
    FS_WC(7, LOCAL_FATAL, "IBV_WC_BAD_RESP_ERR",
          "unexpected transport response: QP broken, cause unknown"),
    FS_WC(8, USER_ERROR, "IBV_WC_LOC_ACCESS_ERR", "local protection error"),
    FS_WC(9, USER_ERROR, "IBV_WC_REM_INV_REQ_ERR",
          "responder rejected our request as invalid: it is alive"),
    FS_WC(10, USER_ERROR, "IBV_WC_REM_ACCESS_ERR",
          "rkey refused by a live responder (UCX reports CONNECTION_RESET)"),
    FS_WC(11, PEER_FAILSTOP, "IBV_WC_REM_OP_ERR",
          "responder QP error (UCX: CONNECTION_RESET)"),
    FS_WC(12, PEER_SUSPECTED, "IBV_WC_RETRY_EXC_ERR",
          "no ACK through all retries (~8 s): dead process or node, or broken path"),
    FS_WC(13, PEER_SUSPECTED, "IBV_WC_RNR_RETRY_EXC_ERR",
          "receiver never posted buffers: hung or dead"),
    FS_WC(14, LOCAL_FATAL, "IBV_WC_LOC_RDD_VIOL_ERR", "local RDD violation"),
    FS_WC(15, USER_ERROR, "IBV_WC_REM_INV_RD_REQ_ERR",
          "responder rejected our RDMA read: it is alive"),
    FS_WC(16, PEER_SUSPECTED, "IBV_WC_REM_ABORT_ERR",
          "responder aborted the operation (UCX: ENDPOINT_TIMEOUT)"),
    FS_WC(17, LOCAL_FATAL, "IBV_WC_INV_EECN_ERR", "invalid EE context (RD)"),
    FS_WC(18, LOCAL_FATAL, "IBV_WC_INV_EEC_STATE_ERR",
          "invalid EE context state (RD)"),
    FS_WC(19, LOCAL_FATAL, "IBV_WC_FATAL_ERR", "local device fatal"),
    FS_WC(20, PEER_SUSPECTED, "IBV_WC_RESP_TIMEOUT_ERR",
          "response timeout: the peer may be slow"),
    FS_WC(21, LOCAL_FATAL, "IBV_WC_GENERAL_ERR", "general local error"),
    FS_WC(22, LOCAL_FATAL, "IBV_WC_TM_ERR",
          "tag-matching offload error (unused here): local"),
    FS_WC(23, LOCAL_FATAL, "IBV_WC_TM_RNDV_INCOMPLETE",
          "tag-matching rendezvous offload (unused here): local"),
    FS_DEFAULT(FS_FAULT_SRC_IBV_WC,
               "unknown completion status: cannot be attributed to a peer"),

    /* ---- ibv_event_type (async events) ---------------------------------- */
    FS_ASYNC(0, LOCAL_FATAL, "IBV_EVENT_CQ_ERR", "CQ overrun or error: local"),
    FS_ASYNC(1, LOCAL_FATAL, "IBV_EVENT_QP_FATAL",
             "local QP broken; the cause arrives as a CQE"),
    FS_ASYNC(2, LOCAL_FATAL, "IBV_EVENT_QP_REQ_ERR",
             "invalid request on a local QP; the cause arrives as a CQE"),
    FS_ASYNC(3, LOCAL_FATAL, "IBV_EVENT_QP_ACCESS_ERR",
             "access violation on a local QP; the cause arrives as a CQE"),
    FS_ASYNC(4, NONE, "IBV_EVENT_COMM_EST", "connection established: information"),
    FS_ASYNC(5, FLUSH, "IBV_EVENT_SQ_DRAINED", "send queue drained: follows its cause"),
    FS_ASYNC(6, TRANSIENT, "IBV_EVENT_PATH_MIG", "migrated to the alternate path"),
    FS_ASYNC(7, TRANSIENT, "IBV_EVENT_PATH_MIG_ERR",
             "alternate path unusable; a real failure follows as a CQE"),
    FS_ASYNC(8, LOCAL_FATAL, "IBV_EVENT_DEVICE_FATAL", "local device dead: all endpoints"),
    FS_ASYNC(9, TRANSIENT, "IBV_EVENT_PORT_ACTIVE", "local port came up"),
    FS_ASYNC(10, LOCAL_FATAL, "IBV_EVENT_PORT_ERR",
             "local link down: the timeouts that follow are not the peers' fault"),
    FS_ASYNC(11, TRANSIENT, "IBV_EVENT_LID_CHANGE", "fabric management"),
    FS_ASYNC(12, TRANSIENT, "IBV_EVENT_PKEY_CHANGE", "fabric management"),
    FS_ASYNC(13, TRANSIENT, "IBV_EVENT_SM_CHANGE", "fabric management"),
    FS_ASYNC(14, LOCAL_FATAL, "IBV_EVENT_SRQ_ERR", "local SRQ broken"),
    FS_ASYNC(15, TRANSIENT, "IBV_EVENT_SRQ_LIMIT_REACHED",
             "SRQ low watermark: post more receives"),
    FS_ASYNC(16, FLUSH, "IBV_EVENT_QP_LAST_WQE_REACHED",
             "SRQ QP teardown finished: follows its cause"),
    FS_ASYNC(17, TRANSIENT, "IBV_EVENT_CLIENT_REREGISTER", "fabric management"),
    FS_ASYNC(18, TRANSIENT, "IBV_EVENT_GID_CHANGE", "fabric management"),
    FS_ASYNC(19, LOCAL_FATAL, "IBV_EVENT_WQ_FATAL", "local work queue broken"),
    FS_DEFAULT(FS_FAULT_SRC_IBV_ASYNC,
               "unknown async event: cannot be attributed to a peer"),

    /* ---- errno of process_vm_readv (src/transport/ucx_rndv.c) ------------ */
    FS_CMA(3, PEER_FAILSTOP, "ESRCH",
           "the sender is gone: a process exits only once its rendezvous "
           "sends were read (MPI_Finalize waits for them)"),
    FS_CMA(1, LOCAL_FATAL, "EPERM",
           "not allowed to read the sender's memory (ptrace rules): this "
           "node's configuration"),
    FS_CMA(14, LOCAL_FATAL, "EFAULT",
           "the sender's buffer is not mapped (a broken sender, or one that "
           "freed it early): not a failure"),
    FS_CMA(12, LOCAL_FATAL, "ENOMEM", "the kernel could not pin pages: local"),
    FS_DEFAULT(FS_FAULT_SRC_CMA,
               "unknown process_vm_readv error: cannot be attributed to a peer"),
};

/* Returned only for a source outside fs_fault_source_t. */
static const fs_fault_row_t fs_fault_bad_source_row =
    {(fs_fault_source_t)(FS_FAULT_SRC_LAST + 1), INT32_MIN, INT32_MAX,
     FS_FAULT_PROV_ANY, FS_FAULT_CTX_ANY, FS_FAULT_LOCAL_FATAL,
     "(invalid source)", "not a transport this table knows"};

static const char *const fs_fault_class_names[] = {
    [FS_FAULT_NONE]           = "NONE",
    [FS_FAULT_PEER_FAILSTOP]  = "PEER_FAILSTOP",
    [FS_FAULT_PEER_SUSPECTED] = "PEER_SUSPECTED",
    [FS_FAULT_FLUSH]          = "FLUSH",
    [FS_FAULT_LOCAL_FATAL]    = "LOCAL_FATAL",
    [FS_FAULT_TRANSIENT]      = "TRANSIENT",
    [FS_FAULT_USER_ERROR]     = "USER_ERROR",
};

#define FS_FAULT_NUM_ROWS (sizeof(fs_fault_rows) / sizeof(fs_fault_rows[0]))
#define FS_FAULT_NUM_CLASSES \
    (sizeof(fs_fault_class_names) / sizeof(fs_fault_class_names[0]))

static int fs_fault_row_matches(const fs_fault_row_t *row,
                                fs_fault_source_t source, int32_t code,
                                int32_t prov_errno, uint32_t context)
{
    if ((row->source != source) || (code < row->code) ||
        (code > row->code_last)) {
        return 0;
    }
    /* prov_errno only means something for libfabric */
    if ((source == FS_FAULT_SRC_OFI) &&
        (row->prov_errno != FS_FAULT_PROV_ANY) &&
        (row->prov_errno != prov_errno)) {
        return 0;
    }
    return (row->contexts == FS_FAULT_CTX_ANY) || ((row->contexts & context) != 0);
}

const fs_fault_row_t *fs_fault_classify(fs_fault_source_t source, int32_t code,
                                        int32_t prov_errno, uint32_t context)
{
    size_t i;

    /* libfabric functions return -FI_E*, CQ/EQ error entries carry FI_E*:
     * accept both rather than send a -FI_EAGAIN to the LOCAL_FATAL default */
    if ((source == FS_FAULT_SRC_OFI) && (code < 0) && (code != INT32_MIN)) {
        code = -code;
    }
    for (i = 0; i < FS_FAULT_NUM_ROWS; ++i) {
        if (fs_fault_row_matches(&fs_fault_rows[i], source, code, prov_errno,
                                 context)) {
            return &fs_fault_rows[i];
        }
    }
    /* every valid source ends with a catch-all row, so only a bad source
     * gets here */
    return &fs_fault_bad_source_row;
}

const fs_fault_row_t *fs_fault_cross_host(const fs_fault_row_t *row)
{
    const fs_fault_row_t *cross;

    /* a range row stands for every code in it; a provider-specific row is
     * looked up with its own provider status */
    cross = fs_fault_classify(row->source, row->code, row->prov_errno,
                              row->contexts | FS_FAULT_CTX_CROSS_HOST);
    return (cross->contexts == FS_FAULT_CTX_CROSS_HOST) ? cross : row;
}

const char *fs_fault_class_name(fs_fault_class_t cls)
{
    if (((unsigned)cls >= FS_FAULT_NUM_CLASSES) ||
        (fs_fault_class_names[cls] == NULL)) {
        return "INVALID";
    }
    return fs_fault_class_names[cls];
}

const fs_fault_row_t *fs_fault_table(size_t *count_p)
{
    if (count_p != NULL) {
        *count_p = FS_FAULT_NUM_ROWS;
    }
    return fs_fault_rows;
}
