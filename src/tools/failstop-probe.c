/* failstop-probe: one run of one failstop-validate scenario.
 *
 *   failstop-probe SCENARIO [DEATH_MS [WATCHDOG_S]]
 *
 * The last rank is the victim; the others are survivors.  The victim dies
 * DEATH_MS (default 400) after the scenario started, by its own hand: a
 * thread of its own sends the signal, so the death falls wherever the
 * victim's main thread is (inside MPI_Send of a rendezvous message, say) and
 * its time is known to the microsecond.  Just before, it leaves the records
 * failstop-run reads (src/common/fs_record.h): fault.<rank> ("signal N
 * TIME" or "exit 0 TIME") and injected.<rank> (a planned death).
 *
 * Scenarios (what the survivors do when the victim dies):
 *   idle       blocked in MPI_Recv from the victim, which sleeps
 *   eager      receiving a stream of 1 KiB messages from the victim
 *   rndv-in    receiving a stream of 1 MiB messages from the victim
 *   rndv-out   sending a stream of 1 MiB messages to the victim
 *   coll       MPI_Allreduce over MPI_COMM_WORLD in a loop, results checked
 *   wildcard   blocked in an MPI_ANY_SOURCE receive only the victim could match
 *   stop       as idle, but the victim is stopped (SIGSTOP): a hang
 *   exit       as idle, but the victim calls exit(0) without MPI_Finalize
 *   early      the victim dies right after MPI_Init, before any message;
 *              the survivors then send to it and receive from it
 *   soak       nobody dies: every rank exchanges messages of 8 B to 1 MiB
 *              around a ring and in MPI_Allreduce for DEATH_MS, payloads
 *              checked; any error is a false alarm (every rank prints a
 *              line, outcome success or error)
 *   node       the victims are every rank on the last rank's host, and they
 *              do not die by themselves: failstop-validate crashes that host
 *              or cuts it off (DEATH_MS bounds how long they wait for it);
 *              the survivors are blocked in MPI_Recv from the last rank
 *
 * After its error each survivor checks the messages it got from the victim
 * (in order, payload intact), then exchanges an eager and a rendezvous
 * message with the other survivors (a ring, payloads checked) and
 * finalizes.  Each survivor prints one line:
 *   PROBE scen=S rank=R np=N outcome=O class=C t=T call_ms=D msgs=M
 *         order=ok|bad payload=ok|bad after=ok|bad|none victims=V
 * outcome: failstop (the error class is MPI_ERR_RANK_FAIL_STOP), error
 * (another class, named by class=), success (no error: wrong), hang (the
 * watchdog, WATCHDOG_S seconds, default 30, ended the rank).  T is the
 * CLOCK_REALTIME second the error came back, D how long the call that
 * failed had been running (in "early", from the survivor's first contact
 * with the dead process), M the messages taken from or given to the victim
 * (coll: the collectives completed). */
#define _GNU_SOURCE
#include "failstop.h"
#include "common/fs_record.h"
#include "common/fs_time.h"

#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROBE_SMALL    1024
#define PROBE_LARGE    (1 << 20)
#define PROBE_TAG      7
#define PROBE_TAG_RING 8
#define PROBE_TAG_NEVER 9     /* nobody sends it */
#define PROBE_THROTTLE 16     /* every 16th stream message is synchronous */

typedef enum {
    PROBE_IDLE, PROBE_EAGER, PROBE_RNDV_IN, PROBE_RNDV_OUT, PROBE_COLL,
    PROBE_WILDCARD, PROBE_STOP, PROBE_EXIT, PROBE_EARLY, PROBE_SOAK, PROBE_NODE,
    PROBE_NSCEN
} probe_scen_t;

static const char *const probe_names[PROBE_NSCEN] = {
    "idle", "eager", "rndv-in", "rndv-out", "coll", "wildcard", "stop", "exit", "early",
    "soak", "node"
};

