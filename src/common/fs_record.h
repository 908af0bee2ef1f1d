/* Records for failstop-run (src/tools/failstop-run): how each rank lived
 * and ended, which its exit status and its watcher read.
 *
 * A record KIND for rank RANK is the file $FAILSTOP_STATUS_DIR/KIND.RANK
 * holding TEXT.  The directory exists on the host failstop-run runs on (or
 * on a shared file system), not necessarily on the others; so every record
 * also goes to stderr as one line per line of TEXT,
 *     @failstop-record KIND RANK TEXT-LINE   (later lines: "+TEXT-LINE")
 * which Open MPI forwards from any host to mpirun, where failstop-run's
 * stderr filter turns it into the same file.  One write(2) per line (below
 * PIPE_BUF: never interleaved with other output), no allocation, no stdio:
 * usable from a detector thread or a dying process.  Without
 * FAILSTOP_STATUS_DIR (not under failstop-run) nothing is recorded. */
#ifndef FS_COMMON_FS_RECORD_H
#define FS_COMMON_FS_RECORD_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FS_RECORD_TAG "@failstop-record"

static inline void fs_record_line(const char *kind, int rank, const char *line,
                                  size_t len, int more)
{
    char buf[512];
    int n = snprintf(buf, sizeof(buf), FS_RECORD_TAG " %s %d %s%.*s\n", kind,
                     rank, more ? "+" : "", (int)len, line);
    ssize_t w;

    if ((n > 0) && ((size_t)n < sizeof(buf))) {
        w = write(2, buf, (size_t)n);
        (void)w;
    }
}

/* The file of record KIND for RANK in DIR, into path (size bytes); 0 if it
 * does not fit. */
static inline int fs_record_path(char *path, size_t size, const char *dir,
                                 const char *kind, int rank)
{
    int n = snprintf(path, size, "%s/%s.%d", dir, kind, rank);

    return (n > 0) && ((size_t)n < size);
}

/* Writes the record (TEXT: lines, each ended by '\n'). */
static inline void fs_record(const char *kind, int rank, const char *text)
{
    const char *dir = getenv("FAILSTOP_STATUS_DIR");
    const char *p, *nl;
    char path[4096];
    ssize_t w;
    int fd;

    if ((dir == NULL) || (*dir == '\0') || (rank < 0)) {
        return;
    }
    if (fs_record_path(path, sizeof(path), dir, kind, rank) &&
        ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) >= 0)) {
        w = write(fd, text, strlen(text));
        (void)w;
        close(fd);
    }
    for (p = text; *p != '\0'; p = nl + 1) {
        nl = strchr(p, '\n');
        if (nl == NULL) {
            break;
        }
        fs_record_line(kind, rank, p, (size_t)(nl - p), p != text);
    }
}

#endif
