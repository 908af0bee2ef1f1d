/* UCX transport setup: the settings failstop gives UCX (unless the user set
 * them), the UCP context, and the filter on UCX's error log.  The
 * transport's operations are in ucx.c. */
#include "transport/ucx_int.h"
#include "common/fs_log.h"

#include <ucp/api/ucp.h>
#include <ucs/debug/log_def.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Applies a UCX setting unless the user set one of the environment
 * variables that control it.  Transport-level keys: MM_ reaches sysv and
 * posix in every UCX; a key of one transport goes without its prefix up to
 * UCX 1.16 and with it from 1.17 on (fs_ucx_tl_key), each version ignoring
 * the other spelling ("invalid configuration"). */
static void fs_ucx_config_default(ucp_config_t *config, const char *key,
                                  const char *value, const char *const *envs)
{
    ucs_status_t status;

    for (; *envs != NULL; ++envs) {
        if (getenv(*envs) != NULL) {
            return;
        }
    }
    status = ucp_config_modify(config, key, value);
    if (status != UCS_OK) {
        FS_WARN("cannot set UCX option %s=%s: %s", key, value,
                ucs_status_string(status));
    }
}

const char *const fs_ucx_mm_tls[] = {"sm", "shm", "mm", "sysv", "posix", NULL};

/* Whether UCX_TLS lets UCX use any of these transport names ("all" and the
 * "^a,b" exclusion syntax included).  Settings for transports that will not
 * be loaded are skipped: UCX would warn that they are unused. */
int fs_ucx_tls_allows(const char *const *names)
{
    const char *tls = getenv("UCX_TLS");
    int exclude, match = 0;
    char *copy, *tok, *save = NULL;

    if ((tls == NULL) || (*tls == '\0')) {
        return 1;
    }
    exclude = (*tls == '^');
    copy    = strdup(tls + exclude);
    if (copy == NULL) {
        return 1;
    }
    for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        const char *const *n;
        for (n = names; *n != NULL; ++n) {
            match |= !strcmp(tok, *n) || (!exclude && !strcmp(tok, "all"));
        }
    }
    free(copy);
    return exclude ? !match : match;
}

int fs_ucx_version_at_least(unsigned want_major, unsigned want_minor)
{
    unsigned major, minor, release;

    ucp_get_version(&major, &minor, &release);
    return (major > want_major) || ((major == want_major) && (minor >= want_minor));
}

/* A transport's key as this UCX's ucp_config_modify takes it (above). */
static const char *fs_ucx_tl_key(const char *prefix, const char *key, char *buf, size_t size)
{
    if (fs_ucx_version_at_least(1, 17)) {
        snprintf(buf, size, "%s%s", prefix, key);
        return buf;
    }
    return key;
}

static fs_status_t fs_ucx_config(const fs_tl_config_t *cfg, ucp_config_t **config_p)
{
    static const char *const cma_tls[] = {"sm", "shm", "cma", NULL};
    static const char *const mm_eh[]  = {"UCX_MM_ERROR_HANDLING", "UCX_SYSV_ERROR_HANDLING",
                                         "UCX_POSIX_ERROR_HANDLING", NULL};
    static const char *const cma[]    = {"UCX_CMA_MEMORY_INVALIDATE", NULL};
    static const char *const seg[]    = {"UCX_CMA_SEG_SIZE", "UCX_SCOPY_SEG_SIZE", NULL};
    static const char *const rndv[]   = {"UCX_RNDV_SCHEME", NULL};
    static const char *const rthresh[] = {"UCX_RNDV_THRESH", NULL};
    static const char *const ka[]     = {"UCX_KEEPALIVE_INTERVAL", NULL};
    static const char *const fifo[]   = {"UCX_MM_FIFO_SIZE", "UCX_SYSV_FIFO_SIZE",
                                         "UCX_POSIX_FIFO_SIZE", NULL};
    static const char *const tcp_tls[] = {"tcp", NULL};
    static const char *const conn_nb[] = {"UCX_TCP_CONN_NB", NULL};
    ucp_config_t *config;
    char value[32], key[48];

    if (ucp_config_read(NULL, NULL, &config) != UCS_OK) {
        return FS_ERR_LOCAL;
    }
    if (fs_ucx_tls_allows(fs_ucx_mm_tls)) {
        fs_ucx_config_default(config, "MM_ERROR_HANDLING", "y", mm_eh);
        snprintf(value, sizeof(value), "%d", cfg->fifo_size);
        fs_ucx_config_default(config, "MM_FIFO_SIZE", value, fifo);
    }
    if (fs_ucx_tls_allows(cma_tls)) {
        fs_ucx_config_default(config, fs_ucx_tl_key("CMA_", "MEMORY_INVALIDATE", key,
                                                    sizeof(key)), "y", cma);
        snprintf(value, sizeof(value), "%zu", cfg->cma_seg_size);
        fs_ucx_config_default(config, "SCOPY_SEG_SIZE", value, seg);
    }
    /* UCX 1.13 connects TCP sockets blocking, inside ucp_worker_progress: a
     * connection towards a host that does not answer froze the caller for
     * the kernel's SYN retries (about 2 min), and one refused after a long
     * round trip for up to 25 retries (a process held 80 s in MPI_Finalize
     * behind 1 s of delay each way, tests/hosts/net.sh) */
    if (fs_ucx_tls_allows(tcp_tls)) {
        fs_ucx_config_default(config, fs_ucx_tl_key("TCP_", "CONN_NB", key, sizeof(key)),
                              "y", conn_nb);
    }
    fs_ucx_config_default(config, "RNDV_SCHEME", "get_zcopy", rndv);
    /* UCX 1.16's protocol selection takes a forced scheme for "rendezvous
     * from 0 bytes" unless the threshold is set too: 8 KiB.  Its cost,
     * measured under Open MPI 5 (docs/perf/ompi5.md): osu_latency over
     * shared memory from 8 to 128 KiB at 3-6x pml ucx's, where UCX 1.18's
     * multi-fragment eager would be at about 1x (8 KiB: 1.0 us against
     * 5.0-6.0).  Why not more: UCX reassembles a multi-fragment eager
     * active message in a buffer it mallocs per message (ucp_am.c,
     * am_long_first_handler), against tf_nomalloc; UCX 1.17's
     * "intra:64k,inter:8k" does not help, processes of one host being all
     * intra-node, over TCP too (DESIGN, "Open MPI 4.1 and 5"). */
    if (fs_ucx_version_at_least(1, 16)) {
        fs_ucx_config_default(config, "RNDV_THRESH", "8k", rthresh);
    }
    snprintf(value, sizeof(value), "%dms", cfg->keepalive_ms);
    fs_ucx_config_default(config, "KEEPALIVE_INTERVAL", value, ka);
    *config_p = config;
    return FS_OK;
}

