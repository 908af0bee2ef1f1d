/* lifetest.h: the survivors' side of the lifecycle tests (tests/mpi/
 * tf_life_*.c): process V dies or stops inside a phase of its life, chosen
 * by pml_failstop_inject RANK:at=PHASE[:SIGNAL] (docs/PARAMETERS.md), and
 * everyone else checks what they get.  Each test is one header (its
 * injection) and one call. */
#ifndef LIFETEST_H
#define LIFETEST_H

#include "faulttest.h"

/* For a stopped victim (SIGSTOP): its failure must be known while it is
 * still stopped, i.e. found by the detector, not by its death (the waiter's
 * fence kills it after --fence-stopped). */
static inline void life_check_stopped(int stop, int vpid, int v)
{
    if (stop)
        mt_expect(MT_HERE, ft_is_stopped(vpid), "rank %d (pid %d) not stopped any "
                  "more when its failure is known: found by its death, not its hang",
                  v, vpid);
}

/* MPI_Init, the class check, and the victim's pid published to the others
 * (*vpid_p, for the SIGSTOP checks); returns this rank. */
static inline int life_start(int *argc, char ***argv, const char *name, int v,
                             int *vpid_p)
{
    int me;

    mt_init(argc, argv, name);
    me = mt_rank();
    ft_check_class();
    if (me == v)
        ft_publish_pid();
    else
        *vpid_p = ft_peer_pid(v);
    return me;
}

static inline void life_survivors(int v, int tag)
{
    int i, n = mt_size(), nlive = 0, live[64];

    mt_expect(MT_HERE, n <= 64, "at most 64 ranks");
    for (i = 0; i < n; i++)
        if (i != v)
            live[nlive++] = i;
    ft_survivors_exchange(live, nlive, tag);
}

/* Death during first contact (at=connect): v's first message is 100 kB (a
 * rendezvous) to rank 0; it dies or stops right after handing it to the
 * transport.  Every other survivor's first contact with v (a synchronous
 * send) and a broadcast rooted at v end with the failure class.  Rank 0's
 * receive of the message ends with the class too, unless the transport read
 * the whole payload before the death (a single-copy read from a process of
 * the node: it needs no step of the sender's, and a stopped sender's memory
 * can still be read): then it must be intact (rule a). */
static inline int life_connect(int *argc, char ***argv, const char *name, int stop)
{
    enum { BIG = 100000 };
    static char buf[BIG];
    const int v = 2;
    int me, vpid = 0;

    me = life_start(argc, argv, name, v, &vpid);
    if (me == v) {
        memset(buf, 'v', BIG);
        MT_CHECK(MPI_Send(buf, BIG, MPI_CHAR, 0, 1, MPI_COMM_WORLD));
        mt_fail(MT_HERE, "alive after its first contact");
    }
    ft_watchdog_arm(MT_HERE, "first contact with a process that died in it");
    if (me == 0) {
        int rc = MPI_Recv(buf, BIG, MPI_CHAR, v, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            mt_expect(MT_HERE, (buf[0] == 'v') && (buf[BIG - 1] == 'v') &&
                      !memcmp(buf, buf + 1, BIG - 1),
                      "the dead process's first message delivered, but not intact");
        else
            ft_expect_failed(MT_HERE, rc, "receive of the message that was the dead "
                             "process's first contact");
    } else
        ft_expect_failed(MT_HERE, MPI_Ssend(buf, 1, MPI_CHAR, v, 1, MPI_COMM_WORLD),
                         "first contact with a process that died in its own first contact");
    ft_expect_failed(MT_HERE, MPI_Bcast(buf, 10, MPI_CHAR, v, MPI_COMM_WORLD),
                     "broadcast rooted at the dead process");
    /* only now is the failure known everywhere: rank 0's receive may have
     * read the message before v even stopped */
    life_check_stopped(stop, vpid, v);
    ft_watchdog_disarm();
    life_survivors(v, 2);
    return ft_finish();
}

/* Open MPI 4.1 turns any failure inside the context-id agreement of a
 * communicator creation into MPI_ERR_INTERN, whatever the PML returned
 * (ompi/communicator/comm_request.c, v4.1.4 line 147: "MPI_ERROR = (OMPI_SUCCESS
 * == rc) ? MPI_SUCCESS : MPI_ERR_INTERN"; Open MPI 5 passes the error on).
 * A PML cannot change that code, so there MPI_ERR_INTERN is accepted -- only
 * if the failure query on the parent names the dead process, which is how a
 * program learns why its creation failed (docs/SEMANTICS.md). */
static inline int life_cid_intern(int rc, int v)
{
    int cls = MPI_SUCCESS;

    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_INTERN)
        return 0;
    mt_expect(MT_HERE, ft_is_known_failed(MPI_COMM_WORLD, v), "MPI_Comm_split "
              "returned MPI_ERR_INTERN and process %d is not known failed", v);
    return 1;
}

