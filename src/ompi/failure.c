/* Failure handling on the Open MPI side: telling the user which rank
 * failed, MPI_Abort that really ends the job under --enable-recovery, a
 * process excluded by a (possibly mistaken) failure report, a process that
 * lost its host's runtime daemon, and the pml_failstop_inject test hook. */
#include "common/fs_record.h"
#include "ompi/ompi_int.h"
#include "common/fs_log.h"
#include "common/fs_time.h"


#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fs_ompi_runtime_watched;   /* between PML init and finalize (atomic:
                                         PMIx's thread reads it) */

static unsigned fs_ompi_rank_of(const fs_ep_t *ep)
{
    return ((const ompi_proc_t *)ep->host)->super.proc_name.vpid;
}

/* Under failstop-run: when and how this process learned that ep's process
 * failed, the record learned-<failed>.<this> ("TIME HOW WHAT"), for
 * failstop-run --report and failstop-validate.  HOW is who found it:
 * "transport" (WHAT: the status of the classification table's row),
 * "operation" (an operation's completion reported the death: no status
 * kept), "detector" (WHAT: heartbeat, exit, message: the heartbeat
 * detector's own timeout, the process's exit seen on this host, another
 * detector's word), "notice" (WHAT: the rank whose failure notice told us),
 * "agreement" (a validation over the communicator decided it). */
static void fs_ompi_record_learned(const fs_ep_t *ep, const fs_ep_t *reporter)
{
    static const char *const det_what[] = {"heartbeat", "message", "report", "exit"};
    unsigned why = fs_ompi.hb_cause;
    char kind[32], text[192];

    if (reporter != NULL) {
        snprintf(text, sizeof(text), "%.6f notice %u\n", fs_time_wall(),
                 fs_ompi_rank_of(reporter));
    } else if (why != 0) {
        snprintf(text, sizeof(text), "%.6f detector %s\n", fs_time_wall(),
                 (why - 1u < 4u) ? det_what[why - 1u] : "?");
    } else if (ep->fault != NULL) {
        snprintf(text, sizeof(text), "%.6f transport %s\n", fs_time_wall(),
                 ep->fault->name);
    } else {
        snprintf(text, sizeof(text), "%.6f %s -\n", fs_time_wall(),
                 ep->recognized ? "agreement" : "operation");
    }
    snprintf(kind, sizeof(kind), "learned-%u", fs_ompi_rank_of(ep));
    fs_record(kind, (int)OMPI_PROC_MY_NAME->vpid, text);
}

/* Under failstop-run: the first error failstop gave this process's program
 * (errored.<this>: "TIME STATUS MPI-CODE"), for failstop-run --report. */
void fs_ompi_record_error(fs_status_t status, int code)
{
    static int recorded;
    char text[128];

    if (recorded || (getenv("FAILSTOP_STATUS_DIR") == NULL)) {
        return;
    }
    recorded = 1;
    snprintf(text, sizeof(text), "%.6f %s %d\n", fs_time_wall(),
             fs_status_string(status), code);
    fs_record("errored", (int)OMPI_PROC_MY_NAME->vpid, text);
}

/* Under failstop-run, once, as MPI_Finalize begins: what this process's
 * traffic went over (device.<this>: "transport/device,..." over every peer
 * of MPI_COMM_WORLD it talked to), for failstop-validate's report. */
