/* t_reqpool.c: requests taken from a pool that had to grow complete their
 * waits.  A PML keeps its requests in a free list that grows with malloc
 * when many are outstanding; memory from malloc is not zeroed, so a request
 * field the PML forgets to set holds whatever was there.  glibc's
 * M_PERTURB fills every new allocation with a non-zero byte, which turns
 * such a field from "usually zero" into "never zero".
 *
 * Each rank pairs with its neighbours: it starts NREQ synchronous sends to
 * the right (pooled requests that cannot complete before the receiver
 * matches them), meets everyone in a barrier, starts NREQ receives from the
 * left, and waits for all of them with MPI_Waitall, whose wait object counts
 * completions: a completion that does not reach it (failstop's send requests
 * once read a never-set "told pending" flag and re-armed themselves) leaves
 * MPI_Waitall waiting forever, with every request complete.  A watchdog
 * ends the rank with a diagnostic instead.  Then the same with
 * MPI_Waitany and MPI_Wait, and the payloads are checked. */
#include "mpitest.h"

#include <malloc.h>
#include <signal.h>
#include <unistd.h>

enum { NREQ = 300, LEN = 64, TAG = 70, WATCHDOG_S = 30 };

static void watchdog(int sig)
{
    static const char msg[] = "MPITEST FAIL t_reqpool: a wait did not return "
                              "within 30 s although its messages were sent\n";
    (void)sig;
    (void)!write(2, msg, sizeof(msg) - 1);
    _exit(1);
}

enum wait_kind { WAIT_ALL, WAIT_ANY, WAIT_EACH };

static void wait_requests(enum wait_kind kind, int n, MPI_Request *req)
{
    int i, idx;

    if (kind == WAIT_ALL) {
        MT_CHECK(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));
        return;
    }
    for (i = 0; i < n; i++) {
        if (kind == WAIT_ANY) {
            MT_CHECK(MPI_Waitany(n, req, &idx, MPI_STATUS_IGNORE));
        } else {
            MT_CHECK(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
        }
    }
}

static void round_trip(enum wait_kind kind, int round)
{
    static unsigned char sbuf[NREQ][LEN], rbuf[NREQ][LEN];
    static MPI_Request req[2 * NREQ];
    int i;

    for (i = 0; i < NREQ; i++) {
        mt_fill(sbuf[i], LEN, mt_rank(), round * NREQ + i);
        MT_CHECK(MPI_Issend(sbuf[i], LEN, MPI_BYTE, mt_right(), TAG, MPI_COMM_WORLD,
                            &req[i]));
    }
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (i = 0; i < NREQ; i++) {
        MT_CHECK(MPI_Irecv(rbuf[i], LEN, MPI_BYTE, mt_left(), TAG, MPI_COMM_WORLD,
                           &req[NREQ + i]));
    }
    alarm(WATCHDOG_S);
    wait_requests(kind, 2 * NREQ, req);
    alarm(0);
    for (i = 0; i < NREQ; i++) {
        mt_verify(MT_HERE, rbuf[i], LEN, mt_left(), round * NREQ + i, "from left");
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv, "t_reqpool");
    signal(SIGALRM, watchdog);
    mallopt(M_PERTURB, 0x5a);
    round_trip(WAIT_ALL, 0);
    round_trip(WAIT_ANY, 1);
    round_trip(WAIT_EACH, 2);
    round_trip(WAIT_ALL, 3);
    return mt_finish();
}
