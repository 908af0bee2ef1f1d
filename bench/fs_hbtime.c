/* fs_hbtime: how long until every survivor knows of a failure, at N ranks.
 *
 *   fs_hbtime -m kill|stop [-l LEAD_MS] [-j JITTER_MS] [-D DEADLINE_S]
 *
 * One mpirun is one trial.  The last rank is the victim: at a time T agreed
 * in advance (rank 0 picks T = now + LEAD + uniform 0..JITTER and
 * broadcasts it, before anything fails), it wakes from clock_nanosleep
 * (TIMER_ABSTIME, CLOCK_REALTIME) and raises SIGKILL (-m kill: a crash) or
 * SIGSTOP (-m stop: a hang, which only failstop's heartbeat detector can
 * find; failstop-run's waiter kills it later so the job ends).  Every
 * survivor polls MPI_Iprobe naming the victim until it returns an error,
 * and reads the clock: learn_i = t_i - T.  No survivor ever exchanged a
 * message with the victim (the broadcast is the only collective, before T),
 * so what a survivor learns comes from failstop's detection and
 * propagation.  Error of the reference: the victim's wake-up lateness
 * (microseconds when it has a core; more when 16 ranks share 2 cores).
 *
 * Rank 0 prints one line:
 *   HB mode=M np=N first_ms=min(learn) all_ms=max(learn) ok=S/S msgs=K
 * ok: survivors whose error had the failure class; msgs: failure messages
 * sent by all survivors together (failstop counters hb_failed_sent +
 * notices_sent, -1 if unavailable).  Plain MPI; failstop's MPIX functions
 * are looked up at run time so the program links without -lfailstop. */
#define _GNU_SOURCE
#include <mpi.h>

#include "fs_bench_sym.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HB_TAG_NEVER 99
#define HB_TAG_RES   7

static int (*hb_fs_class)(void);
static int (*hb_fs_counter)(const char *, unsigned long long *);

static double hb_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long long hb_msgs(void)
{
    unsigned long long a = 0, b = 0;

    if ((hb_fs_counter == NULL) || (hb_fs_counter("hb_failed_sent", &a) != MPI_SUCCESS) ||
        (hb_fs_counter("notices_sent", &b) != MPI_SUCCESS)) {
        return -1;
    }
    return (long long)(a + b);
}

__attribute__((noreturn))
static void hb_victim(double t, int sig)
{
    struct timespec ts;

    ts.tv_sec  = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) != 0) {
    }
    raise(sig);
    for (;;) {
        pause();    /* SIGSTOP: continued only to be killed */
    }
}

/* Polls a probe naming the victim; returns seconds after t, or -1. */
static double hb_learn(int victim, double t, double deadline, int *ok_p)
{
    MPI_Status st;
    int flag = 0, rc, cls = -1;

    for (;;) {
        rc = MPI_Iprobe(victim, HB_TAG_NEVER, MPI_COMM_WORLD, &flag, &st);
        if (rc != MPI_SUCCESS) {
            double d = hb_now() - t;
            MPI_Error_class(rc, &cls);
            *ok_p = (hb_fs_class != NULL) && (cls == hb_fs_class());
            return d;
        }
        if (hb_now() > t + deadline) {
            *ok_p = 0;
            return -1.0;
        }
    }
}

int main(int argc, char **argv)
{
    int me, np, c, sig = SIGKILL, lead_ms = 500, jitter_ms = 200, ok = 0, i;
    double deadline = 20.0, t = 0.0, learn, res[3];
    double first = 1e30, all = -1e30;
    long long msgs = 0;
    int nok = 0, missing = 0;

    while ((c = getopt(argc, argv, "m:l:j:D:")) != -1) {
        switch (c) {
        case 'm': sig = strcmp(optarg, "stop") ? SIGKILL : SIGSTOP; break;
        case 'l': lead_ms = atoi(optarg); break;
        case 'j': jitter_ms = atoi(optarg); break;
        case 'D': deadline = atof(optarg); break;
        default:
            fprintf(stderr, "usage: fs_hbtime -m kill|stop [-l LEAD_MS] [-j JITTER_MS] "
                    "[-D DEADLINE_S]\n");
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    hb_fs_class   = (int (*)(void))fs_bench_sym("MPIX_Failstop_error_class");
    hb_fs_counter = (int (*)(const char *, unsigned long long *))
                    fs_bench_sym("MPIX_Failstop_counter");
    if (me == 0) {
        srand((unsigned)getpid());
        t = hb_now() + lead_ms * 1e-3 + (jitter_ms > 0 ? rand() % jitter_ms : 0) * 1e-3;
    }
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (me == np - 1) {
        hb_victim(t, sig);
    }
    learn = hb_learn(np - 1, t, deadline, &ok);
    res[0] = learn;
    res[1] = ok;
    res[2] = (double)hb_msgs();
    if (me != 0) {
        MPI_Send(res, 3, MPI_DOUBLE, 0, HB_TAG_RES, MPI_COMM_WORLD);
    } else {
        for (i = 0; i < np - 1; ++i) {
            if ((i != 0) &&
                (MPI_Recv(res, 3, MPI_DOUBLE, i, HB_TAG_RES, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE) != MPI_SUCCESS)) {
                res[0] = -1.0;
                res[1] = 0;
                res[2] = -1;
            }
            if (res[0] < 0) {
                missing = 1;        /* this survivor never learned */
            } else {
                first = (res[0] < first) ? res[0] : first;
                all   = (res[0] > all) ? res[0] : all;
            }
            nok  += (int)res[1];
            msgs  = ((res[2] < 0) || (msgs < 0)) ? -1 : msgs + (long long)res[2];
        }
        printf("HB mode=%s np=%d first_ms=%.3f all_ms=%.3f ok=%d/%d msgs=%lld\n",
               sig == SIGKILL ? "kill" : "stop", np, first * 1e3,
               missing ? -1.0 : all * 1e3, nok, np - 1, msgs);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
