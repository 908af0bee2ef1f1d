/* A random 64-bit id (a transport's, a segment's): tells one incarnation
 * from another, not a secret. */
#ifndef FS_COMMON_FS_RAND_H
#define FS_COMMON_FS_RAND_H

#include <stdint.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t fs_rand_id(void)
{
    struct timespec ts;
    uint64_t id = 0;

    if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != (ssize_t)sizeof(id)) {
        clock_gettime(CLOCK_REALTIME, &ts);
        id = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec;
    }
    return id;
}

#endif