/* Death during communicator creation: every process splits
 * MPI_COMM_WORLD; v dies or stops in it (at=comm: once the context id is
 * agreed and the PML has the new communicator, while Open MPI's activation
 * runs; after=1: at its first message, the split's first collective).
 * Survivors' split ends without a hang and without MPI_ERR_INTERN: with the
 * failure class, or -- v died after its part of the agreement, and Open
 * MPI's activation ignores the errors of its barrier -- with a new
 * communicator that has v in its failed group, whose collectives end with
 * the class.  A broadcast on MPI_COMM_WORLD rooted at v ends with it too. */
static inline int life_comm(int *argc, char ***argv, const char *name, int stop)
{
    const int v = 2;
    int me, rc, x = 0, vpid = 0;
    MPI_Comm c = MPI_COMM_NULL;

    me = life_start(argc, argv, name, v, &vpid);
    ft_watchdog_arm(MT_HERE, "MPI_Comm_split with a process dying in it");
    rc = MPI_Comm_split(MPI_COMM_WORLD, 0, me, &c);
    mt_expect(MT_HERE, me != v, "process %d outlived its injected death", v);
    if ((rc != MPI_SUCCESS) && life_cid_intern(rc, v)) {
        /* Open MPI 4.1 limitation, see life_cid_intern */
    } else if (rc != MPI_SUCCESS) {
        ft_expect_failed(MT_HERE, rc, "MPI_Comm_split with a process dying in it");
    } else {
        ft_expect_failed(MT_HERE, MPI_Bcast(&x, 1, MPI_INT, v, c),
                         "broadcast on the new communicator rooted at the dead process");
        mt_expect(MT_HERE, ft_is_known_failed(c, v), "new communicator: rank %d not in "
                  "its failed group", v);
    }
    life_check_stopped(stop, vpid, v);
    ft_expect_failed(MT_HERE, MPI_Bcast(&x, 1, MPI_INT, v, MPI_COMM_WORLD),
                     "broadcast on MPI_COMM_WORLD rooted at the dead process");
    ft_watchdog_disarm();
    if (rc == MPI_SUCCESS)
        MT_CHECK(MPI_Comm_free(&c));
    life_survivors(v, 3);
    return ft_finish();
}

/* Death during MPI_Finalize: after a barrier v calls MPI_Finalize and dies
 * or stops in it (at=finalize: before its departure is announced; at=bye:
 * right after).  Survivors receive from it, send to it (standard and
 * synchronous) and broadcast from it: the failure class, or -- only when
 * its departure had been announced (left_ok) -- the "left" outcome
 * (MPI_ERR_OTHER, "already called MPI_Finalize"); never MPI_ERR_INTERN,
 * never a hang. */
static inline int life_finalize(int *argc, char ***argv, const char *name, int stop,
                                int left_ok)
{
    const int v = 2;
    int me, x = 0, vpid = 0, rc;

#define LIFE_EXPECT(rc, what) \
    (left_ok ? ft_expect_failed_or_left(MT_HERE, (rc), (what)) \
             : ft_expect_failed(MT_HERE, (rc), (what)))
    me = life_start(argc, argv, name, v, &vpid);
    rc = MPI_Barrier(MPI_COMM_WORLD);
    if (me == v) {
        MT_CHECK(rc);
        MPI_Finalize();
        mt_fail(MT_HERE, "alive after MPI_Finalize with an injected death");
    }
    /* v leaves this barrier and dies at once: a survivor whose last message
     * of it to v is delivered but not yet complete (OFI sockets completes a
     * send when the receiver's provider acknowledges it) may rightly get
     * the class (17.7), never a hang or another error */
    if (rc != MPI_SUCCESS)
        LIFE_EXPECT(rc, "barrier that a process left to die in MPI_Finalize");
    ft_watchdog_arm(MT_HERE, "operations with a process that died in MPI_Finalize");
    LIFE_EXPECT(MPI_Recv(&x, 1, MPI_INT, v, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                "receive from a process that died in MPI_Finalize");
    life_check_stopped(stop, vpid, v);
    LIFE_EXPECT(MPI_Send(&x, 1, MPI_INT, v, 1, MPI_COMM_WORLD),
                "send to a process that died in MPI_Finalize");
    LIFE_EXPECT(MPI_Ssend(&x, 1, MPI_INT, v, 1, MPI_COMM_WORLD),
                "synchronous send to a process that died in MPI_Finalize");
    LIFE_EXPECT(MPI_Bcast(&x, 1, MPI_INT, v, MPI_COMM_WORLD),
                "broadcast rooted at a process that died in MPI_Finalize");
#undef LIFE_EXPECT
    ft_watchdog_disarm();
    life_survivors(v, 4);
    return ft_finish();
}

#endif /* LIFETEST_H */
