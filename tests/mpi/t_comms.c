/* t_comms.c: communicator variety and isolation.
 *   - MPI_Comm_dup: a message on one communicator is invisible to wildcard
 *     probes and receives on another, even with the same source and tag;
 *   - MPI_Comm_split (reversed key order, an MPI_UNDEFINED color): ranks and
 *     group mapping are right, and rings on the split and on the parent
 *     with the same tag at the same time never cross;
 *   - traffic on a communicator straight after it was created (dup, split,
 *     idup, create_group), when the peer may not have finished creating it.
 */
#include "mpitest.h"

enum { TAG = 9, N = 512 };

static void expect_from(mt_loc at, const MPI_Status *st,
                        const unsigned char *b, int src, int iter)
{
    mt_expect_status(at, st, src, TAG, MPI_BYTE, N);
    mt_verify(at, b, N, src, iter, "communicator isolation");
}

/* A message sits at the receiver on WORLD; the dup must not see it. */
static void dup_isolation(void)
{
    MPI_Comm d;
    MPI_Request sreq, rreq;
    MPI_Status st;
    unsigned char sa[N], sb[N], ra[N], rb[N];
    int flag = 1, done = 0;
    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    mt_fill(sa, N, mt_rank(), 1);
    MT_CHECK(MPI_Isend(sa, N, MPI_BYTE, mt_right(), TAG, MPI_COMM_WORLD,
                       &sreq));
    MT_CHECK(MPI_Probe(mt_left(), TAG, MPI_COMM_WORLD, &st)); /* arrived */
    MT_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, d, &flag, &st));
    mt_expect(MT_HERE, !flag, "Iprobe on a dup saw a WORLD message");
    MT_CHECK(MPI_Irecv(rb, N, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, d,
                       &rreq));
    for (int k = 0; k < 50 && !done; k++)
        MT_CHECK(MPI_Test(&rreq, &done, &st));
    mt_expect(MT_HERE, !done, "receive on a dup matched a WORLD message");
    MT_CHECK(MPI_Recv(ra, N, MPI_BYTE, mt_left(), TAG, MPI_COMM_WORLD, &st));
    expect_from(MT_HERE, &st, ra, mt_left(), 1);
    MT_CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* nobody has sent on d yet */
    mt_fill(sb, N, mt_rank(), 2);
    MT_CHECK(MPI_Send(sb, N, MPI_BYTE, mt_right(), TAG, d));
    MT_CHECK(MPI_Wait(&rreq, &st));
    expect_from(MT_HERE, &st, rb, mt_left(), 2);
    MT_CHECK(MPI_Comm_free(&d));
}

/* Same source, same tag on WORLD and on a dup, received in the opposite
 * order with wildcards. */
static void dup_same_envelope(void)
{
    MPI_Comm d;
    MPI_Request req[2];
    MPI_Status st;
    unsigned char s[2][N], r[N];
    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    for (int k = 0; k < 2; k++)
        mt_fill(s[k], N, mt_rank(), 10 + k);
    MT_CHECK(MPI_Isend(s[0], N, MPI_BYTE, mt_right(), TAG, MPI_COMM_WORLD,
                       &req[0]));
    MT_CHECK(MPI_Isend(s[1], N, MPI_BYTE, mt_right(), TAG, d, &req[1]));
    MT_CHECK(MPI_Recv(r, N, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, d, &st));
    expect_from(MT_HERE, &st, r, mt_left(), 11);
    MT_CHECK(MPI_Recv(r, N, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                      MPI_COMM_WORLD, &st));
    expect_from(MT_HERE, &st, r, mt_left(), 10);
    MT_CHECK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    MT_CHECK(MPI_Comm_free(&d));
}

/* Split by parity with reversed keys; with more than 2 ranks the last one
 * opts out (MPI_UNDEFINED).  Checks rank order and the group mapping;
 * returns the split (or MPI_COMM_NULL) and the world rank of the split-left
 * neighbour in *wl. */
