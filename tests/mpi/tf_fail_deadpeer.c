/* tf_fail_deadpeer: the dead-peer receive rules for messages a failed
 * process sent before it died (MPI-FT 17.6 and its advice to implementors):
 *   (a) messages failstop had completely received stay deliverable, in MPI
 *       order, to receives and probes posted after the failure is known;
 *       a rendezvous message whose payload can no longer be fetched
 *       completes its receive with the error;
 *   (c) once a receive from P fails, every later receive from P on the same
 *       communicator that could match the same messages (same tag, or
 *       MPI_ANY_TAG on either side) fails too, even with a matching message
 *       still buffered;
 *   (d) receives with another specific tag still get their messages.
 * (b), messages arriving after the failure is known are discarded, needs a
 * message overtaken by the failure notice: tests/proto/test_failure.c.
 *
 * The victim (last rank) sends a fixed stream to rank 0, ends it with a
 * synchronous send (so everything before it has arrived when it matches:
 * failstop delivers a peer's messages in order), and dies.  Over UCX's TCP
 * it also sends a 16 KiB message by a blocking MPI_Send, which failstop
 * pushes whole into the receiver (fragments, not a rendezvous): (a) it
 * stays deliverable although the engine holds it as a descriptor.
 * FS_TEST_NPS: 2 3
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

#define SMALL 200       /* eager everywhere */
#define BIG (1 << 20)   /* rendezvous everywhere */

#define MEDIUM (16 << 10) /* pushed whole by a blocking send over UCX */

enum { TAG_A = 1, TAG_B = 2, TAG_R = 3, TAG_C = 4, TAG_E = 5, TAG_F = 6,
       TAG_M = 7, TAG_END = 9 };

/* What the victim sends, in order: tag and payload size. */
static const struct {
    int tag, len;
} stream[] = {
    {TAG_A, SMALL}, {TAG_A, SMALL}, {TAG_A, SMALL}, {TAG_B, SMALL},
    {TAG_B, SMALL}, {TAG_R, BIG},   {TAG_A, SMALL}, {TAG_C, SMALL},
    {TAG_E, BIG},   {TAG_E, SMALL}, {TAG_F, SMALL},
};
#define NSTREAM ((int)(sizeof stream / sizeof stream[0]))

static char *bufs[NSTREAM];

/* failstop's UCX transport (the default) pushes blocking sends of 8-64 KiB
 * over TCP, and between processes of a node when its shared-memory lane
 * has no rendezvous (ucx_shm_rndv 0).  Elsewhere (OFI, the lane's
 * rendezvous) the blocking medium send would be a rendezvous that waits
 * for the receiver, which waits for the end of the stream. */
static int medium_is_pushed(void)
{
    const char *tl  = getenv("OMPI_MCA_pml_failstop_transport");
    const char *tls = getenv("UCX_TLS");
    const char *rr  = getenv("OMPI_MCA_pml_failstop_ucx_shm_rndv");

    if ((tl != NULL) && (strcmp(tl, "ucx") != 0)) {
        return 0;
    }
    return ((tls != NULL) && (strcmp(tls, "tcp") == 0)) ||
           ((rr != NULL) && (strcmp(rr, "0") == 0));
}

static void victim(void)
{
    MPI_Request rq[NSTREAM];
    int i, end = 1;

    for (i = 0; i < NSTREAM; i++) {
        bufs[i] = mt_malloc((size_t)stream[i].len);
        mt_fill(bufs[i], (size_t)stream[i].len, mt_rank(), i);
        MT_CHECK(MPI_Isend(bufs[i], stream[i].len, MPI_CHAR, 0, stream[i].tag,
                           MPI_COMM_WORLD, &rq[i]));
    }
    if (medium_is_pushed()) {
        char *medium = mt_malloc(MEDIUM);

        mt_fill(medium, MEDIUM, mt_rank(), NSTREAM);
        MT_CHECK(MPI_Send(medium, MEDIUM, MPI_CHAR, 0, TAG_M, MPI_COMM_WORLD));
    }
    MT_CHECK(MPI_Ssend(&end, 1, MPI_INT, 0, TAG_END, MPI_COMM_WORLD));
    ft_die();   /* the rendezvous sends are never fetched */
}

/* Receives from v with tag; expects stream message `idx` intact. */
static void expect_msg(mt_loc at, int v, int tag, int idx, char *buf)
{
    MPI_Status st;

    MT_CHECK(MPI_Recv(buf, BIG, MPI_CHAR, v, tag, MPI_COMM_WORLD, &st));
    mt_expect_status(at, &st, v, stream[idx].tag, MPI_CHAR, stream[idx].len);
    mt_verify(at, buf, (size_t)stream[idx].len, v, idx, "buffered message");
}

