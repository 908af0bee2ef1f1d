/* survtest.h: collectives over the survivors of a validated communicator
 * (MPIX_Comm_validate, MPI-FT 17.7.4), each one with its result checked:
 * the recognized failed processes' contributions are ignored, their
 * segments of gather-type receive buffers stay untouched, exscan starts at
 * the first alive process.  dead[r] = 1 for the recognized failed ranks of
 * comm. */
#ifndef SURVTEST_H
#define SURVTEST_H

#include "agreetest.h"

#define SV_MAX 64
#define SV_POISON (-7)      /* what a failed process's segment must still hold */

/* The end of one collective: its return, and its wait when nonblocking. */
static inline void sv_end(mt_loc at, int nb, int rc, MPI_Request *rq, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];

    if (rc == MPI_SUCCESS && nb)
        rc = MPI_Wait(rq, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        mt_fail(at, "%s%s over the survivors: %s", nb ? "nonblocking " : "", what,
                mt_errstr(rc, s, sizeof s));
}

static inline int sv_first_alive(const int *dead, int n)
{
    int r;

    for (r = 0; r < n && dead[r]; r++)
        ;
    return r;
}

static inline int sv_last_alive(const int *dead, int n)
{
    int r;

    for (r = n - 1; r >= 0 && dead[r]; r--)
        ;
    return r;
}

/* A barrier on comm that process v survives until each survivor (dead[]:
 * comm's recognized failed ranks) has left it, then v dies: a survivor
 * still inside when v's death is known would get the failure from it. */
static inline void sv_barrier_then_die(MPI_Comm comm, int v, const int *dead)
{
    int n, me, r, x = 0;

    MT_CHECK(MPI_Comm_size(comm, &n));
    MT_CHECK(MPI_Comm_rank(comm, &me));
    MT_CHECK(MPI_Barrier(comm));
    if (me == v) {
        for (r = 0; r < n; r++)
            if (r != v && !dead[r])
                MT_CHECK(MPI_Recv(&x, 1, MPI_INT, r, FT_TAG_LEFT_BARRIER, comm,
                                  MPI_STATUS_IGNORE));
        ft_die();
    }
    MT_CHECK(MPI_Send(&x, 1, MPI_INT, v, FT_TAG_LEFT_BARRIER, comm));
}

/* The recognized failed set as a failed group names it (comm's ranks). */
static inline void sv_dead_from_group(MPI_Comm comm, MPI_Group failed, int *dead)
{
    int n, nf, i, out[SV_MAX];

    MT_CHECK(MPI_Comm_size(comm, &n));
    nf = ft_group_ranks_in(failed, comm, out);
    memset(dead, 0, sizeof(int) * (size_t)n);
    for (i = 0; i < nf; i++)
        dead[out[i]] = 1;
}

/* Barrier, bcast (first and last alive root), reduce, allreduce, scan, exscan. */
static inline void sv_check_reductions(mt_loc at, MPI_Comm comm, const int *dead, int nb)
{
    MPI_Request rq;
    int n, me, r, x, sum, want, root, k;

    MT_CHECK(MPI_Comm_size(comm, &n));
    MT_CHECK(MPI_Comm_rank(comm, &me));
    sv_end(at, nb, nb ? MPI_Ibarrier(comm, &rq) : MPI_Barrier(comm), &rq, "barrier");
    for (k = 0; k < 2; k++) {
        root = k ? sv_last_alive(dead, n) : sv_first_alive(dead, n);
        x = (me == root) ? 1000 + root : -1;
        sv_end(at, nb, nb ? MPI_Ibcast(&x, 1, MPI_INT, root, comm, &rq)
                          : MPI_Bcast(&x, 1, MPI_INT, root, comm), &rq, "bcast");
        mt_expect(at, x == 1000 + root, "bcast from %d gave %d", root, x);
    }
    for (want = 0, r = 0; r < n; r++)
        want += dead[r] ? 0 : r + 1;
    x = me + 1;
    sum = -1;
    root = sv_last_alive(dead, n);
    sv_end(at, nb, nb ? MPI_Ireduce(&x, &sum, 1, MPI_INT, MPI_SUM, root, comm, &rq)
                      : MPI_Reduce(&x, &sum, 1, MPI_INT, MPI_SUM, root, comm), &rq, "reduce");
    mt_expect(at, me != root || sum == want, "reduce gave %d, want %d", sum, want);
    sv_end(at, nb, nb ? MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comm, &rq)
                      : MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comm), &rq, "allreduce");
    mt_expect(at, sum == want, "allreduce gave %d, want %d", sum, want);
    for (want = 0, r = 0; r <= me; r++)
        want += dead[r] ? 0 : r + 1;
    sv_end(at, nb, nb ? MPI_Iscan(&x, &sum, 1, MPI_INT, MPI_SUM, comm, &rq)
                      : MPI_Scan(&x, &sum, 1, MPI_INT, MPI_SUM, comm), &rq, "scan");
    mt_expect(at, sum == want, "scan gave %d, want %d", sum, want);
    sv_end(at, nb, nb ? MPI_Iexscan(&x, &sum, 1, MPI_INT, MPI_SUM, comm, &rq)
                      : MPI_Exscan(&x, &sum, 1, MPI_INT, MPI_SUM, comm), &rq, "exscan");
    mt_expect(at, me == sv_first_alive(dead, n) || sum == want - (me + 1),
              "exscan gave %d, want %d", sum, want - (me + 1));
}

