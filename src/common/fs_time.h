/* Monotonic time in seconds, for deadlines on slow and error paths only
 * (clock_gettime goes through the vDSO: no system call). */
#ifndef FS_COMMON_TIME_H
#define FS_COMMON_TIME_H

#include <time.h>

static inline double fs_time_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
