/* Datatypes: contiguous layouts go to the engine as (pointer, length);
 * anything else through Open MPI's convertor, positioned on demand since a
 * transport may pack or unpack fragments out of order. */
#include "ompi/ompi_int.h"

static void fs_ompi_dt_seek(fs_ompi_dt_t *dt, size_t offset)
{
    size_t position = offset;

    if (dt->position != offset) {
        opal_convertor_set_position(&dt->conv, &position);
        dt->position = position;
    }
}

size_t fs_ompi_dt_pack(void *state, size_t offset, void *dst, size_t max)
{
    fs_ompi_dt_t *dt = state;
    struct iovec iov = {.iov_base = dst, .iov_len = max};
    uint32_t iov_count = 1;
    size_t length = max;

    fs_ompi_dt_seek(dt, offset);
    opal_convertor_pack(&dt->conv, &iov, &iov_count, &length);
    dt->position = offset + length;
    return length;
}

size_t fs_ompi_dt_unpack(void *state, size_t offset, const void *src, size_t len)
{
    fs_ompi_dt_t *dt = state;
    struct iovec iov = {.iov_base = (void *)src, .iov_len = len};
    uint32_t iov_count = 1;
    size_t length = len;

    fs_ompi_dt_seek(dt, offset);
    opal_convertor_unpack(&dt->conv, &iov, &iov_count, &length);
    dt->position = offset + length;
    return length;
}

void fs_ompi_buf_prepare_conv(fs_ompi_req_t *req, const void *buf, size_t count,
                              ompi_datatype_t *datatype, int for_send, fs_buf_t *fbuf)
{
    size_t size;

    /* held until fs_ompi_buf_release: MPI_Type_free is deferred while
     * operations use the type (contiguous layouts never look at it again) */
    OMPI_DATATYPE_RETAIN(datatype);
    req->dt.type = datatype;
    if (for_send) {
        opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor,
                                                 &datatype->super, count, buf, 0,
                                                 &req->dt.conv);
    } else {
        opal_convertor_copy_and_prepare_for_recv(ompi_mpi_local_convertor,
                                                 &datatype->super, count, buf, 0,
                                                 &req->dt.conv);
    }
    opal_convertor_get_packed_size(&req->dt.conv, &size);
    req->dt.position = 0;
    req->has_conv    = 1;
    fbuf->ptr        = NULL;
    fbuf->len        = size;
    fbuf->dt         = &req->dt;
}

void fs_ompi_buf_release_conv(fs_ompi_req_t *req)
{
    opal_convertor_cleanup(&req->dt.conv);
    req->has_conv = 0;
    OMPI_DATATYPE_RELEASE(req->dt.type);
}
