/* What a process can tell of another of its host by process id
 * (src/detector/pidwatch.c): exited (fs_pw_exited, ASK's answer) and
 * there-and-not-stopped (fs_pw_runnable, the extension a starved process
 * gets), on a child in each state. */
#include "detector/pidwatch.h"

#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static fs_pw_id_t self_id;

static fs_pw_id_t child_id(pid_t pid)
{
    fs_pw_id_t id = self_id;

    id.pid = (int32_t)pid;
    return id;
}

static pid_t sleeper(void)
{
    pid_t pid = fork();

    cr_assert_geq(pid, 0);
    if (pid == 0) {
        pause();
        _exit(0);
    }
    return pid;
}

/* waits (bounded) until the child's state letter is one of states */
static void wait_state(pid_t pid, const char *states)
{
    char path[64], buf[256], *paren;
    struct timespec ts = {0, 1000000};
    FILE *f;
    int i;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    for (i = 0; i < 5000; ++i) {
        f = fopen(path, "r");
        if ((f != NULL) && (fgets(buf, sizeof(buf), f) != NULL) &&
            ((paren = strrchr(buf, ')')) != NULL) && (strchr(states, paren[2]) != NULL)) {
            fclose(f);
            return;
        }
        if (f != NULL) {
            fclose(f);
        }
        nanosleep(&ts, NULL);
    }
    cr_assert_fail("child %d never reached a state in %s", (int)pid, states);
}

static void setup(void)
{
    fs_pw_self(&self_id);
    cr_assert_neq(self_id.pidns, 0, "no pid namespace identity here");
}

TestSuite(pidwatch, .init = setup, .timeout = 20);

Test(pidwatch, a_running_child_is_runnable_not_exited)
{
    pid_t pid = sleeper();
    fs_pw_id_t id = child_id(pid);

    wait_state(pid, "S");
    cr_expect(fs_pw_runnable(&self_id, &id));
    cr_expect(!fs_pw_exited(&self_id, &id));
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

Test(pidwatch, a_stopped_child_is_not_runnable)
{
    pid_t pid = sleeper();
    fs_pw_id_t id = child_id(pid);

    kill(pid, SIGSTOP);
    wait_state(pid, "Tt");
    cr_expect(!fs_pw_runnable(&self_id, &id), "a stopped process gets no extension");
    cr_expect(!fs_pw_exited(&self_id, &id));
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

Test(pidwatch, a_zombie_and_a_reaped_child_have_exited)
{
    pid_t pid = sleeper();
    fs_pw_id_t id = child_id(pid);

    kill(pid, SIGKILL);
    wait_state(pid, "Z");
    cr_expect(fs_pw_exited(&self_id, &id), "a zombie has exited");
    cr_expect(!fs_pw_runnable(&self_id, &id));
    waitpid(pid, NULL, 0);
    cr_expect(fs_pw_exited(&self_id, &id), "reaped: no such process");
    cr_expect(!fs_pw_runnable(&self_id, &id));
}

Test(pidwatch, another_namespace_or_itself_tells_nothing)
{
    fs_pw_id_t other = self_id;

    other.pidns ^= 1;
    cr_expect(!fs_pw_runnable(&self_id, &other));
    cr_expect(!fs_pw_exited(&self_id, &other));
    cr_expect(!fs_pw_runnable(&self_id, &self_id));
    cr_expect(!fs_pw_exited(&self_id, &self_id));
}
