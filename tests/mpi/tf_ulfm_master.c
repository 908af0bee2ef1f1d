/* tf_ulfm_master.c: a master/worker program that survives a worker's death
 * and shrinks, written as ULFM programs are.  Rank 0 hands out 4(n-1)
 * tasks, one at a time, and collects results with MPI_ANY_SOURCE
 * receives; worker 1 dies on receiving its first task.  The master's
 * wildcard receive then fails (MPIX_ERR_PROC_FAILED), it acknowledges
 * (MPIX_Comm_failure_ack), reads the acknowledged group
 * (MPIX_Comm_failure_get_acked) and gives the dead worker's task to
 * another.  At the end everyone shrinks MPI_COMM_WORLD and checks, with an
 * allreduce over the survivors, that every task's result (t*t) arrived
 * exactly once.
 * FS_TEST_NPS: 3 4
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

#define TAG_TASK 1
#define TAG_RESULT 2
#define MAXW 64

/* Workers the acknowledged failed group names are marked dead. */
static void mark_dead(int *dead)
{
    MPI_Group g;
    int nf, i, out[MAXW];

    MT_CHECK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    MT_CHECK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &g));
    nf = ft_group_ranks_in(g, MPI_COMM_WORLD, out);
    for (i = 0; i < nf; i++)
        dead[out[i]] = 1;
    MT_CHECK(MPI_Group_free(&g));
}

/* Idle live workers take the queued tasks of dead ones. */
static void give_queue(int n, const int *dead, int *holding, int *queue, int *nq)
{
    int w;

    for (w = 1; w < n && *nq > 0; w++)
        if (!dead[w] && holding[w] < 0) {
            holding[w] = queue[--*nq];
            MT_CHECK(MPI_Send(&holding[w], 1, MPI_INT, w, TAG_TASK, MPI_COMM_WORLD));
        }
}

static long master(int n)
{
    int ntasks = 4 * (n - 1), next = 0, done = 0, w, rc, res[2], stop = -1;
    int holding[MAXW], dead[MAXW] = { 0 }, queue[4 * MAXW], nq = 0;
    long sum = 0;
    MPI_Status st;

    for (w = 1; w < n; w++) {
        holding[w] = next++;
        MT_CHECK(MPI_Send(&holding[w], 1, MPI_INT, w, TAG_TASK, MPI_COMM_WORLD));
    }
    ft_watchdog_arm(MT_HERE, "the master's loop");
    while (done < ntasks) {
        rc = MPI_Recv(res, 2, MPI_INT, MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &st);
        if (rc != MPI_SUCCESS) {
            ft_expect_failed(MT_HERE, rc, "wildcard receive after a worker died");
            mark_dead(dead);
            for (w = 1; w < n; w++)
                if (dead[w] && holding[w] >= 0) {
                    queue[nq++] = holding[w];     /* its task goes to another */
                    holding[w]  = -1;
                }
            give_queue(n, dead, holding, queue, &nq);
            continue;
        }
        w = st.MPI_SOURCE;
        mt_expect(MT_HERE, res[0] == holding[w], "worker %d returned task %d, holds %d", w,
                  res[0], holding[w]);
        sum += res[1];
        ++done;
        holding[w] = nq > 0 ? queue[--nq] : next < ntasks ? next++ : -1;
        if (holding[w] >= 0)
            MT_CHECK(MPI_Send(&holding[w], 1, MPI_INT, w, TAG_TASK, MPI_COMM_WORLD));
        give_queue(n, dead, holding, queue, &nq);
    }
    ft_watchdog_disarm();
    for (w = 1; w < n; w++)
        if (!dead[w])
            MT_CHECK(MPI_Send(&stop, 1, MPI_INT, w, TAG_TASK, MPI_COMM_WORLD));
    mt_expect(MT_HERE, dead[1], "worker 1's death was not seen");
    return sum;
}

static void worker(void)
{
    int task, res[2], got = 0;

    ft_watchdog_arm(MT_HERE, "a worker's loop");
    for (;;) {
        MT_CHECK(MPI_Recv(&task, 1, MPI_INT, 0, TAG_TASK, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (task < 0)
            break;
        if (mt_rank() == 1 && ++got == 1)
            ft_die();
        res[0] = task;
        res[1] = task * task;
        MT_CHECK(MPI_Send(res, 2, MPI_INT, 0, TAG_RESULT, MPI_COMM_WORLD));
    }
    ft_watchdog_disarm();
}

int main(int argc, char **argv)
{
    MPI_Comm shrunk;
    long sum = 0, total, want = 0;
    int n, t, size;

    mt_init(&argc, &argv, "tf_ulfm_master");
    ft_check_class();
    n = mt_size();
    if (mt_rank() == 0)
        sum = master(n);
    else
        worker();
    for (t = 0; t < 4 * (n - 1); t++)
        want += (long)t * t;
    ft_watchdog_arm(MT_HERE, "shrink and the check");
    MT_CHECK(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk));
    MT_CHECK(MPI_Allreduce(&sum, &total, 1, MPI_LONG, MPI_SUM, shrunk));
    ft_watchdog_disarm();
    MT_CHECK(MPI_Comm_size(shrunk, &size));
    mt_expect(MT_HERE, size == n - 1, "shrunk to %d, want %d", size, n - 1);
    mt_expect(MT_HERE, total == want, "results sum to %ld, want %ld", total, want);
    MT_CHECK(MPI_Comm_free(&shrunk));
    return ft_finish();
}