/* UCP's request_init: a request's state (fs_ucx_req_t) starts zeroed. */
static void fs_ucx_req_init(void *request)
{
    memset(request, 0, sizeof(fs_ucx_req_t));
}

fs_status_t fs_ucx_context_create(fs_tl_t *tl, const fs_tl_config_t *cfg)
{
    ucp_params_t params;
    ucp_config_t *config;
    ucs_status_t status;

    if (fs_ucx_config(cfg, &config) != FS_OK) {
        return FS_ERR_LOCAL;
    }
    params.field_mask        = UCP_PARAM_FIELD_FEATURES |
                               UCP_PARAM_FIELD_REQUEST_SIZE |
                               UCP_PARAM_FIELD_REQUEST_INIT |
                               UCP_PARAM_FIELD_MT_WORKERS_SHARED |
                               UCP_PARAM_FIELD_ESTIMATED_NUM_EPS;
    params.features          = UCP_FEATURE_AM;
    params.request_size      = sizeof(fs_ucx_req_t);
    params.request_init      = fs_ucx_req_init;
    params.mt_workers_shared = 0;
    params.estimated_num_eps = cfg->estimated_eps;
    status = ucp_init(&params, config, &tl->context);
    ucp_config_release(config);
    if (status != UCS_OK) {
        FS_ERROR("ucp_init failed: %s", ucs_status_string(status));
        return FS_ERR_LOCAL;
    }
    return FS_OK;
}

/* UCX logs as errors its sockets' failures to reach a peer (connection
 * refused, reset, timed out, a connect that failed): the peer's process or
 * host is gone, the link is down for a moment, or the peer has finalized
 * and left while a last notice to it was on its way.  Whether that is a
 * failure is failstop's verdict, which it reports itself naming the rank;
 * UCX's line would be a second, raw account of it, and after a normal
 * departure or a connect made again (src/proto/wireup.c) a false alarm
 * (seen across hosts in failure-free runs).  So is its failure to attach a
 * peer's shared memory (mm_sysv.c: shmat, and mm_ep.c's line about the
 * same FIFO): the segment went with its dead owner (a spawned process
 * asked again every 0.2 s), or sits in another IPC namespace (simulated
 * hosts sharing a kernel, which UCX takes for one node: seen in
 * failure-free runs across them); UCX then reaches the peer another way or
 * reports it unreachable.  Such lines go to failstop's debug log; every
 * other UCX line is kept. */
static const struct {
    const char *file;
    const char *text;
} fs_ucx_quiet[] = {
    {"sock.c",    "Connection refused"},
    {"sock.c",    "Connection reset by peer"},
    {"sock.c",    "Connection timed out"},
    {"tcp_cm.c",  "connection establishment for socket"},
    {"mm_sysv.c", "shmat("},
    {"mm_ep.c",   "failed to connect to remote FIFO"},
};

ucs_log_func_rc_t fs_ucx_log(const char *file, unsigned line,
                                    const char *function, ucs_log_level_t level,
                                    const ucs_log_component_config_t *comp_conf,
                                    const char *message, va_list ap)
{
    char text[256];
    va_list copy;
    size_t i;

    (void)line;
    (void)function;
    (void)comp_conf;
    if (level != UCS_LOG_LEVEL_ERROR) {
        return UCS_LOG_FUNC_RC_CONTINUE;
    }
    va_copy(copy, ap);
    vsnprintf(text, sizeof(text), message, copy);
    va_end(copy);
    for (i = 0; i < sizeof(fs_ucx_quiet) / sizeof(fs_ucx_quiet[0]); ++i) {
        if ((strstr(file, fs_ucx_quiet[i].file) != NULL) &&
            (strstr(text, fs_ucx_quiet[i].text) != NULL)) {
            FS_DEBUG("UCX: %s", text);
            return UCS_LOG_FUNC_RC_STOP;
        }
    }
    return UCS_LOG_FUNC_RC_CONTINUE;
}
