/* rank_pmix: failstop-rank keeps its rank's PMIx connection open (header). */
#define _GNU_SOURCE
#include "tools/rank_pmix.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/fs_time.h"

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
    pm->sig  = 0;
    pm->read_at = -1e30;
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

/* The child's sockets looked at, at most: MPI_Init opens a few (PMIx, the
 * transports' listeners); the PMIx connection is among the first. */
#define FS_RANK_PMIX_MAX_SOCKS 256
/* The TCP table read again at least this often, in seconds. */
#define FS_RANK_PMIX_REREAD_S  1.0

typedef struct {
    int           fd;
    unsigned long inode;
} fs_rank_pmix_sock_t;

/* CHILD's sockets (descriptor and inode), into socks (at most max);
 * returns their number, and their signature (count and inodes mixed) in
 * *sig_p. */
static int fs_rank_pmix_socks(pid_t child, fs_rank_pmix_sock_t *socks, int max,
                              unsigned long *sig_p)
{
    char dir[64], path[320], link[64];
    unsigned long ino, sig = 0;
    struct dirent *e;
    ssize_t len;
    int n = 0;
    DIR *d;

    snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)child);
    d = opendir(dir);
    if (d == NULL) {
        *sig_p = 0;
        return 0;
    }
    while ((n < max) && ((e = readdir(d)) != NULL)) {
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        len = readlink(path, link, sizeof(link) - 1);
        if ((len <= 0) || (link[len] = '\0', sscanf(link, "socket:[%lu]", &ino) != 1)) {
            continue;
        }
        socks[n].fd    = atoi(e->d_name);
        socks[n].inode = ino;
        sig = sig * 31 + ino;
        n++;
    }
    closedir(d);
    *sig_p = sig + (unsigned long)n;
    return n;
}

/* The descriptor, among socks, of CHILD's established TCP connection to
 * 127.0.0.1:PORT (its network namespace's table); -1 if none. */
static int fs_rank_pmix_match(pid_t child, int port, const fs_rank_pmix_sock_t *socks, int n)
{
    char path[64], line[512], rem[32], r[32];
    unsigned long ino;
    unsigned st;
    int fd = -1, i;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/net/tcp", (int)child);
    snprintf(rem, sizeof(rem), "0100007F:%04X", (unsigned)port);
    f = fopen(path, "r");
    if (f == NULL) {
        return -1;
    }
    while ((fd < 0) && (fgets(line, sizeof(line), f) != NULL)) {
        /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
        if ((sscanf(line, " %*s %*s %31s %x %*s %*s %*s %*s %*s %lu", r, &st, &ino) != 3) ||
            (st != 1) || (strcmp(r, rem) != 0)) {
            continue;
        }
        for (i = 0; i < n; i++) {
            if (socks[i].inode == ino) {
                fd = socks[i].fd;
            }
        }
    }
    fclose(f);
    return fd;
}

int fs_rank_pmix_take(fs_rank_pmix_t *pm, pid_t child)
{
    fs_rank_pmix_sock_t socks[FS_RANK_PMIX_MAX_SOCKS];
    unsigned long sig;
    int pidfd, theirs, n;
    double now;

    if (!fs_rank_pmix_wanted(pm)) {
        return pm->fd >= 0;
    }
    /* the namespace's TCP table (every local rank's connections: 256 ranks
     * a node make it long) is read when the child's own sockets changed,
     * and at least every FS_RANK_PMIX_REREAD_S (a socket made before it
     * connected looks the same after) */
    n   = fs_rank_pmix_socks(child, socks, FS_RANK_PMIX_MAX_SOCKS, &sig);
    now = fs_time_now();
    if ((n == 0) || ((sig == pm->sig) && (now - pm->read_at < FS_RANK_PMIX_REREAD_S))) {
        return 0;
    }
    pm->sig     = sig;
    pm->read_at = now;
    theirs = fs_rank_pmix_match(child, pm->port, socks, n);
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
