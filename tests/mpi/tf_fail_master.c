/* tf_fail_master: the MPI-FT working group's "Very Simple Master-Workers"
 * scenario (thread-ft-scenarios-2009.txt, scenario #1) on the chapter's
 * point-to-point rules (MPI-FT 17.6): only the master is hardened.
 *
 * Rank 0 (the master, MPI_ERRORS_RETURN on MPI_COMM_WORLD) hands out NTASK
 * tasks, more than the workers, keeping WINDOW of them outstanding per
 * worker, and collects results with MPI_ANY_SOURCE receives.  The workers
 * keep the default MPI_ERRORS_ARE_FATAL and are not FT-aware at all.
 * Worker 1 is killed by pml_failstop_inject after its 5th message (sent or
 * received), i.e. 2*WINDOW-1: it answers its tasks in order and cannot have
 * answered more than it received, so it dies after returning 0 to 2
 * results and with at least one task received but not answered.
 * Checked at the master:
 *   - the pending (or next) wildcard receive ends with
 *     MPIX_ERR_RANK_FAIL_STOP (ANY_SOURCE disabled on the failure), exactly
 *     once in the whole run (one failure, and ANY_SOURCE stays usable after
 *     re-enabling);
 *   - MPIX_Comm_reenable_any_source returns exactly {1} as the failed group,
 *     and MPIX_Comm_group_failed agrees;
 *   - the dead worker's outstanding tasks are requeued (at least one) and
 *     every task ends with the right result f(task), computed once more by
 *     a live worker if needed; a result the dead worker sent before dying
 *     may still be delivered (17.6: internally received messages), and is
 *     then also right;
 *   - live workers then get their stop message (sends to them succeed).
 * The live workers (default error handler) finish and print OK: a failure
 * of a process they never talk to must not abort them.
 * FS_TEST_NPS: 3 4
 * FS_TEST_OPTS: --mca pml_failstop_inject 1:after=5
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

enum { NTASK = 60, WINDOW = 3, NIN = 8, VICTIM = 1 };
enum { TAG_TASK = 11, TAG_STOP = 12, TAG_RESULT = 13 };
enum { T_QUEUED, T_ASSIGNED, T_DONE };

typedef struct {
    int32_t id;
    uint32_t in[NIN];
} task_t;

typedef struct {
    int32_t id;
    int32_t worker;
    uint64_t value;
} result_t;

/* The task's input, a function of its id only. */
static void task_make(task_t *t, int id)
{
    t->id = id;
    for (int i = 0; i < NIN; i++)
        t->in[i] = (uint32_t)mt_word(0, id, (size_t)i);
}

/* The "work": a few thousand rounds of mixing over the input. */
static uint64_t task_f(const task_t *t)
{
    uint64_t x = (uint64_t)t->id;
    for (int r = 0; r < 2000; r++) {
        x += t->in[r % NIN] + 0x9e3779b97f4a7c15ull;
        x ^= x >> 29;
        x *= 0xbf58476d1ce4e5b9ull;
    }
    return x;
}

/* Polls req to completion for at most FT_DEADLINE seconds; returns the
 * completion's error code. */
static int wait_bounded(mt_loc at, MPI_Request *req, MPI_Status *st,
                        const char *what)
{
    int flag = 0, rc;
    double end = mt_now() + FT_DEADLINE;

    for (;;) {
        rc = MPI_Test(req, &flag, st);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        if (mt_now() > end)
            mt_fail(at, "%s: not complete after %.0f s", what, FT_DEADLINE);
    }
}

/* ---- worker: the scenario's unmodified worker --------------------------- */

/* Return codes are not checked: under MPI_ERRORS_ARE_FATAL an error ends
 * the job (the receive polls with a deadline instead of MPI_Recv, so a
 * missing stop message fails the test instead of hanging it). */