/* Gather, gatherv, allgather, allgatherv (2 ints per rank, r's at 2r;
 * gatherv/allgatherv: r+1 ints at r*(r+1)/2... laid out by displs). */
static inline void sv_check_gathers(mt_loc at, MPI_Comm comm, const int *dead, int nb)
{
    MPI_Request rq;
    int n, me, r, j, root, s[SV_MAX], rb[SV_MAX * SV_MAX], cnt[SV_MAX], dsp[SV_MAX];

    MT_CHECK(MPI_Comm_size(comm, &n));
    MT_CHECK(MPI_Comm_rank(comm, &me));
    root = sv_last_alive(dead, n);
    for (r = 0, j = 0; r < n; j += r + 1, r++) {
        cnt[r] = r + 1;
        dsp[r] = j + r;                 /* a hole of r ints before each */
    }
    for (j = 0; j < SV_MAX; j++)
        s[j] = me * 100 + j;
    for (int all = 0; all < 2; all++) {
        for (int v = 0; v < 2; v++) {
            const char *what = all ? (v ? "allgatherv" : "allgather")
                                   : (v ? "gatherv" : "gather");
            int rc;
            for (j = 0; j < SV_MAX * SV_MAX; j++)
                rb[j] = SV_POISON;
            if (!all && !v)
                rc = nb ? MPI_Igather(s, 2, MPI_INT, rb, 2, MPI_INT, root, comm, &rq)
                        : MPI_Gather(s, 2, MPI_INT, rb, 2, MPI_INT, root, comm);
            else if (!all)
                rc = nb ? MPI_Igatherv(s, me + 1, MPI_INT, rb, cnt, dsp, MPI_INT, root, comm, &rq)
                        : MPI_Gatherv(s, me + 1, MPI_INT, rb, cnt, dsp, MPI_INT, root, comm);
            else if (!v)
                rc = nb ? MPI_Iallgather(s, 2, MPI_INT, rb, 2, MPI_INT, comm, &rq)
                        : MPI_Allgather(s, 2, MPI_INT, rb, 2, MPI_INT, comm);
            else
                rc = nb ? MPI_Iallgatherv(s, me + 1, MPI_INT, rb, cnt, dsp, MPI_INT, comm, &rq)
                        : MPI_Allgatherv(s, me + 1, MPI_INT, rb, cnt, dsp, MPI_INT, comm);
            sv_end(at, nb, rc, &rq, what);
            if (!all && me != root)
                continue;
            for (r = 0; r < n; r++) {
                int c = v ? cnt[r] : 2, d = v ? dsp[r] : 2 * r;
                for (j = 0; j < c; j++) {
                    /* blocking allgather of MPI_INT: MPI_UNDEFINED (for split) */
                    int want = !dead[r] ? r * 100 + j
                             : (all && !v && !nb) ? MPI_UNDEFINED : SV_POISON;
                    mt_expect(at, rb[d + j] == want, "%s: [%d] from %d is %d, want %d%s",
                              what, d + j, r, rb[d + j], want,
                              dead[r] ? " (a failed process's segment, untouched)" : "");
                }
            }
        }
    }
}

