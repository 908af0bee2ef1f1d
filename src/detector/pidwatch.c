/* Watching a process of this host exit (see pidwatch.h). */
#define _GNU_SOURCE
#include "detector/pidwatch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434      /* Linux 5.3, the same number on every arch */
#endif

void fs_pw_self(fs_pw_id_t *id_p)
{
    struct stat st;

    memset(id_p, 0, sizeof(*id_p));
    id_p->pid = (int32_t)getpid();
    if (stat("/proc/self/ns/pid", &st) == 0) {
        id_p->pidns = ((uint64_t)st.st_dev << 32) ^ (uint64_t)st.st_ino;
    }
}

fs_status_t fs_pw_open(const fs_pw_id_t *self, const fs_pw_id_t *peer, int *fd_p)
{
    long fd;

    *fd_p = -1;
    if ((peer->pid <= 0) || (peer->pidns == 0) || (peer->pidns != self->pidns) ||
        (peer->pid == self->pid)) {
        return FS_ERR_UNSUPPORTED;
    }
    fd = syscall(SYS_pidfd_open, (pid_t)peer->pid, 0u);
    if (fd >= 0) {
        *fd_p = (int)fd;
        return FS_OK;
    }
    /* ESRCH: exited and reaped.  (Had its id been reused already, the
     * watch would follow a stranger, and the heartbeat timeout decides.) */
    return (errno == ESRCH) ? FS_ERR_PEER_FAILED : FS_ERR_UNSUPPORTED;
}

void fs_pw_close(int fd)
{
    if (fd >= 0) {
        (void)close(fd);
    }
}

int fs_pw_exited(const fs_pw_id_t *self, const fs_pw_id_t *peer)
{
    struct pollfd pfd;
    fs_status_t status;
    int fd, exited;

    status = fs_pw_open(self, peer, &fd);
    if (status != FS_OK) {
        return status == FS_ERR_PEER_FAILED;
    }
    pfd.fd     = fd;
    pfd.events = POLLIN;
    exited     = (poll(&pfd, 1, 0) == 1) && (pfd.revents & POLLIN);
    fs_pw_close(fd);
    return exited;
}

int fs_pw_runnable(const fs_pw_id_t *self, const fs_pw_id_t *peer)
{
    char path[64], buf[512], *paren;
    ssize_t len;
    int fd;

    if ((peer->pid <= 0) || (peer->pidns == 0) || (peer->pidns != self->pidns) ||
        (peer->pid == self->pid)) {
        return 0;
    }
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)peer->pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    len = read(fd, buf, sizeof(buf) - 1);
    (void)close(fd);
    if (len <= 0) {
        return 0;
    }
    buf[len] = '\0';
    /* "PID (COMM) STATE ...": COMM may hold spaces and parentheses */
    paren = strrchr(buf, ')');
    if ((paren == NULL) || (paren[1] != ' ')) {
        return 0;
    }
    return strchr("RSDIW", paren[2]) != NULL;
}
