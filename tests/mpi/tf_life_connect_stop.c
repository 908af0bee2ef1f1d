/* tf_life_connect_stop: tf_life_connect with SIGSTOP: process 2 stops
 * right after handing its first message to the transport.  Only the
 * heartbeat detector can tell: every survivor gets MPIX_ERR_RANK_FAIL_STOP
 * while process 2 is still stopped (/proc state T), before failstop-run's
 * waiter fences it (SIGKILL after 4 s).
 * FS_TEST_NPS: 3
 * FS_TEST_OPTS: --mca pml_failstop_inject 2:at=connect:STOP
 * FS_TEST_RUN_OPTS: --fence-stopped 4000
 * FS_TEST_FAULT: 1
 * FS_TEST_REPEAT_MAX: 3
 */
#include "lifetest.h"

int main(int argc, char **argv)
{
    return life_connect(&argc, &argv, "tf_life_connect_stop", 1);
}
