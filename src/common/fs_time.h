/* Monotonic time in seconds, for deadlines on slow and error paths only
 * (clock_gettime goes through the vDSO: no system call); and wall-clock
 * time for records. */
#ifndef FS_COMMON_TIME_H
#define FS_COMMON_TIME_H

#include <time.h>

static inline double fs_time_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Wall-clock seconds (CLOCK_REALTIME): the time in failstop-run's records
 * (src/common/fs_record.h), which processes of one host, and of hosts whose
 * clocks agree, can compare. */
static inline double fs_time_wall(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