typedef struct {
    probe_scen_t scen;
    int          rank, size, victim;   /* victim: the last rank */
    int          nvictims;
    unsigned char dead[256];          /* the ranks meant to fail */
    double       death_s;
    uint64_t    *buf;           /* PROBE_LARGE bytes */
    long         msgs;          /* messages taken from (or given to) the victim */
    int          order_ok, payload_ok;
} probe_t;

static probe_t probe;
static char probe_hang_line[256];   /* written by the watchdog, preformatted */

static void probe_sleep(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* ---- the victim ----------------------------------------------------------- */

static void probe_die(int sig)
{
    char text[64];

    if (sig == 0) {
        snprintf(text, sizeof(text), "exit 0 %.6f\n", fs_time_wall());
        fs_record("fault", probe.rank, text);
        fs_record("injected", probe.rank, "0\n");
        exit(0);                         /* without MPI_Finalize */
    }
    snprintf(text, sizeof(text), "signal %d %.6f\n", sig, fs_time_wall());
    fs_record("fault", probe.rank, text);
    snprintf(text, sizeof(text), "%d\n", sig);
    fs_record("injected", probe.rank, text);
    raise(sig);
}

static void *probe_killer(void *arg)
{
    (void)arg;
    probe_sleep(probe.death_s);
    probe_die((probe.scen == PROBE_STOP) ? SIGSTOP : SIGKILL);
    return NULL;
}

static void probe_fill(uint64_t *buf, size_t bytes, long seq)
{
    size_t i;

    for (i = 0; i < bytes / sizeof(uint64_t); ++i) {
        buf[i] = ((uint64_t)seq << 32) ^ i;
    }
}

static int probe_check(const uint64_t *buf, size_t bytes, long seq)
{
    size_t i;

    for (i = 0; i < bytes / sizeof(uint64_t); ++i) {
        if (buf[i] != (((uint64_t)seq << 32) ^ i)) {
            return 0;
        }
    }
    return 1;
}

/* The victim's part until its death (it never returns). */
__attribute__((noreturn))
static void probe_victim(void)
{
    pthread_t killer;
    size_t bytes = (probe.scen == PROBE_EAGER) ? PROBE_SMALL : PROBE_LARGE;
    long seq[64] = {0};
    int to = 0, sum;

    if ((probe.scen == PROBE_EXIT) || (probe.scen == PROBE_EARLY)) {
        probe_sleep(probe.death_s);
        probe_die((probe.scen == PROBE_EXIT) ? 0 : SIGKILL);
    }
    pthread_create(&killer, NULL, probe_killer, NULL);
    for (;;) {
        switch (probe.scen) {
        case PROBE_EAGER:
        case PROBE_RNDV_IN:
            probe_fill(probe.buf, bytes, seq[to]);
            if ((seq[to] % PROBE_THROTTLE) == PROBE_THROTTLE - 1) {
                MPI_Ssend(probe.buf, (int)bytes, MPI_BYTE, to, PROBE_TAG, MPI_COMM_WORLD);
            } else {
                MPI_Send(probe.buf, (int)bytes, MPI_BYTE, to, PROBE_TAG, MPI_COMM_WORLD);
            }
            seq[to]++;
            to = (to + 1) % (probe.size - 1);
            break;
        case PROBE_RNDV_OUT:
            MPI_Recv(probe.buf, PROBE_LARGE, MPI_BYTE, to, PROBE_TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            to = (to + 1) % (probe.size - 1);
            break;
        case PROBE_COLL:
            sum = probe.rank + 1;
            MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            break;
        default:
            probe_sleep(0.01);
            break;
        }
    }
}

/* ---- the survivors -------------------------------------------------------- */

/* One step of the scenario; returns the MPI error of the step. */
static int probe_step(void)
{
    MPI_Status st;
    int rc, sum = 0, want = probe.size * (probe.size + 1) / 2, one = 1;

    switch (probe.scen) {
    case PROBE_EAGER:
    case PROBE_RNDV_IN:
        rc = MPI_Recv(probe.buf, PROBE_LARGE, MPI_BYTE, probe.victim, PROBE_TAG,
                      MPI_COMM_WORLD, &st);
        if (rc == MPI_SUCCESS) {
            int n = 0;
            long seq = (long)(probe.buf[0] >> 32);

            MPI_Get_count(&st, MPI_BYTE, &n);
            probe.order_ok &= (seq == probe.msgs);
            probe.payload_ok &= probe_check(probe.buf, (size_t)n, seq);
            probe.msgs++;
        }
        return rc;
    case PROBE_RNDV_OUT:
        probe_fill(probe.buf, PROBE_LARGE, probe.msgs);
        rc = MPI_Send(probe.buf, PROBE_LARGE, MPI_BYTE, probe.victim, PROBE_TAG,
                      MPI_COMM_WORLD);
        probe.msgs += (rc == MPI_SUCCESS);
        return rc;
    case PROBE_COLL:
        one = probe.rank + 1;
        rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (rc == MPI_SUCCESS) {
            probe.payload_ok &= (sum == want);
            probe.msgs++;
        }
        return rc;
    case PROBE_WILDCARD:
        return MPI_Recv(probe.buf, 1, MPI_BYTE, MPI_ANY_SOURCE, PROBE_TAG,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    case PROBE_EARLY:
        rc = MPI_Send(&one, 1, MPI_INT, probe.victim, PROBE_TAG, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        return MPI_Recv(probe.buf, 1, MPI_BYTE, probe.victim, PROBE_TAG,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    default:
        return MPI_Recv(probe.buf, 1, MPI_BYTE, probe.victim, PROBE_TAG,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* After the failure: an eager and a rendezvous message around the ring of
 * survivors, payloads checked.  "none" with a single survivor. */
static const char *probe_after(void)
{
    int alive[256], n = 0, me = 0, next, prev, r;
    size_t sizes[2] = { PROBE_SMALL, PROBE_LARGE };
    uint64_t *out = malloc(PROBE_LARGE);
    int i, ok = (out != NULL);

    for (r = 0; r < probe.size; ++r) {
        if (!probe.dead[r]) {
            me         = (r == probe.rank) ? n : me;
            alive[n++] = r;
        }
    }
    next = alive[(me + 1) % n];
    prev = alive[(me + n - 1) % n];
    if (n < 2) {
        free(out);
        return "none";
    }
    for (i = 0; ok && (i < 2); ++i) {
        probe_fill(out, sizes[i], 1000 + probe.rank);
        ok = (MPI_Sendrecv(out, (int)sizes[i], MPI_BYTE, next, PROBE_TAG_RING, probe.buf,
                           (int)sizes[i], MPI_BYTE, prev, PROBE_TAG_RING, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE) == MPI_SUCCESS) &&
             probe_check(probe.buf, sizes[i], 1000 + prev);
    }
    free(out);
    return ok ? "ok" : "bad";
}

static void probe_watchdog(int sig)
{
    ssize_t w;

    (void)sig;
    w = write(1, probe_hang_line, strlen(probe_hang_line));
    (void)w;
    _exit(3);
}

/* The error class by name (MPI_Error_string's text is a sentence). */
static const char *probe_class_name(int cls)
{
    static const struct { int cls; const char *name; } known[] = {
        { MPI_SUCCESS, "-" }, { MPI_ERR_INTERN, "MPI_ERR_INTERN" },
        { MPI_ERR_OTHER, "MPI_ERR_OTHER" }, { MPI_ERR_UNKNOWN, "MPI_ERR_UNKNOWN" },
        { MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE" }, { MPI_ERR_RANK, "MPI_ERR_RANK" },
        { MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM" }, { MPI_ERR_COMM, "MPI_ERR_COMM" },
        { MPI_ERR_PENDING, "MPI_ERR_PENDING" }, { MPI_ERR_IN_STATUS, "MPI_ERR_IN_STATUS" },
    };
    size_t i;

    if (cls == MPIX_ERR_RANK_FAIL_STOP) {
        return "MPI_ERR_RANK_FAIL_STOP";
    }
    if (cls == MPIX_ERR_REVOKED) {
        return "MPIX_ERR_REVOKED";
    }
    for (i = 0; i < sizeof(known) / sizeof(known[0]); ++i) {
        if (known[i].cls == cls) {
            return known[i].name;
        }
    }
    return "other";
}

static void probe_survivor(double watchdog_s)
{
    const char *outcome = "success";
    int rc = MPI_SUCCESS, cls = MPI_SUCCESS;
    double t = 0, call = 0, until = fs_time_wall() + probe.death_s + watchdog_s;

    signal(SIGALRM, probe_watchdog);
    alarm((unsigned)(probe.death_s + watchdog_s + 1));
    if (probe.scen == PROBE_EARLY) {
        probe_sleep(probe.death_s + 0.3);      /* the victim is dead by now */
    }
    /* until an error; a success after the victim's death plus the watchdog
     * time would be wrong (and is reported as such) */
    while ((rc == MPI_SUCCESS) && (fs_time_wall() < until)) {
        call = fs_time_wall();
        rc   = probe_step();
    }
    t = fs_time_wall();
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &cls);
        outcome = (cls == MPIX_ERR_RANK_FAIL_STOP) ? "failstop" : "error";
    }
    printf("PROBE scen=%s rank=%d np=%d outcome=%s class=%s t=%.6f call_ms=%.3f msgs=%ld "
           "order=%s payload=%s after=%s victims=%d\n", probe_names[probe.scen], probe.rank,
           probe.size, outcome, probe_class_name(cls), t, (t - call) * 1e3, probe.msgs,
           probe.order_ok ? "ok" : "bad", probe.payload_ok ? "ok" : "bad", probe_after(),
           probe.nvictims);
    fflush(stdout);
    alarm(0);
}

/* The false-alarm soak: traffic of every size for probe.death_s seconds. */
static void probe_soak(double watchdog_s)
{
    int n = probe.size, next = (probe.rank + 1) % n, prev = (probe.rank + n - 1) % n;
    int rc = MPI_SUCCESS, cls = MPI_SUCCESS, sum[2] = {0, 0};
    uint64_t *out = malloc(PROBE_LARGE);
    double until = fs_time_wall() + probe.death_s;
    size_t bytes = 8;

    signal(SIGALRM, probe_watchdog);
    alarm((unsigned)(probe.death_s + watchdog_s + 1));
    /* the ranks stop together: the allreduce also sums "my time is up" */
    while ((out != NULL) && (rc == MPI_SUCCESS) && (sum[1] == 0)) {
        probe_fill(out, bytes, probe.msgs * n + probe.rank);
        rc = MPI_Sendrecv(out, (int)bytes, MPI_BYTE, next, PROBE_TAG_RING, probe.buf,
                          (int)bytes, MPI_BYTE, prev, PROBE_TAG_RING, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE);
        probe.payload_ok &= (rc != MPI_SUCCESS) ||
                            probe_check(probe.buf, bytes, probe.msgs * n + prev);
        sum[0] = probe.rank + 1;
        sum[1] = (fs_time_wall() >= until);
        if (rc == MPI_SUCCESS) {
            rc = MPI_Allreduce(MPI_IN_PLACE, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            probe.payload_ok &= (rc != MPI_SUCCESS) || (sum[0] == n * (n + 1) / 2);
        }
        probe.msgs++;
        bytes = (bytes * 4 > PROBE_LARGE) ? 8 : bytes * 4;   /* 8 B .. 512 KiB */
    }
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &cls);
    }
    printf("PROBE scen=soak rank=%d np=%d outcome=%s class=%s t=%.6f call_ms=- msgs=%ld "
           "order=ok payload=%s after=none victims=0\n", probe.rank, n,
           (rc == MPI_SUCCESS) ? "success" : "error", probe_class_name(cls), fs_time_wall(),
           probe.msgs, probe.payload_ok ? "ok" : "bad");
    fflush(stdout);
    alarm(0);
    free(out);
}

/* Who is meant to fail: the last rank; in "node", every rank on its host
 * (hostnames exchanged while everybody is alive). */
static void probe_mark_victims(void)
{
    char (*names)[64] = calloc((size_t)probe.size, 64);
    char mine[64] = "";
    int r;

    probe.dead[probe.victim] = 1;
    probe.nvictims           = (probe.scen == PROBE_SOAK) ? 0 : 1;
    if ((probe.scen != PROBE_NODE) || (names == NULL)) {
        free(names);
        return;
    }
    gethostname(mine, sizeof(mine) - 1);
    MPI_Allgather(mine, 64, MPI_CHAR, names, 64, MPI_CHAR, MPI_COMM_WORLD);
    for (r = 0, probe.nvictims = 0; r < probe.size; ++r) {
        probe.dead[r] = (strcmp(names[r], names[probe.victim]) == 0);
        probe.nvictims += probe.dead[r];
    }
    free(names);
}

static void probe_quiet_end(int sig)
{
    (void)sig;
    _exit(4);      /* nobody came to crash or cut off this host */
}

/* A rank of the host failstop-validate takes down: it waits inside MPI
 * until that happens (a crash kills it; cut off, failstop ends it). */
__attribute__((noreturn))
static void probe_node_victim(double watchdog_s)
{
    signal(SIGALRM, probe_quiet_end);
    alarm((unsigned)(probe.death_s + watchdog_s + 1));
    for (;;) {
        if (MPI_Recv(probe.buf, 1, MPI_BYTE, 0, PROBE_TAG_NEVER, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            probe_sleep(0.05);     /* it sees the others fail: wait for its end */
        }
    }
}

static int probe_parse(int argc, char **argv, double *watchdog_p)
{
    int s;

    if (argc < 2) {
        return -1;
    }
    for (s = 0; s < PROBE_NSCEN; ++s) {
        if (strcmp(argv[1], probe_names[s]) == 0) {
            probe.scen = (probe_scen_t)s;
            break;
        }
    }
    probe.death_s = (argc > 2) ? atof(argv[2]) / 1e3 : 0.4;
    *watchdog_p   = (argc > 3) ? atof(argv[3]) : 30.0;
    return ((s == PROBE_NSCEN) || (probe.death_s < 0) || (*watchdog_p <= 0)) ? -1 : 0;
}

int main(int argc, char **argv)
{
    double watchdog_s;
    int pairs_out[256] = {0}, pairs_in[256];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &probe.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &probe.size);
    if ((probe_parse(argc, argv, &watchdog_s) != 0) || (probe.size < 2) ||
        (probe.size > 256)) {
        if (probe.rank == 0) {
            fprintf(stderr, "usage: failstop-probe idle|eager|rndv-in|rndv-out|coll|"
                    "wildcard|stop|exit|early|soak|node [DEATH_MS [WATCHDOG_S]] (2 to 256 ranks)\n");
        }
        MPI_Finalize();
        return 2;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    probe.victim     = probe.size - 1;
    probe.order_ok   = probe.payload_ok = 1;
    probe_mark_victims();
    probe.buf        = malloc(PROBE_LARGE);
    if (probe.buf == NULL) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (probe.scen != PROBE_EARLY) {
        /* every pair in contact before the clock starts */
        MPI_Alltoall(pairs_out, 1, MPI_INT, pairs_in, 1, MPI_INT, MPI_COMM_WORLD);
    }
    snprintf(probe_hang_line, sizeof(probe_hang_line),
             "PROBE scen=%s rank=%d np=%d outcome=hang class=- t=- call_ms=- msgs=- "
             "order=- payload=- after=- victims=%d\n", probe_names[probe.scen], probe.rank,
             probe.size, probe.nvictims);
    if (probe.scen == PROBE_SOAK) {
        probe_soak(watchdog_s);
    } else if (probe.dead[probe.rank]) {
        if (probe.scen == PROBE_NODE) {
            probe_node_victim(watchdog_s);
        }
        probe_victim();
    } else {
        probe_survivor(watchdog_s);
    }
    free(probe.buf);
    MPI_Finalize();
    return 0;
}
