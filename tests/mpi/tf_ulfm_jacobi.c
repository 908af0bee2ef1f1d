/* tf_ulfm_jacobi.c: a Jacobi iteration that keeps going after a kill,
 * written as ULFM programs are.  A 1-D Laplace problem of 96 points (ends
 * fixed at 1 and 0) is split in blocks over the working communicator;
 * each of 40 sweeps exchanges halos with MPI_Sendrecv, and every 5 sweeps
 * the whole field is checkpointed at every process (MPI_Allgatherv),
 * committed only when MPIX_Comm_agree says every process got it.  A
 * process whose sweep or checkpoint failed revokes the communicator (a
 * neighbour may wait in an exchange with it: Open MPI's MPI_Sendrecv
 * leaves its receive posted when the send fails); the agreement on
 * success then makes the survivors shrink, split the field anew and
 * restart from the last committed checkpoint.  Rank 1 dies at sweep 13 and the last rank
 * at sweep 27.  The final field is bitwise the one a single process
 * computes (the same arithmetic for each point, whoever owns it).
 * FS_TEST_NPS: 4 5
 * FS_TEST_FAULT: 1
 */
#include "agreetest.h"

#define M 96
#define SWEEPS 40
#define EVERY 5

typedef struct {
    MPI_Comm comm;
    int      rank, size, lo, hi;    /* owns points lo..hi-1 of 1..M-2 */
} part_t;

static void part_set(part_t *p)
{
    int interior = M - 2;

    MT_CHECK(MPI_Comm_rank(p->comm, &p->rank));
    MT_CHECK(MPI_Comm_size(p->comm, &p->size));
    p->lo = 1 + (int)((long)interior * p->rank / p->size);
    p->hi = 1 + (int)((long)interior * (p->rank + 1) / p->size);
}

static void sweep_serial(double *u)
{
    double v[M];
    int i;

    memcpy(v, u, sizeof v);
    for (i = 1; i < M - 1; i++)
        u[i] = (v[i - 1] + v[i + 1]) * 0.5;
}

/* One distributed sweep on u (the full field; this process's part and its
 * halos are current): MPI_SUCCESS or the error of a halo exchange. */
static int sweep(const part_t *p, double *u)
{
    int left = p->rank > 0 ? p->rank - 1 : MPI_PROC_NULL;
    int right = p->rank < p->size - 1 ? p->rank + 1 : MPI_PROC_NULL, rc, i;
    double v[M];

    rc = MPI_Sendrecv(&u[p->lo], 1, MPI_DOUBLE, left, 7, &u[p->hi], 1, MPI_DOUBLE, right, 7,
                      p->comm, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = MPI_Sendrecv(&u[p->hi - 1], 1, MPI_DOUBLE, right, 8, &u[p->lo - 1], 1,
                          MPI_DOUBLE, left, 8, p->comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        return rc;
    memcpy(v, u, sizeof v);
    for (i = p->lo; i < p->hi; i++)
        u[i] = (v[i - 1] + v[i + 1]) * 0.5;
    return MPI_SUCCESS;
}

/* The whole field at every process. */
static int gather_field(const part_t *p, double *u, double *out)
{
    int cnt[64], dsp[64], r, interior = M - 2;

    for (r = 0; r < p->size; r++) {
        dsp[r] = 1 + (int)((long)interior * r / p->size);
        cnt[r] = 1 + (int)((long)interior * (r + 1) / p->size) - dsp[r];
    }
    out[0]     = u[0];
    out[M - 1] = u[M - 1];
    return MPI_Allgatherv(&u[p->lo], p->hi - p->lo, MPI_DOUBLE, out, cnt, dsp, MPI_DOUBLE,
                          p->comm);
}

static void recover(part_t *p)
{
    MPI_Comm shrunk;

    MT_CHECK(MPIX_Comm_revoke(p->comm));
    ft_watchdog_arm(MT_HERE, "MPIX_Comm_shrink");
    MT_CHECK(MPIX_Comm_shrink(p->comm, &shrunk));
    ft_watchdog_disarm();
    MT_CHECK(MPI_Comm_free(&p->comm));
    p->comm = shrunk;
    part_set(p);
}

int main(int argc, char **argv)
{
    double u[M] = { 0 }, ckpt[M] = { 0 }, tent[M], ref[M] = { 0 };
    part_t p;
    int n, it = 0, ckpt_it = 0, rc, flag, i, recoveries = 0;

    mt_init(&argc, &argv, "tf_ulfm_jacobi");
    ft_check_class();
    n = mt_size();
    u[0] = ckpt[0] = ref[0] = 1.0;
    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &p.comm));
    part_set(&p);
    while (it < SWEEPS) {
        if ((it == 13 && mt_rank() == 1) || (it == 27 && mt_rank() == n - 1))
            ft_die();
        ft_watchdog_arm(MT_HERE, "a sweep");
        rc = sweep(&p, u);
        if (rc == MPI_SUCCESS && (it + 1) % EVERY == 0)
            rc = gather_field(&p, u, tent);
        ft_watchdog_disarm();
        flag = (rc == MPI_SUCCESS);
        if (!flag)      /* interrupt the others' pending exchanges with us */
            MT_CHECK(MPIX_Comm_revoke(p.comm));
        at_agree(MT_HERE, p.comm, &flag);
        if (!flag) {
            recover(&p);
            memcpy(u, ckpt, sizeof u);      /* back to the committed checkpoint */
            it = ckpt_it;
            ++recoveries;
            mt_expect(MT_HERE, recoveries <= 6, "%d recoveries", recoveries);
            continue;
        }
        ++it;
        if (it % EVERY == 0) {
            memcpy(ckpt, tent, sizeof ckpt);
            memcpy(u, tent, sizeof u);
            ckpt_it = it;
        }
    }
    ft_watchdog_arm(MT_HERE, "the final gather");
    MT_CHECK(gather_field(&p, u, tent));
    ft_watchdog_disarm();
    for (i = 0; i < SWEEPS; i++)
        sweep_serial(ref);
    for (i = 0; i < M; i++)
        mt_expect(MT_HERE, tent[i] == ref[i], "point %d is %.17g, want %.17g", i, tent[i],
                  ref[i]);
    mt_expect(MT_HERE, recoveries >= 2, "%d recoveries, want 2", recoveries);
    MT_CHECK(MPI_Comm_free(&p.comm));
    return ft_finish();
}