/* Scatter, scatterv from the first alive root. */
static inline void sv_check_scatters(mt_loc at, MPI_Comm comm, const int *dead, int nb)
{
    MPI_Request rq;
    int n, me, r, j, root, sb[SV_MAX * SV_MAX], x[SV_MAX], cnt[SV_MAX], dsp[SV_MAX];

    MT_CHECK(MPI_Comm_size(comm, &n));
    MT_CHECK(MPI_Comm_rank(comm, &me));
    root = sv_first_alive(dead, n);
    for (r = 0, j = 0; r < n; j += 2 * r + 1, r++) {
        cnt[r] = r + 1;
        dsp[r] = j;
    }
    for (j = 0; j < SV_MAX * SV_MAX; j++)
        sb[j] = j;
    for (int v = 0; v < 2; v++) {
        int rc;
        for (j = 0; j < SV_MAX; j++)
            x[j] = SV_POISON;
        if (!v)
            rc = nb ? MPI_Iscatter(sb, 2, MPI_INT, x, 2, MPI_INT, root, comm, &rq)
                    : MPI_Scatter(sb, 2, MPI_INT, x, 2, MPI_INT, root, comm);
        else
            rc = nb ? MPI_Iscatterv(sb, cnt, dsp, MPI_INT, x, me + 1, MPI_INT, root, comm, &rq)
                    : MPI_Scatterv(sb, cnt, dsp, MPI_INT, x, me + 1, MPI_INT, root, comm);
        sv_end(at, nb, rc, &rq, v ? "scatterv" : "scatter");
        for (j = 0; j < (v ? me + 1 : 2); j++)
            mt_expect(at, x[j] == (v ? dsp[me] : 2 * me) + j, "%s: [%d] is %d, want %d",
                      v ? "scatterv" : "scatter", j, x[j], (v ? dsp[me] : 2 * me) + j);
    }
}

/* Alltoall, alltoallv, alltoallw: r's block for d is r*1000+d (2 ints). */
static inline void sv_check_alltoalls(mt_loc at, MPI_Comm comm, const int *dead, int nb)
{
    MPI_Request rq;
    MPI_Datatype ty[SV_MAX];
    int n, me, r, j, s[2 * SV_MAX], rb[2 * SV_MAX], cnt[SV_MAX], dsp[SV_MAX], bdsp[SV_MAX];

    MT_CHECK(MPI_Comm_size(comm, &n));
    MT_CHECK(MPI_Comm_rank(comm, &me));
    for (r = 0; r < n; r++) {
        s[2 * r] = s[2 * r + 1] = me * 1000 + r;
        cnt[r]  = 2;
        dsp[r]  = 2 * (n - 1 - r);      /* reversed places, so a wrong map shows */
        bdsp[r] = dsp[r] * (int)sizeof(int);
        ty[r]   = MPI_INT;
    }
    for (int k = 0; k < 3; k++) {
        const char *what = k == 0 ? "alltoall" : k == 1 ? "alltoallv" : "alltoallw";
        int rc, *sp = s, tmp[2 * SV_MAX];
        for (j = 0; j < 2 * SV_MAX; j++)
            rb[j] = SV_POISON;
        if (k) {                        /* v and w send from the reversed places */
            for (r = 0; r < n; r++)
                tmp[dsp[r]] = tmp[dsp[r] + 1] = me * 1000 + r;
            sp = tmp;
        }
        if (k == 0)
            rc = nb ? MPI_Ialltoall(sp, 2, MPI_INT, rb, 2, MPI_INT, comm, &rq)
                    : MPI_Alltoall(sp, 2, MPI_INT, rb, 2, MPI_INT, comm);
        else if (k == 1)
            rc = nb ? MPI_Ialltoallv(sp, cnt, dsp, MPI_INT, rb, cnt, dsp, MPI_INT, comm, &rq)
                    : MPI_Alltoallv(sp, cnt, dsp, MPI_INT, rb, cnt, dsp, MPI_INT, comm);
        else
            rc = nb ? MPI_Ialltoallw(sp, cnt, bdsp, ty, rb, cnt, bdsp, ty, comm, &rq)
                    : MPI_Alltoallw(sp, cnt, bdsp, ty, rb, cnt, bdsp, ty, comm);
        sv_end(at, nb, rc, &rq, what);
        for (r = 0; r < n; r++) {
            int d = k ? dsp[r] : 2 * r, want = dead[r] ? SV_POISON : r * 1000 + me;
            mt_expect(at, rb[d] == want && rb[d + 1] == want, "%s: from %d got %d %d, want %d",
                      what, r, rb[d], rb[d + 1], want);
        }
    }
}