void fs_ompi_record_devices(void)
{
    static int recorded;
    char all[512] = "", one[256], *tok, *save;
    size_t used = 0;
    uint32_t r;

    if (recorded || (fs_ompi.world_eps == NULL) || (getenv("FAILSTOP_STATUS_DIR") == NULL)) {
        return;
    }
    recorded = 1;
    for (r = 0; r < fs_ompi.world_size; ++r) {
        if ((fs_ompi.world_eps[r] == NULL) ||
            (fs_engine_ep_describe(fs_ompi.engine, fs_ompi.world_eps[r], one,
                                   sizeof(one)) != FS_OK)) {
            continue;
        }
        for (tok = strtok_r(one, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
            if ((strstr(all, tok) == NULL) && (used + strlen(tok) + 2 < sizeof(all))) {
                used += (size_t)snprintf(all + used, sizeof(all) - used, "%s%s",
                                         (used > 0) ? "," : "", tok);
            }
        }
    }
    if (used > 0) {
        all[used] = '\n';
        fs_record("device", (int)OMPI_PROC_MY_NAME->vpid, all);
    }
}

void fs_ompi_peer_failed(void *host_arg, fs_ep_t *ep, fs_ep_t *reporter)
{
    (void)host_arg;
    /* names the failed rank: with MPI_ERRORS_ARE_FATAL the job then aborts
     * with Open MPI's message for the error class */
    FS_WARN("process %u (rank in MPI_COMM_WORLD) failed%s", fs_ompi_rank_of(ep),
            (reporter != NULL) ? " (reported by another process)" : "");
    fs_ompi_record_learned(ep, reporter);
    /* failstop-run's exit status excuses the processes failstop declared
     * failed (its README states the rule) */
    fs_ompi_status_mark("declared", fs_ompi_rank_of(ep), (int)OMPI_PROC_MY_NAME->vpid);
    fs_ompi_hb_report(ep);
#ifdef FS_OMPI_V5
    if (ep->state != FS_EP_CLOSED) {    /* else MPI_Finalize freed the groups */
        fs_ompi_ulfm5_failed(ep->host);
    }
#endif
}

void fs_ompi_status_mark(const char *what, unsigned rank, int code)
{
    char text[32];

    snprintf(text, sizeof(text), "%d\n", code);
    fs_record(what, (int)rank, text);
}

void fs_ompi_mark(const char *what, int code)
{
    fs_ompi_status_mark(what, OMPI_PROC_MY_NAME->vpid, code);
}

void fs_ompi_abort(void *host_arg, fs_ep_t *from, int errcode)
{
    (void)host_arg;
    fprintf(stderr, "[failstop:%u] process %u called MPI_Abort(%d): ending this "
            "process too\n", OMPI_PROC_MY_NAME->vpid, fs_ompi_rank_of(from), errcode);
    fs_ompi_mark("aborted", errcode);
    _exit(errcode != 0 ? errcode : 1);
}

void fs_ompi_excluded(void *host_arg, fs_ep_t *by)
{
    (void)host_arg;
    fprintf(stderr, "[failstop:%u] process %u reported this process as failed; a "
            "failed process is excluded from the job (MPI-FT 17.3): ending it\n",
            OMPI_PROC_MY_NAME->vpid, fs_ompi_rank_of(by));
    _exit(1);
}

void fs_ompi_inject(void *host_arg, int sig)
{
    (void)host_arg;
    /* failstop-run --strict counts a rank that left this marker as killed
     * on purpose */
    fs_ompi_mark("injected", sig);
    raise(sig);
}

/* The daemon is gone: end as a failed process, with the record saying why. */
void fs_ompi_runtime_end(void)
{
    char msg[256];
    int n;
    ssize_t w;

    /* its output went through the daemon too: a write would raise SIGPIPE.
     * No stdio: this also runs in a signal handler (fs_ompi_sigpipe). */
    signal(SIGPIPE, SIG_IGN);
    fs_ompi_mark("runtime_lost", 1);
    n = snprintf(msg, sizeof(msg), "[failstop:%u] lost the connection to Open MPI's "
                 "daemon on this host: this process can no longer be managed and ends; "
                 "the others find it failed and go on\n", OMPI_PROC_MY_NAME->vpid);
    if ((n > 0) && ((size_t)n < sizeof(msg))) {
        w = write(2, msg, (size_t)n);
        (void)w;
    }
    _exit(1);
}

/* The daemon also carries this process's output.  When it dies the pipes
 * break, and a write there (a log line on learning that a neighbour ended,
 * UCX's, the program's) raised SIGPIPE and ended the process before PMIx
 * told it the daemon was gone (seen 2 runs in 10 of net.sh's daemon case).
 * A SIGPIPE while stdout or stderr is a broken pipe is that loss; any other
 * keeps its default action. */
static void fs_ompi_sigpipe(int sig)
{
    struct pollfd out[2] = { { .fd = 1 }, { .fd = 2 } };

    if (__atomic_load_n(&fs_ompi_runtime_watched, __ATOMIC_ACQUIRE) &&
        (poll(out, 2, 0) > 0) && ((out[0].revents | out[1].revents) & POLLERR)) {
        fs_ompi_runtime_end();
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Only where the program left SIGPIPE's default (which ends the process). */
static void fs_ompi_sigpipe_watch(void)
{
    struct sigaction now, sa;

    if ((sigaction(SIGPIPE, NULL, &now) != 0) || (now.sa_handler != SIG_DFL)) {
        return;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = fs_ompi_sigpipe;
    sigemptyset(&sa.sa_mask);
    (void)sigaction(SIGPIPE, &sa, NULL);
}

void fs_ompi_failure_init(void)
{
    fs_ompi_rte_hooks_init();
    fs_ompi_sigpipe_watch();
    __atomic_store_n(&fs_ompi_runtime_watched, 1, __ATOMIC_RELEASE);
}

void fs_ompi_failure_fini(void)
{
    __atomic_store_n(&fs_ompi_runtime_watched, 0, __ATOMIC_RELEASE);
    fs_ompi_rte_hooks_fini();
}

int fs_ompi_runtime_is_watched(void)
{
    return __atomic_load_n(&fs_ompi_runtime_watched, __ATOMIC_ACQUIRE);
}

fs_ompi_phase_t fs_ompi_inject_phase = FS_OMPI_PHASE_NONE;
static int fs_ompi_inject_phase_sig;

static const char *const fs_ompi_phase_names[] = {
    [FS_OMPI_PHASE_INIT]     = "init",
    [FS_OMPI_PHASE_WIREUP]   = "wireup",
    [FS_OMPI_PHASE_COMM]     = "comm",
    [FS_OMPI_PHASE_FINALIZE] = "finalize",
    [FS_OMPI_PHASE_BYE]      = "bye",
};

void fs_ompi_inject_phase_fire(void)
{
    int sig = fs_ompi_inject_phase_sig;
    const char *name = fs_ompi_phase_names[fs_ompi_inject_phase];

    fs_ompi_inject_phase = FS_OMPI_PHASE_NONE;     /* once (SIGSTOP may return) */
    FS_WARN("fault injection: killing this process with signal %d in phase %s", sig,
            name);
    fs_ompi_inject(NULL, sig);
}

static int fs_ompi_inject_signal(const char *signame)
{
    int sig = atoi(signame);

    if (sig <= 0) {
        const char *name = strncmp(signame, "SIG", 3) ? signame : signame + 3;
        sig = !strcmp(name, "KILL") ? SIGKILL : !strcmp(name, "TERM") ? SIGTERM :
              !strcmp(name, "STOP") ? SIGSTOP : !strcmp(name, "SEGV") ? SIGSEGV :
              !strcmp(name, "ABRT") ? SIGABRT : 0;
    }
    return sig;
}

static char *fs_ompi_inject_hold_path;

/* "RANK:hold=PATH": connection setup waits for PATH (fs_ompi_inject_hold). */
static int fs_ompi_inject_hold_one(const char *spec)
{
    char path[4096];
    int rank;

    if ((sscanf(spec, "%d:hold=%4095s", &rank, path) != 2) ||
        ((unsigned)rank != OMPI_PROC_MY_NAME->vpid)) {
        return OMPI_SUCCESS;
    }
    free(fs_ompi_inject_hold_path);
    fs_ompi_inject_hold_path = strdup(path);
    return (fs_ompi_inject_hold_path != NULL) ? OMPI_SUCCESS : OMPI_ERR_OUT_OF_RESOURCE;
}

/* MPI_Init, past the address exchange and before this process connects to
 * anyone: with "RANK:hold=PATH", waits until PATH exists (at most
 * FS_OMPI_HOLD_MAX_S), so that a test can make the connection setup run
 * while the network misbehaves (tests/hosts/flap.sh, wireup).  The
 * detector's thread beats meanwhile: the wait is not a hang. */
#define FS_OMPI_HOLD_MAX_S 60
void fs_ompi_inject_hold(void)
{
    int i;

    if (fs_ompi_inject_hold_path == NULL) {
        return;
    }
    for (i = 0; (i < FS_OMPI_HOLD_MAX_S * 100) && (access(fs_ompi_inject_hold_path, F_OK) != 0);
         ++i) {
        usleep(10000);
    }
    if (i == FS_OMPI_HOLD_MAX_S * 100) {
        FS_WARN("fault injection: %s did not appear within %d s: connecting anyway",
                fs_ompi_inject_hold_path, FS_OMPI_HOLD_MAX_S);
    }
    free(fs_ompi_inject_hold_path);
    fs_ompi_inject_hold_path = NULL;
}

/* One of pml_failstop_inject's comma-separated items: "RANK:after=N[:SIGNAL]",
 * "RANK:at=PHASE[:SIGNAL]" (SIGNAL by number or name; PHASE one of
 * fs_ompi_phase_names or "connect", the first message to a peer nothing was
 * exchanged with) or "RANK:hold=PATH". */
static int fs_ompi_inject_one(const char *spec)
{
    unsigned long long after = 0;
    char signame[32] = "KILL", phase[32] = "";
    int rank, sig, n, p, at = 0;

    if ((spec == NULL) || (*spec == '\0')) {
        return OMPI_SUCCESS;
    }
    if (strstr(spec, ":hold=") != NULL) {
        return fs_ompi_inject_hold_one(spec);
    }
    n = sscanf(spec, "%d:after=%llu:%31s", &rank, &after, signame);
    if (n < 2) {
        n  = sscanf(spec, "%d:at=%31[a-z]:%31s", &rank, phase, signame);
        at = 1;
    }
    if (n < 2) {
        FS_ERROR("pml_failstop_inject: '%s' is not RANK:after=N[:SIGNAL], "
                 "RANK:at=PHASE[:SIGNAL] or RANK:hold=PATH", spec);
        return OMPI_ERR_BAD_PARAM;
    }
    sig = fs_ompi_inject_signal(signame);
    if (sig <= 0) {
        FS_ERROR("pml_failstop_inject: unknown signal '%s'", signame);
        return OMPI_ERR_BAD_PARAM;
    }
    p = FS_OMPI_PHASE_NONE;
    if (at && strcmp(phase, "connect")) {
        for (p = FS_OMPI_PHASE_INIT; p <= FS_OMPI_PHASE_BYE; ++p) {
            if (!strcmp(phase, fs_ompi_phase_names[p])) {
                break;
            }
        }
        if (p > FS_OMPI_PHASE_BYE) {
            FS_ERROR("pml_failstop_inject: unknown phase '%s' (init, wireup, connect, "
                     "comm, finalize, bye)", phase);
            return OMPI_ERR_BAD_PARAM;
        }
    }
    if ((unsigned)rank != OMPI_PROC_MY_NAME->vpid) {
        return OMPI_SUCCESS;
    }
    if (!at) {
        fs_engine_inject(fs_ompi.engine, after, sig);
    } else if (p == FS_OMPI_PHASE_NONE) {
        fs_engine_inject_first_contact(fs_ompi.engine, sig);
    } else {
        fs_ompi_inject_phase     = (fs_ompi_phase_t)p;
        fs_ompi_inject_phase_sig = sig;
    }
    return OMPI_SUCCESS;
}

/* pml_failstop_inject: items for several ranks, separated by commas. */
int fs_ompi_inject_setup(const char *spec)
{
    char *copy, *item, *save = NULL;
    int rc = OMPI_SUCCESS;

    if ((spec == NULL) || (*spec == '\0')) {
        return OMPI_SUCCESS;
    }
    copy = strdup(spec);
    if (copy == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (item = strtok_r(copy, ",", &save); (item != NULL) && (rc == OMPI_SUCCESS);
         item = strtok_r(NULL, ",", &save)) {
        rc = fs_ompi_inject_one(item);
    }
    free(copy);
    return rc;
}
