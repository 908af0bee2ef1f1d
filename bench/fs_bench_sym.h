/* Finds a failstop MPIX function at run time, so benchmark programs link
 * without -lfailstop and run unchanged on pml ucx and ob1 (where it is
 * NULL).  The component may have loaded libfailstop.so into its own symbol
 * scope, hence the second lookup. */
#ifndef FS_BENCH_SYM_H
#define FS_BENCH_SYM_H

#include <dlfcn.h>
#include <stddef.h>

static inline void *fs_bench_sym(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name), *h;

    if (p == NULL) {
        h = dlopen("libfailstop.so", RTLD_LAZY | RTLD_NOLOAD);
        if (h != NULL) {
            p = dlsym(h, name);
        }
    }
    return p;
}

#endif