/* Reduce_scatter_block (2 per rank) and reduce_scatter (r+1 for rank r):
 * element j of the vector from s is s + j. */
static inline void sv_check_reduce_scatters(mt_loc at, MPI_Comm comm, const int *dead, int nb)
{
    MPI_Request rq;
    int n, me, r, j, s[SV_MAX * SV_MAX], x[SV_MAX], cnt[SV_MAX], off;

    MT_CHECK(MPI_Comm_size(comm, &n));
    MT_CHECK(MPI_Comm_rank(comm, &me));
    for (j = 0; j < SV_MAX * SV_MAX; j++)
        s[j] = me + j;
    for (r = 0; r < n; r++)
        cnt[r] = r + 1;
    for (int v = 0; v < 2; v++) {
        int rc, c = v ? me + 1 : 2;
        for (off = 0, r = 0; r < me; r++)
            off += v ? cnt[r] : 2;
        if (!v)
            rc = nb ? MPI_Ireduce_scatter_block(s, x, 2, MPI_INT, MPI_SUM, comm, &rq)
                    : MPI_Reduce_scatter_block(s, x, 2, MPI_INT, MPI_SUM, comm);
        else
            rc = nb ? MPI_Ireduce_scatter(s, x, cnt, MPI_INT, MPI_SUM, comm, &rq)
                    : MPI_Reduce_scatter(s, x, cnt, MPI_INT, MPI_SUM, comm);
        sv_end(at, nb, rc, &rq, v ? "reduce_scatter" : "reduce_scatter_block");
        for (j = 0; j < c; j++) {
            int want = 0;
            for (r = 0; r < n; r++)
                want += dead[r] ? 0 : r + off + j;
            mt_expect(at, x[j] == want, "%s: [%d] is %d, want %d",
                      v ? "reduce_scatter" : "reduce_scatter_block", j, x[j], want);
        }
    }
}

/* Every collective, blocking then nonblocking, under the watchdog. */
static inline void sv_check_all(mt_loc at, MPI_Comm comm, const int *dead)
{
    ft_watchdog_arm(at, "collectives over the survivors");
    for (int nb = 0; nb < 2; nb++) {
        sv_check_reductions(at, comm, dead, nb);
        sv_check_gathers(at, comm, dead, nb);
        sv_check_scatters(at, comm, dead, nb);
        sv_check_alltoalls(at, comm, dead, nb);
        sv_check_reduce_scatters(at, comm, dead, nb);
    }
    ft_watchdog_disarm();
}

/* MPIX_Comm_validate (nonblocking: MPIX_Icomm_validate) under the
 * watchdog; dead[] from its failed group; returns the group as a bit mask
 * (bit r%31: rank r), checked to be the same at every survivor with two
 * agreements (they work whatever the communicator's state): AND of the
 * masks and AND of their complements. */
static inline int sv_validate_mask(mt_loc at, MPI_Comm comm, int nonblocking, int *dead)
{
    MPI_Group g;
    MPI_Request rq;
    int n, r, mask = 0, lo, hi;

    MT_CHECK(MPI_Comm_size(comm, &n));
    ft_watchdog_arm(at, nonblocking ? "MPIX_Icomm_validate" : "MPIX_Comm_validate");
    if (nonblocking) {
        MT_CHECK(MPIX_Icomm_validate(comm, &g, &rq));
        MT_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        MT_CHECK(MPIX_Comm_validate(comm, &g));
    }
    ft_watchdog_disarm();
    sv_dead_from_group(comm, g, dead);
    MT_CHECK(MPI_Group_free(&g));
    for (r = 0; r < n; r++)
        mask |= dead[r] << (r % 31);
    lo = mask;
    hi = ~mask;
    at_agree(at, comm, &lo);
    at_agree(at, comm, &hi);
    mt_expect(at, lo == mask && hi == ~mask, "validate not uniform: %#x here, AND %#x OR %#x",
              mask, lo, ~hi);
    return mask;
}

/* The same, and the failed group must be want[] (comm's ranks, -1 ends). */
static inline void sv_validate(mt_loc at, MPI_Comm comm, int nonblocking, const int *want,
                               int *dead)
{
    int r, mask = sv_validate_mask(at, comm, nonblocking, dead), wmask = 0;

    for (r = 0; want[r] >= 0; r++)
        wmask |= 1 << (want[r] % 31);
    mt_expect(at, mask == wmask, "validate gave failed set %#x, want %#x", mask, wmask);
}

#endif