static MPI_Comm split_checked(int *wl)
{
    MPI_Comm s;
    MPI_Group gw, gs;
    int me = mt_rank(), n = mt_size(), color, sr, sn, w, want = 0;
    color = me == n - 1 && n > 2 ? MPI_UNDEFINED : me % 2;
    MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, color, -me, &s));
    if (color == MPI_UNDEFINED) {
        mt_expect(MT_HERE, s == MPI_COMM_NULL, "MPI_UNDEFINED got a comm");
        return s;
    }
    for (int k = me + 2; k < n - (n > 2); k += 2)
        want++; /* members of my color with a larger world rank come first */
    MT_CHECK(MPI_Comm_rank(s, &sr));
    MT_CHECK(MPI_Comm_size(s, &sn));
    mt_expect(MT_HERE, sr == want, "split rank %d, want %d", sr, want);
    MT_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &gw));
    MT_CHECK(MPI_Comm_group(s, &gs));
    MT_CHECK(MPI_Group_translate_ranks(gs, 1, &sr, gw, &w));
    mt_expect(MT_HERE, w == me, "translate_ranks %d -> %d", sr, w);
    w = (sr + sn - 1) % sn;
    MT_CHECK(MPI_Group_translate_ranks(gs, 1, &w, gw, wl));
    MT_CHECK(MPI_Group_free(&gw));
    MT_CHECK(MPI_Group_free(&gs));
    return s;
}

/* A ring on the split and one on WORLD at once, same tag, wildcards. */
static void split_rings(void)
{
    MPI_Request req[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
    MPI_Status st;
    unsigned char sw[N], ss[N], r[N];
    int wl = -1, sr = 0, sn = 1;
    MPI_Comm s = split_checked(&wl);
    mt_fill(sw, N, mt_rank(), 20);
    mt_fill(ss, N, mt_rank(), 21);
    if (s != MPI_COMM_NULL) {
        MT_CHECK(MPI_Comm_rank(s, &sr));
        MT_CHECK(MPI_Comm_size(s, &sn));
        MT_CHECK(MPI_Isend(ss, N, MPI_BYTE, (sr + 1) % sn, TAG, s, &req[0]));
    }
    MT_CHECK(MPI_Isend(sw, N, MPI_BYTE, mt_right(), TAG, MPI_COMM_WORLD,
                       &req[1]));
    if (s != MPI_COMM_NULL) {
        MT_CHECK(MPI_Recv(r, N, MPI_BYTE, MPI_ANY_SOURCE, TAG, s, &st));
        mt_expect(MT_HERE, st.MPI_SOURCE == (sr + sn - 1) % sn,
                  "split source %d", st.MPI_SOURCE);
        mt_verify(MT_HERE, r, N, wl, 21, "split ring");
    }
    MT_CHECK(MPI_Recv(r, N, MPI_BYTE, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD,
                      &st));
    expect_from(MT_HERE, &st, r, mt_left(), 20);
    MT_CHECK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    if (s != MPI_COMM_NULL)
        MT_CHECK(MPI_Comm_free(&s));
}

/* Creates communicator number it with one of four constructors. */
static MPI_Comm fresh_comm(int it)
{
    MPI_Comm c;
    MPI_Group g;
    MPI_Request req;
    switch (it % 4) {
    case 0:
        MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        break;
    case 1:
        MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, 0, mt_rank(), &c));
        break;
    case 2:
        MT_CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &c, &req));
        MT_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        break;
    default: /* collective over the group only, not over a parent comm */
        MT_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &g));
        MT_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, g, it, &c));
        MT_CHECK(MPI_Group_free(&g));
        break;
    }
    return c;
}

/* Send at once on each new communicator: whoever leaves the constructor
 * first reaches a peer that may still be inside it. */
static void send_on_new_comms(void)
{
    unsigned char s[N], r[N];
    for (int it = 0; it < 40; it++) {
        MPI_Request req;
        MPI_Status st;
        MPI_Comm c = fresh_comm(it);
        mt_fill(s, N, mt_rank(), 100 + it);
        MT_CHECK(MPI_Isend(s, N, MPI_BYTE, mt_right(), TAG, c, &req));
        MT_CHECK(MPI_Recv(r, N, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, c,
                          &st));
        expect_from(MT_HERE, &st, r, mt_left(), 100 + it);
        MT_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        MT_CHECK(MPI_Comm_free(&c));
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv, "t_comms");
    dup_isolation();
    dup_same_envelope();
    split_rings();
    send_on_new_comms();
    return mt_finish();
}
