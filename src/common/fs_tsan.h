/* ThreadSanitizer annotations (make tsan).  Open MPI, UCX and PMIx are not
 * built with TSan, and Open MPI's inline synchronisation (opal_free_list's
 * lock-free LIFO) orders memory with atomic_thread_fence, which TSan does not
 * model.  Where failstop hands an object over through such a primitive, these
 * tell TSan about the ordering the primitive really provides: a release
 * before the hand-over, an acquire after taking the object.  Accesses after
 * the release, or before the acquire, are still checked.  No-ops in every
 * other build. */
#ifndef FS_COMMON_TSAN_H
#define FS_COMMON_TSAN_H

#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define FS_TSAN_ACQUIRE(addr) __tsan_acquire((void *)(addr))
#define FS_TSAN_RELEASE(addr) __tsan_release((void *)(addr))
#else
#define FS_TSAN_ACQUIRE(addr) ((void)(addr))
#define FS_TSAN_RELEASE(addr) ((void)(addr))
#endif

#endif
