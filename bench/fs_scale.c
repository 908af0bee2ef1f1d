/* fs_scale: what many ranks on one node cost (bench/scale.sh, issue 42).
 *
 * Each rank times MPI_Init, a first MPI_Alltoall of FS_SCALE_BYTES (1 KiB)
 * per pair (it wires every pair up), then the median of FS_SCALE_REPS more
 * (steady), of MPI_Allreduce of one double and of MPI_Barrier; each
 * collective's time is the slowest rank's.  Then every rank reads its
 * proportional set size (Pss in /proc/self/smaps_rollup: shared pages
 * divided among the processes mapping them, so the job's sum counts each
 * page once) and rank 0 prints one line:
 *
 *   ranks init_s a2a_first_s a2a_steady_s allreduce_s barrier_s pss_kib
 *
 * The job's wall time is the launcher's (scale.sh).  Standard MPI only:
 * the same binary runs under every PML. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FS_SCALE_BYTES 1024
#define FS_SCALE_REPS  9

static double fs_scale_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long fs_scale_pss_kib(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long kib = -1;

    if (f == NULL) {
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "Pss: %ld kB", &kib) == 1) {
            break;
        }
    }
    fclose(f);
    return kib;
}

static int fs_scale_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The slowest rank's time of one call of op. */
static double fs_scale_time(void (*op)(void *), void *arg)
{
    double t, slowest;

    MPI_Barrier(MPI_COMM_WORLD);
    t = fs_scale_now();
    op(arg);
    t = fs_scale_now() - t;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

/* The median over FS_SCALE_REPS calls. */
static double fs_scale_median(void (*op)(void *), void *arg)
{
    double t[FS_SCALE_REPS];
    int i;

    for (i = 0; i < FS_SCALE_REPS; ++i) {
        t[i] = fs_scale_time(op, arg);
    }
    qsort(t, FS_SCALE_REPS, sizeof(t[0]), fs_scale_cmp);
    return t[FS_SCALE_REPS / 2];
}

typedef struct {
    char *out;
    char *in;
    int   size;
} fs_scale_bufs_t;

static void fs_scale_alltoall(void *arg)
{
    fs_scale_bufs_t *b = arg;

    MPI_Alltoall(b->out, FS_SCALE_BYTES, MPI_BYTE, b->in, FS_SCALE_BYTES, MPI_BYTE,
                 MPI_COMM_WORLD);
}

static void fs_scale_allreduce(void *arg)
{
    double x = 1.0, y;

    (void)arg;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static void fs_scale_barrier(void *arg)
{
    (void)arg;
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    double t0 = fs_scale_now(), init, first, steady, allred, barrier;
    fs_scale_bufs_t b;
    long pss, total = 0;
    int rank, i, bad = 0, all_bad;

    MPI_Init(&argc, &argv);
    init = fs_scale_now() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &init, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.size);
    b.out = malloc((size_t)b.size * FS_SCALE_BYTES);
    b.in  = malloc((size_t)b.size * FS_SCALE_BYTES);
    if ((b.out == NULL) || (b.in == NULL)) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (i = 0; i < b.size; ++i) {
        memset(b.out + (size_t)i * FS_SCALE_BYTES, (rank * 7 + i) & 0xff, FS_SCALE_BYTES);
    }
    first = fs_scale_time(fs_scale_alltoall, &b);
    /* every block checked: a fast wrong answer is no result */
    for (i = 0; i < b.size; ++i) {
        const unsigned char *blk = (unsigned char *)b.in + (size_t)i * FS_SCALE_BYTES;
        bad |= (blk[0] != ((i * 7 + rank) & 0xff)) ||
               (blk[FS_SCALE_BYTES - 1] != ((i * 7 + rank) & 0xff));
    }
    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    steady  = fs_scale_median(fs_scale_alltoall, &b);
    allred  = fs_scale_median(fs_scale_allreduce, NULL);
    barrier = fs_scale_median(fs_scale_barrier, NULL);
    pss = fs_scale_pss_kib();
    MPI_Reduce(&pss, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all_bad) {
            fprintf(stderr, "fs_scale: MPI_Alltoall delivered wrong data\n");
        } else {
            printf("%d %.4f %.5f %.6f %.6f %.6f %ld\n", b.size, init, first, steady, allred,
                   barrier, total);
        }
    }
    free(b.out);
    free(b.in);
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
