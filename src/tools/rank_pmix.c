/* rank_pmix: failstop-rank keeps its rank's PMIx connection open (header). */
#define _GNU_SOURCE
#include "tools/rank_pmix.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The server's URI, newest name first: "NAME;tcp4://127.0.0.1:PORT". */
static const char *const fs_rank_pmix_uris[] = {
    "PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
    "PMIX_SERVER_URI21", "PMIX_SERVER_URI2", NULL};

void fs_rank_pmix_init(fs_rank_pmix_t *pm)
{
    const char *hold = getenv("FAILSTOP_PMIX_HOLD");
    const char *const *name;
    const char *uri, *colon;

    pm->port = 0;
    pm->fd   = -1;
    if ((hold == NULL) || (strcmp(hold, "1") != 0)) {
        return;
    }
    for (name = fs_rank_pmix_uris; *name != NULL; name++) {
        uri = getenv(*name);
        if ((uri != NULL) && (strstr(uri, ";tcp4://127.0.0.1:") != NULL)) {
            colon   = strrchr(uri, ':');
            pm->port = atoi(colon + 1);
            return;
        }
    }
}

int fs_rank_pmix_wanted(const fs_rank_pmix_t *pm)
{
    return (pm->port > 0) && (pm->fd < 0);
}

#define FS_RANK_PMIX_MAX_CONNS 1024

/* The inodes of the established TCP connections to 127.0.0.1:PORT in
 * CHILD's network namespace (every local rank's, and other clients'), into
 * inodes (at most max); returns their number. */
static int fs_rank_pmix_inodes(pid_t child, int port, unsigned long *inodes, int max)
{
    char path[64], line[512], rem[32], r[32];
    unsigned long ino;
    unsigned st;
    int n = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/net/tcp", (int)child);
    snprintf(rem, sizeof(rem), "0100007F:%04X", (unsigned)port);
    f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    while ((n < max) && (fgets(line, sizeof(line), f) != NULL)) {
        /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
        if ((sscanf(line, " %*s %*s %31s %x %*s %*s %*s %*s %*s %lu", r, &st, &ino) == 3) &&
            (strcmp(r, rem) == 0) && (st == 1)) {
            inodes[n++] = ino;
        }
    }
    fclose(f);
    return n;
}

/* CHILD's file descriptor for one of the sockets INODES; -1 if none. */
static int fs_rank_pmix_fd(pid_t child, const unsigned long *inodes, int n)
{
    char dir[64], path[320], link[64];
    unsigned long ino;
    struct dirent *e;
    int fd = -1, i;
    ssize_t len;
    DIR *d;

    snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)child);
    d = opendir(dir);
    if (d == NULL) {
        return -1;
    }
    while ((fd < 0) && ((e = readdir(d)) != NULL)) {
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        len = readlink(path, link, sizeof(link) - 1);
        if ((len <= 0) || (link[len] = '\0', sscanf(link, "socket:[%lu]", &ino) != 1)) {
            continue;
        }
        for (i = 0; i < n; i++) {
            if (inodes[i] == ino) {
                fd = atoi(e->d_name);
            }
        }
    }
    closedir(d);
    return fd;
}

int fs_rank_pmix_take(fs_rank_pmix_t *pm, pid_t child)
{
    unsigned long inodes[FS_RANK_PMIX_MAX_CONNS];
    int pidfd, theirs, n;

    if (!fs_rank_pmix_wanted(pm)) {
        return pm->fd >= 0;
    }
    n = fs_rank_pmix_inodes(child, pm->port, inodes, FS_RANK_PMIX_MAX_CONNS);
    theirs = (n > 0) ? fs_rank_pmix_fd(child, inodes, n) : -1;
    if (theirs < 0) {
        return 0;
    }
    pidfd = (int)syscall(SYS_pidfd_open, child, 0);
    if (pidfd < 0) {
        return 0;
    }
    pm->fd = (int)syscall(SYS_pidfd_getfd, pidfd, theirs, 0);
    close(pidfd);
    if (pm->fd < 0) {
        perror("failstop-rank: pidfd_getfd (the rank's PMIx connection)");
        pm->port = 0;           /* not allowed here: do not try again */
        return 0;
    }
    return 1;
}