static void worker(void)
{
    task_t t;
    result_t r;
    MPI_Request rq;
    MPI_Status st;

    for (;;) {
        MPI_Irecv(&t, (int)sizeof t, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD,
                  &rq);
        wait_bounded(MT_HERE, &rq, &st, "worker receive");
        if (st.MPI_TAG == TAG_STOP)
            break;
        mt_expect_status(MT_HERE, &st, 0, TAG_TASK, MPI_BYTE, (int)sizeof t);
        {
            task_t want;
            task_make(&want, t.id);
            mt_expect(MT_HERE, t.id >= 0 && t.id < NTASK &&
                      !memcmp(&want, &t, sizeof t), "task %d corrupted", t.id);
        }
        r.id = t.id;
        r.worker = mt_rank();
        r.value = task_f(&t);
        MPI_Send(&r, (int)sizeof r, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
    }
    mt_expect(MT_HERE, mt_rank() != VICTIM, "the victim was not killed");
}

/* ---- master ------------------------------------------------------------- */

static int state[NTASK], owner[NTASK], requeued[NTASK];
static int queue[4 * NTASK], qhead, qtail; /* task ids still to hand out */
static int *alive, *outstanding, nworkers;
static int ndone, nrequeued, nfailed_recv, from_dead;

static void worker_dead(int w, const char *how);

/* Sends the next queued task to worker w (alive, below its window). */
static void dispatch(int w)
{
    task_t t;
    int id, rc;

    id = queue[qhead++];
    if (state[id] == T_DONE)   /* done by the dead worker after all */
        return;
    task_make(&t, id);
    state[id] = T_ASSIGNED;
    owner[id] = w;
    outstanding[w]++;
    rc = MPI_Send(&t, (int)sizeof t, MPI_BYTE, w, TAG_TASK, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        ft_expect_failed(MT_HERE, rc, "task send to a worker");
        mt_expect(MT_HERE, w == VICTIM, "send to live worker %d failed", w);
        worker_dead(w, "send");
    }
}

static void refill(void)
{
    for (int w = 1; w <= nworkers; w++)
        while (alive[w] && outstanding[w] < WINDOW && qhead < qtail)
            dispatch(w);
}

/* Moves worker w's outstanding tasks back to the queue. */
static void worker_dead(int w, const char *how)
{
    mt_expect(MT_HERE, w == VICTIM, "worker %d reported failed (%s), only "
              "%d was killed", w, how, VICTIM);
    if (!alive[w])
        return;
    alive[w] = 0;
    mt_expect(MT_HERE, ft_is_known_failed(MPI_COMM_WORLD, w),
              "worker %d not in MPIX_Comm_group_failed", w);
    for (int id = 0; id < NTASK; id++) {
        if (state[id] == T_ASSIGNED && owner[id] == w) {
            state[id] = T_QUEUED;
            owner[id] = -1;
            requeued[id] = 1;
            nrequeued++;
            queue[qtail++] = id;
        }
    }
    outstanding[w] = 0;
}

/* The failed group from MPIX_Comm_reenable_any_source: exactly {VICTIM}. */
static void handle_failed_group(MPI_Group failed)
{
    MPI_Group world;
    int n = -1, i, r;

    MT_CHECK(MPI_Group_size(failed, &n));
    mt_expect(MT_HERE, n == 1, "reenable_any_source: %d failed, want 1", n);
    MT_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    for (i = 0; i < n; i++) {
        MT_CHECK(MPI_Group_translate_ranks(failed, 1, &i, world, &r));
        mt_expect(MT_HERE, r == VICTIM, "failed group names rank %d", r);
        worker_dead(r, "wildcard receive");
    }
    MT_CHECK(MPI_Group_free(&world));
}

static int pending_live(void)
{
    int n = 0;
    for (int w = 1; w <= nworkers; w++)
        n += alive[w] ? outstanding[w] : 0;
    return n;
}

static void take_result(const result_t *r, const MPI_Status *st)
{
    int w = st->MPI_SOURCE, id = r->id;
    task_t t;

    mt_expect_status(MT_HERE, st, w, TAG_RESULT, MPI_BYTE, (int)sizeof *r);
    mt_expect(MT_HERE, w >= 1 && w <= nworkers && r->worker == w,
              "result from %d claims worker %d", w, r->worker);
    mt_expect(MT_HERE, id >= 0 && id < NTASK, "result for task %d", id);
    task_make(&t, id);
    mt_expect(MT_HERE, r->value == task_f(&t), "task %d: wrong result from "
              "worker %d", id, w);
    if (!alive[w]) {
        /* sent before it died and received internally before the failure
         * was known: deliverable (17.6); its task had been requeued */
        mt_expect(MT_HERE, requeued[id], "dead worker's task %d not "
                  "requeued", id);
        from_dead++;
        if (state[id] != T_DONE) {
            state[id] = T_DONE; /* if still queued, dispatch skips it */
            ndone++;
        }
        return;
    }
    outstanding[w]--;
    mt_expect(MT_HERE, outstanding[w] >= 0, "worker %d: result for task %d "
              "it did not have", w, id);
    mt_expect(MT_HERE, owner[id] == w, "task %d: result from %d, owner %d",
              id, w, owner[id]);
    if (state[id] == T_ASSIGNED) {
        state[id] = T_DONE;
        ndone++;
    } else {
        /* a requeued task the dead worker's late result already did */
        mt_expect(MT_HERE, state[id] == T_DONE && requeued[id],
                  "second result for task %d from %d", id, w);
    }
}

static void master(void)
{
    MPI_Request rq;
    MPI_Status st;
    MPI_Group failed;
    result_t r;
    int rc, w, i;

    nworkers = mt_size() - 1;
    alive = mt_zalloc(sizeof(int) * (size_t)(nworkers + 1));
    outstanding = mt_zalloc(sizeof(int) * (size_t)(nworkers + 1));
    for (w = 1; w <= nworkers; w++)
        alive[w] = 1;
    for (i = 0; i < NTASK; i++) {
        state[i] = T_QUEUED;
        owner[i] = -1;
        queue[qtail++] = i;
    }
    refill();
    /* until every task is done and every live worker returned what it has */
    while (ndone < NTASK || pending_live() > 0) {
        MT_CHECK(MPI_Irecv(&r, (int)sizeof r, MPI_BYTE, MPI_ANY_SOURCE,
                           TAG_RESULT, MPI_COMM_WORLD, &rq));
        rc = wait_bounded(MT_HERE, &rq, &st, "master's wildcard receive");
        if (rc != MPI_SUCCESS) {
            ft_expect_failed(MT_HERE, rc, "wildcard receive after a worker "
                             "died");
            nfailed_recv++;
            mt_expect(MT_HERE, nfailed_recv == 1, "wildcard receive failed "
                      "%d times for one failure", nfailed_recv);
            MT_CHECK(MPIX_Comm_reenable_any_source(MPI_COMM_WORLD, &failed));
            handle_failed_group(failed);
            MT_CHECK(MPI_Group_free(&failed));
            mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 1,
                      "group_failed has %d members",
                      ft_failed_count(MPI_COMM_WORLD));
        } else {
            take_result(&r, &st);
        }
        refill();
        mt_expect(MT_HERE, ndone == NTASK || pending_live() > 0,
                  "%d tasks not done, none outstanding", NTASK - ndone);
    }
    mt_expect(MT_HERE, nfailed_recv == 1, "no wildcard receive failed: the "
              "failure of worker %d was not reported", VICTIM);
    mt_expect(MT_HERE, !alive[VICTIM], "victim still counted alive");
    mt_expect(MT_HERE, nrequeued >= 1, "the dead worker had no task "
              "outstanding (%d requeued)", nrequeued);
    for (i = 0; i < NTASK; i++)
        mt_expect(MT_HERE, state[i] == T_DONE, "task %d not done", i);
    for (w = 1; w <= nworkers; w++) {
        mt_expect(MT_HERE, !alive[w] || outstanding[w] == 0,
                  "worker %d still has %d tasks", w, outstanding[w]);
        if (alive[w])
            MT_CHECK(MPI_Send(NULL, 0, MPI_BYTE, w, TAG_STOP,
                              MPI_COMM_WORLD));
    }
    fprintf(stderr, "MPITEST NOTE tf_fail_master: %d task(s) requeued, %d "
            "late result(s) from the dead worker\n", nrequeued, from_dead);
    free(alive);
    free(outstanding);
}

int main(int argc, char **argv)
{
    struct mt_state *s = mt_st();

    /* not mt_init: the workers keep MPI_ERRORS_ARE_FATAL */
    mt_perturb();
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "MPITEST FAIL tf_fail_master: MPI_Init failed\n");
        return 1;
    }
    s->name = "tf_fail_master";
    MPI_Comm_rank(MPI_COMM_WORLD, &s->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s->size);
    if (s->rank == 0) {
        MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        mt_expect(MT_HERE, s->size >= 3, "needs a master and 2 workers");
        ft_check_class();
        master();
    } else {
        worker();
    }
    return ft_finish();
}