static void expect_fail(mt_loc at, int v, int tag, char *buf, const char *what)
{
    MPI_Status st;

    ft_expect_failed(at, MPI_Recv(buf, BIG, MPI_CHAR, v, tag, MPI_COMM_WORLD,
                                  &st), what);
}

static void receiver(int v)
{
    char *buf = mt_malloc(BIG);
    int end = 0, flag = 0;
    MPI_Status st;

    MT_CHECK(MPI_Recv(&end, 1, MPI_INT, v, TAG_END, MPI_COMM_WORLD, &st));
    ft_wait_failed(MT_HERE, MPI_COMM_WORLD, v);

    /* (a) probes and receives still see what arrived, in order */
    MT_CHECK(MPI_Iprobe(v, TAG_A, MPI_COMM_WORLD, &flag, &st));
    mt_expect(MT_HERE, flag, "buffered message from the failed rank not "
              "visible to a probe");
    mt_expect_status(MT_HERE, &st, v, TAG_A, MPI_CHAR, SMALL);
    expect_msg(MT_HERE, v, TAG_A, 0, buf);
    expect_msg(MT_HERE, v, TAG_A, 1, buf);
    /* (a) a message pushed whole before the death is here */
    if (medium_is_pushed()) {
        MT_CHECK(MPI_Recv(buf, BIG, MPI_CHAR, v, TAG_M, MPI_COMM_WORLD, &st));
        mt_expect_status(MT_HERE, &st, v, TAG_M, MPI_CHAR, MEDIUM);
        mt_verify(MT_HERE, buf, MEDIUM, v, NSTREAM, "pushed medium message");
    }
    /* (a) the payload of a rendezvous message died with its sender */
    expect_fail(MT_HERE, v, TAG_R, buf, "rendezvous message of a dead sender");
    /* (c) the same tag fails from now on, for probes too */
    ft_expect_failed(MT_HERE, MPI_Probe(v, TAG_R, MPI_COMM_WORLD, &st),
                     "probe of a failed tag");
    /* (d) other specific tags keep their buffered messages, in order */
    expect_msg(MT_HERE, v, TAG_A, 2, buf);
    expect_msg(MT_HERE, v, TAG_B, 3, buf);
    expect_msg(MT_HERE, v, TAG_A, 6, buf);
    expect_msg(MT_HERE, v, TAG_C, 7, buf);
    expect_msg(MT_HERE, v, TAG_B, 4, buf);
    /* (c) tag E: the rendezvous head fails, so the eager message buffered
     * behind it must not be delivered out of order */
    MT_CHECK(MPI_Iprobe(v, TAG_E, MPI_COMM_WORLD, &flag, &st));
    mt_expect(MT_HERE, flag, "tag E messages not buffered");
    expect_fail(MT_HERE, v, TAG_E, buf, "rendezvous head of tag E");
    expect_fail(MT_HERE, v, TAG_E, buf, "eager message behind a failed one");
    /* nothing left on tag A: the receive fails */
    expect_fail(MT_HERE, v, TAG_A, buf, "tag A drained");
    /* (c) MPI_ANY_TAG could match what the failed receives could, although
     * the tag-F message is still buffered; after it, every tag fails */
    MT_CHECK(MPI_Iprobe(v, TAG_F, MPI_COMM_WORLD, &flag, &st));
    mt_expect(MT_HERE, flag, "tag F message not buffered");
    expect_fail(MT_HERE, v, MPI_ANY_TAG, buf, "ANY_TAG after a failed receive");
    expect_fail(MT_HERE, v, TAG_F, buf, "tag F after a failed ANY_TAG receive");
    ft_expect_failed(MT_HERE, MPI_Iprobe(v, TAG_C, MPI_COMM_WORLD, &flag, &st),
                     "probe after a failed ANY_TAG receive");
    free(buf);
}

int main(int argc, char **argv)
{
    int v, ranks[8], i, n = 0;

    mt_init(&argc, &argv, "tf_fail_deadpeer");
    v = mt_size() - 1;
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank() == v)
        victim();
    if (mt_rank() == 0)
        receiver(v);
    else
        ft_wait_failed(MT_HERE, MPI_COMM_WORLD, v);
    for (i = 0; i < v && n < 8; i++)
        ranks[n++] = i;
    if (n > 1)
        ft_survivors_exchange(ranks, n, 11);
    return ft_finish();
}
