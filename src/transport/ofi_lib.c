/* libfabric, loaded when the OFI transport is chosen, not when failstop is.
 *
 * Debian's libfabric.so.1 pulls in libpsm_infinipath and libpsm2, whose
 * constructors take 0.1 s each on a machine without their hardware: linked
 * into libfailstop.so, they made every process of every job start 0.2 s
 * later (MPI_Init 0.07 -> 0.28 s at 2 ranks), whatever the transport, and
 * even under ob1 once Open MPI opened failstop's components.  Only five
 * functions of libfabric are real symbols; everything else is inline and
 * goes through the objects these return. */
#define _GNU_SOURCE
#include "transport/ofi_int.h"
#include "common/fs_log.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define FS_OFI_LIB "libfabric.so.1"

fs_ofi_lib_t fs_ofi_lib;

static pthread_once_t fs_ofi_lib_once = PTHREAD_ONCE_INIT;
static fs_status_t    fs_ofi_lib_status = FS_ERR_LOCAL;

static void *fs_ofi_lib_sym(void *handle, const char *name)
{
    void *sym = dlsym(handle, name);

    if (sym == NULL) {
        FS_ERROR("OFI: %s has no %s: %s", FS_OFI_LIB, name, dlerror());
    }
    return sym;
}

static void fs_ofi_lib_load(void)
{
    void *h = dlopen(FS_OFI_LIB, RTLD_NOW | RTLD_LOCAL);

    if (h == NULL) {
        FS_ERROR("OFI: cannot load %s (install libfabric, e.g. Debian's "
                 "libfabric1): %s", FS_OFI_LIB, dlerror());
        return;
    }
    fs_ofi_lib.getinfo  = (fs_ofi_getinfo_fn)fs_ofi_lib_sym(h, "fi_getinfo");
    fs_ofi_lib.freeinfo = (fs_ofi_freeinfo_fn)fs_ofi_lib_sym(h, "fi_freeinfo");
    fs_ofi_lib.dupinfo  = (fs_ofi_dupinfo_fn)fs_ofi_lib_sym(h, "fi_dupinfo");
    fs_ofi_lib.fabric   = (fs_ofi_fabric_fn)fs_ofi_lib_sym(h, "fi_fabric");
    fs_ofi_lib.strerror = (fs_ofi_strerror_fn)fs_ofi_lib_sym(h, "fi_strerror");
    if ((fs_ofi_lib.getinfo == NULL) || (fs_ofi_lib.freeinfo == NULL) ||
        (fs_ofi_lib.dupinfo == NULL) || (fs_ofi_lib.fabric == NULL) ||
        (fs_ofi_lib.strerror == NULL)) {
        return;     /* the handle stays: nothing is half-unloaded */
    }
    fs_ofi_lib_status = FS_OK;
}

fs_status_t fs_ofi_lib_open(void)
{
    (void)pthread_once(&fs_ofi_lib_once, fs_ofi_lib_load);
    return fs_ofi_lib_status;
}

const char *fs_ofi_strerror(int err)
{
    static __thread char buf[32];

    if (fs_ofi_lib.strerror != NULL) {
        return fs_ofi_lib.strerror(err);
    }
    snprintf(buf, sizeof(buf), "libfabric error %d", err);
    return buf;
}
