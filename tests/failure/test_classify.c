/* Unit tests of the error-classification table (src/failure/classify.c).
 *
 * Three layers:
 *  1. every row, one test each: it is reachable (no earlier row shadows it)
 *     and its number equals the real constant of the name it carries,
 *     read from the transport headers that src/failure/ may not include;
 *  2. whole-table properties: coverage of every code the headers define,
 *     defaults, first-match semantics against an independent oracle, and
 *     the context rules;
 *  3. the decisions that matter, spelled out one by one. */
#include "failure/classify.h"
#include "failure/fault_status.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <infiniband/verbs.h>
#include <rdma/fi_errno.h>
#include <ucs/type/status.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>

typedef struct fs_test_name {
    const char *name;
    long        value;
} fs_test_name_t;

#define FS_N(_sym) {#_sym, (long)(_sym)}
#define FS_ARRAY_LEN(_a) (sizeof(_a) / sizeof((_a)[0]))

/* Every ucs_status_t value of ucs/type/status.h (UCX 1.13). */
static const fs_test_name_t fs_test_ucx_names[] = {
    FS_N(UCS_OK), FS_N(UCS_INPROGRESS), FS_N(UCS_ERR_NO_MESSAGE),
    FS_N(UCS_ERR_NO_RESOURCE), FS_N(UCS_ERR_IO_ERROR), FS_N(UCS_ERR_NO_MEMORY),
    FS_N(UCS_ERR_INVALID_PARAM), FS_N(UCS_ERR_UNREACHABLE),
    FS_N(UCS_ERR_INVALID_ADDR), FS_N(UCS_ERR_NOT_IMPLEMENTED),
    FS_N(UCS_ERR_MESSAGE_TRUNCATED), FS_N(UCS_ERR_NO_PROGRESS),
    FS_N(UCS_ERR_BUFFER_TOO_SMALL), FS_N(UCS_ERR_NO_ELEM),
    FS_N(UCS_ERR_SOME_CONNECTS_FAILED), FS_N(UCS_ERR_NO_DEVICE),
    FS_N(UCS_ERR_BUSY), FS_N(UCS_ERR_CANCELED), FS_N(UCS_ERR_SHMEM_SEGMENT),
    FS_N(UCS_ERR_ALREADY_EXISTS), FS_N(UCS_ERR_OUT_OF_RANGE),
    FS_N(UCS_ERR_TIMED_OUT), FS_N(UCS_ERR_EXCEEDS_LIMIT),
    FS_N(UCS_ERR_UNSUPPORTED), FS_N(UCS_ERR_REJECTED),
    FS_N(UCS_ERR_NOT_CONNECTED), FS_N(UCS_ERR_CONNECTION_RESET),
    FS_N(UCS_ERR_FIRST_LINK_FAILURE), FS_N(UCS_ERR_LAST_LINK_FAILURE),
    FS_N(UCS_ERR_FIRST_ENDPOINT_FAILURE), FS_N(UCS_ERR_ENDPOINT_TIMEOUT),
    FS_N(UCS_ERR_LAST_ENDPOINT_FAILURE),
};

/* Every FI_* error of rdma/fi_errno.h (FI_EWOULDBLOCK == FI_EAGAIN), plus
 * EPIPE, which providers report although fi_errno.h has no FI_EPIPE. */
static const fs_test_name_t fs_test_ofi_names[] = {
    FS_N(FI_SUCCESS), FS_N(FI_EPERM), FS_N(FI_ENOENT), FS_N(FI_EINTR),
    FS_N(FI_EIO), FS_N(FI_E2BIG), FS_N(FI_EBADF), FS_N(FI_EAGAIN),
    FS_N(FI_ENOMEM), FS_N(FI_EACCES), FS_N(FI_EFAULT), FS_N(FI_EBUSY),
    FS_N(FI_ENODEV), FS_N(FI_EINVAL), FS_N(FI_EMFILE), FS_N(FI_ENOSPC),
    FS_N(FI_ENOSYS), FS_N(FI_EWOULDBLOCK), FS_N(FI_ENOMSG), FS_N(FI_ENODATA),
    FS_N(FI_EOVERFLOW), FS_N(FI_EMSGSIZE), FS_N(FI_ENOPROTOOPT),
    FS_N(FI_EOPNOTSUPP), FS_N(FI_EADDRINUSE), FS_N(FI_EADDRNOTAVAIL),
    FS_N(FI_ENETDOWN), FS_N(FI_ENETUNREACH), FS_N(FI_ECONNABORTED),
    FS_N(FI_ECONNRESET), FS_N(FI_ENOBUFS), FS_N(FI_EISCONN), FS_N(FI_ENOTCONN),
    FS_N(FI_ESHUTDOWN), FS_N(FI_ETIMEDOUT), FS_N(FI_ECONNREFUSED),
    FS_N(FI_EHOSTDOWN), FS_N(FI_EHOSTUNREACH), FS_N(FI_EALREADY),
    FS_N(FI_EINPROGRESS), FS_N(FI_EREMOTEIO), FS_N(FI_ECANCELED),
    FS_N(FI_EKEYREJECTED), FS_N(FI_EOTHER), FS_N(FI_ETOOSMALL),
    FS_N(FI_EOPBADSTATE), FS_N(FI_EAVAIL), FS_N(FI_EBADFLAGS), FS_N(FI_ENOEQ),
    FS_N(FI_EDOMAIN), FS_N(FI_ENOCQ), FS_N(FI_ECRC), FS_N(FI_ETRUNC),
    FS_N(FI_ENOKEY), FS_N(FI_ENOAV), FS_N(FI_EOVERRUN), FS_N(FI_ENORX),
    FS_N(EPIPE),
};

/* prov_errno names besides the ibv_wc_status ones (libfabric verbs reports
 * the wc status) and FI_* ones.  No installed header defines the EFA and
 * CXI codes: these are a second, independent copy of libfabric
 * prov/efa/src/efa_errno.h and Cassini's enum c_return_code, so a typo in
 * either copy fails the test. */
static const fs_test_name_t fs_test_prov_names[] = {
    FS_N(ENOTCONN), FS_N(ECONNRESET), FS_N(EPIPE),
    {"EFA_IO_COMP_STATUS_REMOTE_ERROR_ABORT", 8},
    {"EFA_IO_COMP_STATUS_LOCAL_ERROR_UNRESP_REMOTE", 13},
    {"FI_EFA_ERR_ESTABLISHED_RECV_UNRESP", 4124},
    {"FI_EFA_ERR_UNESTABLISHED_RECV_UNRESP", 4126},
    {"FI_EFA_ERR_PEER_ABORTED", 4127},
    {"C_RC_PTLTE_NOT_FOUND", 26},
};

/* Every enum ibv_wc_status of infiniband/verbs.h. */
static const fs_test_name_t fs_test_wc_names[] = {
    FS_N(IBV_WC_SUCCESS), FS_N(IBV_WC_LOC_LEN_ERR), FS_N(IBV_WC_LOC_QP_OP_ERR),
    FS_N(IBV_WC_LOC_EEC_OP_ERR), FS_N(IBV_WC_LOC_PROT_ERR),
    FS_N(IBV_WC_WR_FLUSH_ERR), FS_N(IBV_WC_MW_BIND_ERR),
    FS_N(IBV_WC_BAD_RESP_ERR), FS_N(IBV_WC_LOC_ACCESS_ERR),
    FS_N(IBV_WC_REM_INV_REQ_ERR), FS_N(IBV_WC_REM_ACCESS_ERR),
    FS_N(IBV_WC_REM_OP_ERR), FS_N(IBV_WC_RETRY_EXC_ERR),
    FS_N(IBV_WC_RNR_RETRY_EXC_ERR), FS_N(IBV_WC_LOC_RDD_VIOL_ERR),
    FS_N(IBV_WC_REM_INV_RD_REQ_ERR), FS_N(IBV_WC_REM_ABORT_ERR),
    FS_N(IBV_WC_INV_EECN_ERR), FS_N(IBV_WC_INV_EEC_STATE_ERR),
    FS_N(IBV_WC_FATAL_ERR), FS_N(IBV_WC_RESP_TIMEOUT_ERR),
    FS_N(IBV_WC_GENERAL_ERR), FS_N(IBV_WC_TM_ERR),
    FS_N(IBV_WC_TM_RNDV_INCOMPLETE),
};

/* Every enum ibv_event_type of infiniband/verbs.h. */
static const fs_test_name_t fs_test_async_names[] = {
    FS_N(IBV_EVENT_CQ_ERR), FS_N(IBV_EVENT_QP_FATAL), FS_N(IBV_EVENT_QP_REQ_ERR),
    FS_N(IBV_EVENT_QP_ACCESS_ERR), FS_N(IBV_EVENT_COMM_EST),
    FS_N(IBV_EVENT_SQ_DRAINED), FS_N(IBV_EVENT_PATH_MIG),
    FS_N(IBV_EVENT_PATH_MIG_ERR), FS_N(IBV_EVENT_DEVICE_FATAL),
    FS_N(IBV_EVENT_PORT_ACTIVE), FS_N(IBV_EVENT_PORT_ERR),
    FS_N(IBV_EVENT_LID_CHANGE), FS_N(IBV_EVENT_PKEY_CHANGE),
    FS_N(IBV_EVENT_SM_CHANGE), FS_N(IBV_EVENT_SRQ_ERR),
    FS_N(IBV_EVENT_SRQ_LIMIT_REACHED), FS_N(IBV_EVENT_QP_LAST_WQE_REACHED),
    FS_N(IBV_EVENT_CLIENT_REREGISTER), FS_N(IBV_EVENT_GID_CHANGE),
    FS_N(IBV_EVENT_WQ_FATAL),
};

static const fs_test_name_t fs_test_errno_names[] = {
    FS_N(ESRCH), FS_N(EPERM), FS_N(EFAULT), FS_N(ENOMEM),
};

static const uint32_t fs_test_single_ctx[] = {
    FS_FAULT_CTX_OP, FS_FAULT_CTX_EP_ERROR, FS_FAULT_CTX_SLOW_LINK,
    FS_FAULT_CTX_EP_CREATE
};

/* A prov_errno no row names, to reach wildcard rows. */
#define FS_TEST_PROV_OTHER INT32_MAX

/* ---- helpers ------------------------------------------------------------- */

static const fs_fault_row_t *fs_test_row(size_t idx)
{
    size_t count;
    const fs_fault_row_t *table = fs_fault_table(&count);

    cr_assert_lt(idx, count);
    return &table[idx];
}

static int fs_test_is_default(const fs_fault_row_t *row)
{
    return (row->code == INT32_MIN) && (row->code_last == INT32_MAX);
}

static int32_t fs_test_probe_prov(const fs_fault_row_t *row)
{
    return (row->prov_errno == FS_FAULT_PROV_ANY) ? FS_TEST_PROV_OTHER
                                                  : row->prov_errno;
}

static const fs_fault_row_t *fs_test_classify(fs_fault_source_t source,
                                              int32_t code, int32_t prov,
                                              uint32_t ctx)
{
    const fs_fault_row_t *row = fs_fault_classify(source, code, prov, ctx);

    cr_assert_not_null(row);
    return row;
}

static fs_fault_class_t fs_test_cls(fs_fault_source_t source, int32_t code,
                                    int32_t prov, uint32_t ctx)
{
    return fs_test_classify(source, code, prov, ctx)->cls;
}

static int fs_test_lookup(const fs_test_name_t *tab, size_t n,
                          const char *name, size_t len, long *value_p)
{
    size_t i;

    for (i = 0; i < n; ++i) {
        if ((strlen(tab[i].name) == len) && !strncmp(tab[i].name, name, len)) {
            *value_p = tab[i].value;
            return 1;
        }
    }
    return 0;
}

/* A prov_errno name: a provider code, an ibv_wc_status, or "-FI_E*". */
static int fs_test_lookup_prov(const char *name, long *value_p)
{
    size_t len = strlen(name);
    int negative = (name[0] == '-');
    long value;

    if (negative) {
        ++name;
        --len;
    }
    if (!fs_test_lookup(fs_test_prov_names, FS_ARRAY_LEN(fs_test_prov_names),
                        name, len, &value) &&
        !fs_test_lookup(fs_test_wc_names, FS_ARRAY_LEN(fs_test_wc_names),
                        name, len, &value) &&
        !fs_test_lookup(fs_test_ofi_names, FS_ARRAY_LEN(fs_test_ofi_names),
                        name, len, &value)) {
        return 0;
    }
    *value_p = negative ? -value : value;
    return 1;
}

/* UCX rows are "NAME" or "FIRST..LAST" (a range, in code order). */
static void fs_test_check_ucx_numbers(size_t idx, const fs_fault_row_t *row)
{
    const char *dots = strstr(row->name, "..");
    size_t n = FS_ARRAY_LEN(fs_test_ucx_names);
    long first, last;

    if (dots == NULL) {
        cr_assert(fs_test_lookup(fs_test_ucx_names, n, row->name,
                                 strlen(row->name), &first),
                  "row %zu: %s is not a ucs_status_t", idx, row->name);
        last = first;
    } else {
        cr_assert(fs_test_lookup(fs_test_ucx_names, n, row->name,
                                 (size_t)(dots - row->name), &first) &&
                  fs_test_lookup(fs_test_ucx_names, n, dots + 2,
                                 strlen(dots + 2), &last),
                  "row %zu: %s does not name two ucs_status_t", idx, row->name);
    }
    cr_expect_eq(row->code, first, "row %zu %s: code %d, header says %ld",
                 idx, row->name, row->code, first);
    cr_expect_eq(row->code_last, last, "row %zu %s: code_last %d, header says %ld",
                 idx, row->name, row->code_last, last);
}

/* OFI rows are "FI_E*" (any prov_errno) or "FI_E*+PROV". */
static void fs_test_check_ofi_numbers(size_t idx, const fs_fault_row_t *row)
{
    const char *plus = strchr(row->name, '+');
    size_t len = plus ? (size_t)(plus - row->name) : strlen(row->name);
    long code, prov;

    cr_assert(fs_test_lookup(fs_test_ofi_names, FS_ARRAY_LEN(fs_test_ofi_names),
                             row->name, len, &code),
              "row %zu: %s is not an fi_errno.h error", idx, row->name);
    cr_expect_eq(row->code, code, "row %zu %s: code %d, header says %ld",
                 idx, row->name, row->code, code);
    cr_expect_eq(row->code_last, row->code, "row %zu %s: not a range", idx,
                 row->name);
    if (row->prov_errno == FS_FAULT_PROV_ANY) {
        cr_expect_null(plus, "row %zu %s: names a prov_errno it does not match",
                       idx, row->name);
        return;
    }
    cr_assert_not_null(plus, "row %zu %s: prov_errno %d without a name", idx,
                       row->name, row->prov_errno);
    cr_assert(fs_test_lookup_prov(plus + 1, &prov),
              "row %zu: unknown prov_errno name in %s", idx, row->name);
    cr_expect_eq(row->prov_errno, prov, "row %zu %s: prov_errno %d, header says %ld",
                 idx, row->name, row->prov_errno, prov);
}

static void fs_test_check_ibv_numbers(size_t idx, const fs_fault_row_t *row,
                                      const fs_test_name_t *tab, size_t n)
{
    long code;

    cr_assert(fs_test_lookup(tab, n, row->name, strlen(row->name), &code),
              "row %zu: %s is not in verbs.h", idx, row->name);
    cr_expect_eq(row->code, code, "row %zu %s: code %d, verbs.h says %ld",
                 idx, row->name, row->code, code);
    cr_expect_eq(row->code_last, row->code, "row %zu %s: not a range", idx,
                 row->name);
}

static struct criterion_test_params fs_test_row_params(void);

static void fs_test_free_params(struct criterion_test_params *crp)
{
    cr_free(crp->params);
}

static struct criterion_test_params fs_test_row_params(void)
{
    size_t count, i;
    size_t *idx;

    fs_fault_table(&count);
    idx = cr_malloc(count * sizeof(*idx));
    for (i = 0; i < count; ++i) {
        idx[i] = i;
    }
    return cr_make_param_array(size_t, idx, count, fs_test_free_params);
}

/* ---- 1. every row -------------------------------------------------------- */

ParameterizedTestParameters(classify_row, is_reachable)
{
    return fs_test_row_params();
}

/* classify(source, code, prov, one context of the row's mask) returns the
 * row, at both ends of its code range: no earlier row shadows it. */
ParameterizedTest(size_t *idx, classify_row, is_reachable)
{
    const fs_fault_row_t *row = fs_test_row(*idx);
    int32_t probes[2] = {row->code, row->code_last};
    int32_t prov = fs_test_probe_prov(row);
    int p;

    for (p = 0; p < 2; ++p) {
        uint32_t bit, hit = 0;

        for (bit = 1; bit <= FS_FAULT_CTX_ANY; bit <<= 1) {
            if ((row->contexts & bit) &&
                (fs_fault_classify(row->source, probes[p], prov, bit) == row)) {
                hit = bit;
                break;
            }
        }
        cr_expect_neq(hit, 0, "row %zu %s (code %d, prov %d, ctx 0x%x) is "
                      "shadowed by an earlier row", *idx, row->name, probes[p],
                      row->prov_errno, row->contexts);
    }
}

ParameterizedTestParameters(classify_row, number_matches_header)
{
    return fs_test_row_params();
}

/* The number in the row is the value of the name it carries. */
ParameterizedTest(size_t *idx, classify_row, number_matches_header)
{
    const fs_fault_row_t *row = fs_test_row(*idx);

    if (fs_test_is_default(row)) {
        cr_expect_str_eq(row->name, "(default)");
        return;
    }
    switch (row->source) {
    case FS_FAULT_SRC_UCX:
        fs_test_check_ucx_numbers(*idx, row);
        break;
    case FS_FAULT_SRC_OFI:
        fs_test_check_ofi_numbers(*idx, row);
        break;
    case FS_FAULT_SRC_IBV_WC:
        fs_test_check_ibv_numbers(*idx, row, fs_test_wc_names,
                                  FS_ARRAY_LEN(fs_test_wc_names));
        break;
    case FS_FAULT_SRC_IBV_ASYNC:
        fs_test_check_ibv_numbers(*idx, row, fs_test_async_names,
                                  FS_ARRAY_LEN(fs_test_async_names));
        break;
    case FS_FAULT_SRC_CMA:
        fs_test_check_ibv_numbers(*idx, row, fs_test_errno_names,
                                  FS_ARRAY_LEN(fs_test_errno_names));
        break;
    default:
        cr_expect_fail("row %zu %s: bad source %d", *idx, row->name, row->source);
    }
}

ParameterizedTestParameters(classify_row, is_well_formed)
{
    return fs_test_row_params();
}

ParameterizedTest(size_t *idx, classify_row, is_well_formed)
{
    const fs_fault_row_t *row = fs_test_row(*idx);

    cr_expect_leq(row->code, row->code_last, "row %zu %s: empty range", *idx,
                 row->name);
    cr_expect(row->contexts != 0 && (row->contexts & ~FS_FAULT_CTX_ANY) == 0,
              "row %zu %s: context mask 0x%x", *idx, row->name, row->contexts);
    cr_expect_str_neq(fs_fault_class_name(row->cls), "INVALID",
                      "row %zu %s: class %d", *idx, row->name, row->cls);
    cr_expect(row->name != NULL && row->name[0] != '\0', "row %zu: no name", *idx);
    cr_expect(row->reason != NULL && row->reason[0] != '\0',
              "row %zu %s: no reason", *idx, row->name);
    if (row->source != FS_FAULT_SRC_OFI) {
        cr_expect_eq(row->prov_errno, FS_FAULT_PROV_ANY,
                     "row %zu %s: prov_errno outside libfabric", *idx, row->name);
    }
}

/* ---- 2. whole table -------------------------------------------------------- */

static void fs_test_expect_all_covered(fs_fault_source_t source,
                                       const fs_test_name_t *tab, size_t n)
{
    size_t i, c;

    for (i = 0; i < n; ++i) {
        for (c = 0; c < FS_ARRAY_LEN(fs_test_single_ctx); ++c) {
            const fs_fault_row_t *row = fs_test_classify(
                source, (int32_t)tab[i].value, 0, fs_test_single_ctx[c]);

            cr_expect(!fs_test_is_default(row), "%s (%ld) in context 0x%x "
                      "has no row of its own", tab[i].name, tab[i].value,
                      fs_test_single_ctx[c]);
        }
    }
}

Test(classify_table, every_ucs_status_has_a_row)
{
    int32_t code;

    fs_test_expect_all_covered(FS_FAULT_SRC_UCX, fs_test_ucx_names,
                               FS_ARRAY_LEN(fs_test_ucx_names));
    for (code = UCS_ERR_LAST_ENDPOINT_FAILURE; code <= UCS_ERR_FIRST_LINK_FAILURE;
         ++code) {
        cr_expect(!fs_test_is_default(fs_test_classify(FS_FAULT_SRC_UCX, code, 0,
                                                       FS_FAULT_CTX_OP)),
                  "ucs status %d inside the failure ranges has no row", code);
    }
}

Test(classify_table, every_fi_errno_has_a_row)
{
    fs_test_expect_all_covered(FS_FAULT_SRC_OFI, fs_test_ofi_names,
                               FS_ARRAY_LEN(fs_test_ofi_names));
}

Test(classify_table, every_wc_status_has_a_row)
{
    fs_test_expect_all_covered(FS_FAULT_SRC_IBV_WC, fs_test_wc_names,
                               FS_ARRAY_LEN(fs_test_wc_names));
}

Test(classify_table, every_async_event_has_a_row)
{
    fs_test_expect_all_covered(FS_FAULT_SRC_IBV_ASYNC, fs_test_async_names,
                               FS_ARRAY_LEN(fs_test_async_names));
}

/* Each source's rows are contiguous and end with a catch-all LOCAL_FATAL. */
Test(classify_table, each_source_ends_with_a_local_default)
{
    size_t count, i;
    const fs_fault_row_t *table = fs_fault_table(&count);
    int seen_default[FS_FAULT_SRC_LAST + 1] = {0};

    cr_assert_gt(count, 0);
    for (i = 0; i < count; ++i) {
        const fs_fault_row_t *row = &table[i];
        int last_of_source = (i + 1 == count) || (table[i + 1].source != row->source);

        cr_assert_leq(row->source, FS_FAULT_SRC_LAST);
        cr_expect(!seen_default[row->source], "row %zu %s after its source's "
                  "default", i, row->name);
        cr_expect_eq(fs_test_is_default(row), last_of_source,
                     "row %zu %s: default rows must end their source", i, row->name);
        if (fs_test_is_default(row)) {
            seen_default[row->source] = 1;
            cr_expect_eq(row->cls, FS_FAULT_LOCAL_FATAL);
            cr_expect_eq(row->contexts, FS_FAULT_CTX_ANY);
            cr_expect_eq(row->prov_errno, FS_FAULT_PROV_ANY);
        }
    }
    for (i = 0; i <= FS_FAULT_SRC_LAST; ++i) {
        cr_expect(seen_default[i], "source %zu has no default row", i);
    }
}

/* Independent oracle for the lookup rule: the first matching row wins. */
static const fs_fault_row_t *fs_test_oracle(fs_fault_source_t source,
                                            int32_t code, int32_t prov,
                                            uint32_t ctx)
{
    size_t count, i;
    const fs_fault_row_t *table = fs_fault_table(&count);

    for (i = 0; i < count; ++i) {
        const fs_fault_row_t *r = &table[i];
        int prov_ok = (source != FS_FAULT_SRC_OFI) ||
                      (r->prov_errno == FS_FAULT_PROV_ANY) || (r->prov_errno == prov);
        int ctx_ok = (r->contexts == FS_FAULT_CTX_ANY) || (r->contexts & ctx);

        if ((r->source == source) && (code >= r->code) &&
            (code <= r->code_last) && prov_ok && ctx_ok) {
            return r;
        }
    }
    return NULL;
}

Test(classify_table, first_match_wins_everywhere)
{
    static const int32_t provs[] = {0, 1, 2, 5, -5, 8, 11, 12, 13, 16, 20, 26,
                                    32, 104, 107, 4124, 4126, 4127,
                                    FS_TEST_PROV_OTHER};
    fs_fault_source_t src;
    int32_t code;
    uint32_t ctx;
    size_t p;

    for (src = FS_FAULT_SRC_UCX; src <= FS_FAULT_SRC_LAST; ++src) {
        for (code = -300; code <= 300; ++code) {
            for (ctx = 0; ctx <= FS_FAULT_CTX_ANY; ++ctx) {
                for (p = 0; p < FS_ARRAY_LEN(provs); ++p) {
                    const fs_fault_row_t *got = fs_fault_classify(src, code, provs[p], ctx);
                    /* the API accepts -FI_E* for libfabric */
                    int32_t want_code = ((src == FS_FAULT_SRC_OFI) && code < 0) ? -code : code;
                    const fs_fault_row_t *want = fs_test_oracle(src, want_code, provs[p], ctx);

                    if (got != want) {
                        cr_expect_fail("source %d code %d prov %d ctx 0x%x: got %s, want %s",
                                src, code, provs[p], ctx, got ? got->name : "NULL",
                                want ? want->name : "NULL");
                        return;
                    }
                }
            }
        }
    }
}

/* The rule "local or unknown is never blamed on a peer", at the edges. */
Test(classify_table, unknown_codes_are_local_never_peer)
{
    static const struct { fs_fault_source_t src; int32_t code; } unknown[] = {
        {FS_FAULT_SRC_UCX, -26}, {FS_FAULT_SRC_UCX, -39},
        {FS_FAULT_SRC_UCX, -90}, {FS_FAULT_SRC_UCX, UCS_ERR_LAST},
        {FS_FAULT_SRC_UCX, 2}, {FS_FAULT_SRC_UCX, INT32_MIN},
        {FS_FAULT_SRC_UCX, INT32_MAX},
        {FS_FAULT_SRC_OFI, ESRCH}, {FS_FAULT_SRC_OFI, ENXIO},
        {FS_FAULT_SRC_OFI, FI_ERRNO_MAX}, {FS_FAULT_SRC_OFI, 9999},
        {FS_FAULT_SRC_OFI, INT32_MIN}, {FS_FAULT_SRC_OFI, INT32_MAX},
        {FS_FAULT_SRC_IBV_WC, IBV_WC_TM_RNDV_INCOMPLETE + 1},
        {FS_FAULT_SRC_IBV_WC, -1}, {FS_FAULT_SRC_IBV_WC, 255},
        {FS_FAULT_SRC_IBV_ASYNC, IBV_EVENT_WQ_FATAL + 1},
        {FS_FAULT_SRC_IBV_ASYNC, -1}, {FS_FAULT_SRC_IBV_ASYNC, 255},
        {FS_FAULT_SRC_CMA, EINVAL}, {FS_FAULT_SRC_CMA, 0}, {FS_FAULT_SRC_CMA, -ESRCH},
    };
    size_t i;
    uint32_t ctx;

    for (i = 0; i < FS_ARRAY_LEN(unknown); ++i) {
        for (ctx = 0; ctx <= FS_FAULT_CTX_ANY; ++ctx) {
            const fs_fault_row_t *row = fs_test_classify(unknown[i].src,
                                                         unknown[i].code, 0, ctx);

            cr_expect(fs_test_is_default(row), "source %d code %d ctx 0x%x: %s",
                      unknown[i].src, unknown[i].code, ctx, row->name);
            cr_expect_eq(row->cls, FS_FAULT_LOCAL_FATAL);
            cr_expect_eq(row->source, unknown[i].src);
        }
    }
}

/* A mask that mixes SLOW_LINK or EP_CREATE with OP/EP_ERROR reads like the
 * cautious bit alone, and context 0 reaches only context-free rows. */
Test(classify_table, mixed_masks_take_the_cautious_reading)
{
    static const uint32_t cautious[] = {FS_FAULT_CTX_SLOW_LINK,
                                        FS_FAULT_CTX_EP_CREATE};
    static const uint32_t death[] = {FS_FAULT_CTX_OP, FS_FAULT_CTX_EP_ERROR};
    size_t count, i, c, d;
    const fs_fault_row_t *table = fs_fault_table(&count);

    for (i = 0; i < count; ++i) {
        const fs_fault_row_t *r = &table[i];
        int32_t prov = fs_test_probe_prov(r);
        int32_t codes[2] = {r->code, r->code_last};
        int k;

        for (k = 0; k < 2; ++k) {
            const fs_fault_row_t *none = fs_test_classify(r->source, codes[k], prov, 0);

            cr_expect_eq(none->contexts, FS_FAULT_CTX_ANY, "%s with context 0 "
                         "reached context-specific row %s", r->name, none->name);
            for (c = 0; c < 2; ++c) {
                const fs_fault_row_t *alone = fs_test_classify(r->source, codes[k],
                                                               prov, cautious[c]);
                for (d = 0; d < 2; ++d) {
                    const fs_fault_row_t *mixed = fs_test_classify(
                        r->source, codes[k], prov, cautious[c] | death[d]);

                    cr_expect_eq(mixed, alone, "%s code %d ctx 0x%x: %s, but 0x%x "
                                 "alone: %s", r->name, codes[k], cautious[c] | death[d],
                                 mixed->name, cautious[c], alone->name);
                }
            }
        }
    }
}

Test(classify_table, prov_errno_is_ignored_outside_libfabric)
{
    cr_expect_eq(fs_test_classify(FS_FAULT_SRC_IBV_WC, IBV_WC_RETRY_EXC_ERR, 999,
                                  FS_FAULT_CTX_SLOW_LINK),
                 fs_test_classify(FS_FAULT_SRC_IBV_WC, IBV_WC_RETRY_EXC_ERR, 0,
                                  FS_FAULT_CTX_SLOW_LINK));
    cr_expect_eq(fs_test_classify(FS_FAULT_SRC_UCX, UCS_ERR_CONNECTION_RESET, -5,
                                  FS_FAULT_CTX_OP)->cls, FS_FAULT_PEER_FAILSTOP);
}

Test(classify_table, ofi_accepts_negative_return_codes)
{
    cr_expect_eq(fs_test_classify(FS_FAULT_SRC_OFI, -FI_EAGAIN, 0, FS_FAULT_CTX_OP),
                 fs_test_classify(FS_FAULT_SRC_OFI, FI_EAGAIN, 0, FS_FAULT_CTX_OP));
    cr_expect_eq(fs_test_cls(FS_FAULT_SRC_OFI, -FI_EAGAIN, 0, FS_FAULT_CTX_OP),
                 FS_FAULT_TRANSIENT);
    cr_expect_eq(fs_test_cls(FS_FAULT_SRC_OFI, -FI_ENOENT, 0, FS_FAULT_CTX_OP),
                 FS_FAULT_PEER_FAILSTOP, "sockets' -FI_ENOENT from a send");
}

Test(classify_table, invalid_source_is_local_not_null)
{
    const fs_fault_row_t *row = fs_fault_classify((fs_fault_source_t)42, 0, 0,
                                                  FS_FAULT_CTX_ANY);

    cr_assert_not_null(row);
    cr_expect_eq(row->cls, FS_FAULT_LOCAL_FATAL);
}

Test(classify_table, class_names)
{
    cr_expect_str_eq(fs_fault_class_name(FS_FAULT_NONE), "NONE");
    cr_expect_str_eq(fs_fault_class_name(FS_FAULT_PEER_FAILSTOP), "PEER_FAILSTOP");
    cr_expect_str_eq(fs_fault_class_name(FS_FAULT_PEER_SUSPECTED), "PEER_SUSPECTED");
    cr_expect_str_eq(fs_fault_class_name(FS_FAULT_FLUSH), "FLUSH");
    cr_expect_str_eq(fs_fault_class_name(FS_FAULT_LOCAL_FATAL), "LOCAL_FATAL");
    cr_expect_str_eq(fs_fault_class_name(FS_FAULT_TRANSIENT), "TRANSIENT");
    cr_expect_str_eq(fs_fault_class_name(FS_FAULT_USER_ERROR), "USER_ERROR");
    cr_expect_str_eq(fs_fault_class_name((fs_fault_class_t)(FS_FAULT_USER_ERROR + 1)),
                     "INVALID");
    cr_expect_str_eq(fs_fault_class_name((fs_fault_class_t)-1), "INVALID");
}

Test(classify_table, count_matches_the_returned_table)
{
    size_t count = 0;

    cr_expect_not_null(fs_fault_table(&count));
    cr_expect_gt(count, 100);
    cr_expect_eq(fs_fault_table(NULL), fs_fault_table(&count));
}

/* ---- 3. the decisions ------------------------------------------------------ */

#define FS_UCX_CLS(_code, _ctx) fs_test_cls(FS_FAULT_SRC_UCX, (_code), 0, (_ctx))
#define FS_OFI_CLS(_code, _prov, _ctx) \
    fs_test_cls(FS_FAULT_SRC_OFI, (_code), (_prov), (_ctx))
#define FS_WC_CLS(_code)    fs_test_cls(FS_FAULT_SRC_IBV_WC, (_code), 0, FS_FAULT_CTX_SLOW_LINK)
#define FS_ASYNC_CLS(_code) fs_test_cls(FS_FAULT_SRC_IBV_ASYNC, (_code), 0, FS_FAULT_CTX_SLOW_LINK)

/* A single-copy read between processes of a node: only a sender that no
 * longer exists is a failure; not being allowed to read, or reading an
 * address the sender does not have, is not blamed on it. */
Test(classify_cma, only_a_vanished_sender_is_a_failure)
{
    cr_expect_eq(fs_test_cls(FS_FAULT_SRC_CMA, ESRCH, 0, FS_FAULT_CTX_OP),
                 FS_FAULT_PEER_FAILSTOP);
    cr_expect_eq(fs_test_cls(FS_FAULT_SRC_CMA, EPERM, 0, FS_FAULT_CTX_OP),
                 FS_FAULT_LOCAL_FATAL);
    cr_expect_eq(fs_test_cls(FS_FAULT_SRC_CMA, EFAULT, 0, FS_FAULT_CTX_OP),
                 FS_FAULT_LOCAL_FATAL);
    cr_expect_eq(fs_test_cls(FS_FAULT_SRC_CMA, EIO, 0, FS_FAULT_CTX_OP),
                 FS_FAULT_LOCAL_FATAL);
}

Test(classify_ucx, endpoint_timeout_depends_on_the_link)
{
    /* tcp reports process death as -80 within ms; on IB it may be slowness */
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_ENDPOINT_TIMEOUT, FS_FAULT_CTX_OP), FS_FAULT_PEER_FAILSTOP);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_ENDPOINT_TIMEOUT, FS_FAULT_CTX_EP_ERROR), FS_FAULT_PEER_FAILSTOP);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_ENDPOINT_TIMEOUT, FS_FAULT_CTX_SLOW_LINK), FS_FAULT_PEER_SUSPECTED);
    /* a failed connect: refused (dead) and unreachable (network) alike */
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_ENDPOINT_TIMEOUT, FS_FAULT_CTX_EP_CREATE), FS_FAULT_FLUSH);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_ENDPOINT_TIMEOUT,
                            FS_FAULT_CTX_EP_ERROR | FS_FAULT_CTX_SLOW_LINK),
                 FS_FAULT_PEER_SUSPECTED);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_ENDPOINT_TIMEOUT, 0), FS_FAULT_PEER_SUSPECTED);
}

/* over TCP, ucp_ep_create connects at once: a peer that died during
 * wire-up refuses it (lifecycle test tf_life_wireup) */
Test(classify_ucx, unreachable_at_create_follows_the_peers_fate)
{
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_UNREACHABLE, FS_FAULT_CTX_EP_CREATE), FS_FAULT_FLUSH);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_UNREACHABLE, FS_FAULT_CTX_OP), FS_FAULT_PEER_SUSPECTED);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_UNREACHABLE, FS_FAULT_CTX_EP_ERROR), FS_FAULT_PEER_SUSPECTED);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_UNREACHABLE, FS_FAULT_CTX_SLOW_LINK), FS_FAULT_PEER_SUSPECTED);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_UNREACHABLE, 0), FS_FAULT_LOCAL_FATAL);
}

Test(classify_ucx, reset_and_disconnect_are_failstop_on_every_link)
{
    size_t c;

    for (c = 0; c < FS_ARRAY_LEN(fs_test_single_ctx); ++c) {
        cr_expect_eq(FS_UCX_CLS(UCS_ERR_CONNECTION_RESET, fs_test_single_ctx[c]),
                     FS_FAULT_PEER_FAILSTOP);
        cr_expect_eq(FS_UCX_CLS(UCS_ERR_NOT_CONNECTED, fs_test_single_ctx[c]),
                     FS_FAULT_PEER_FAILSTOP);
    }
}

Test(classify_ucx, ranges_and_simple_codes)
{
    cr_expect_eq(FS_UCX_CLS(UCS_OK, FS_FAULT_CTX_OP), FS_FAULT_NONE);
    cr_expect_eq(FS_UCX_CLS(UCS_INPROGRESS, FS_FAULT_CTX_OP), FS_FAULT_NONE);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_CANCELED, FS_FAULT_CTX_OP), FS_FAULT_FLUSH);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_IO_ERROR, FS_FAULT_CTX_OP), FS_FAULT_FLUSH);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_IO_ERROR, FS_FAULT_CTX_EP_ERROR), FS_FAULT_LOCAL_FATAL);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_IO_ERROR, FS_FAULT_CTX_OP | FS_FAULT_CTX_SLOW_LINK),
                 FS_FAULT_LOCAL_FATAL);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_NO_RESOURCE, FS_FAULT_CTX_OP), FS_FAULT_TRANSIENT);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_MESSAGE_TRUNCATED, FS_FAULT_CTX_OP), FS_FAULT_USER_ERROR);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_TIMED_OUT, FS_FAULT_CTX_OP), FS_FAULT_PEER_SUSPECTED);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_FIRST_LINK_FAILURE, FS_FAULT_CTX_OP), FS_FAULT_LOCAL_FATAL);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_LAST_LINK_FAILURE, FS_FAULT_CTX_OP), FS_FAULT_LOCAL_FATAL);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_FIRST_ENDPOINT_FAILURE, FS_FAULT_CTX_OP), FS_FAULT_PEER_SUSPECTED);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_ENDPOINT_TIMEOUT + 1, FS_FAULT_CTX_OP), FS_FAULT_PEER_SUSPECTED);
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_LAST_ENDPOINT_FAILURE, FS_FAULT_CTX_EP_ERROR), FS_FAULT_PEER_SUSPECTED);
}

Test(classify_ofi, canceled_follows_prov_errno)
{
    cr_expect_eq(FS_OFI_CLS(FI_ECANCELED, ENOTCONN, FS_FAULT_CTX_OP), FS_FAULT_PEER_FAILSTOP);
    cr_expect_eq(FS_OFI_CLS(FI_ECANCELED, ECONNRESET, FS_FAULT_CTX_EP_ERROR), FS_FAULT_PEER_FAILSTOP);
    cr_expect_eq(FS_OFI_CLS(FI_ECANCELED, EPIPE, FS_FAULT_CTX_OP), FS_FAULT_PEER_FAILSTOP);
    cr_expect_eq(FS_OFI_CLS(FI_ECANCELED, 5, FS_FAULT_CTX_OP), FS_FAULT_FLUSH);
    cr_expect_eq(FS_OFI_CLS(FI_ECANCELED, 0, FS_FAULT_CTX_OP), FS_FAULT_FLUSH);
    cr_expect_eq(FS_OFI_CLS(FI_ECANCELED, -FI_ECANCELED, FS_FAULT_CTX_OP), FS_FAULT_FLUSH);
    cr_expect_eq(FS_OFI_CLS(FI_ECANCELED, IBV_WC_WR_FLUSH_ERR, FS_FAULT_CTX_SLOW_LINK),
                 FS_FAULT_FLUSH);
    /* on a slow link prov_errno is not an errno: 107 means nothing there */
    cr_expect_eq(FS_OFI_CLS(FI_ECANCELED, ENOTCONN, FS_FAULT_CTX_SLOW_LINK), FS_FAULT_FLUSH);
}

Test(classify_ofi, eio_depends_on_provider_status)
{
    cr_expect_eq(FS_OFI_CLS(FI_EIO, -FI_EIO, FS_FAULT_CTX_OP), FS_FAULT_PEER_FAILSTOP);
    cr_expect_eq(FS_OFI_CLS(FI_EIO, -FI_EIO, FS_FAULT_CTX_SLOW_LINK), FS_FAULT_LOCAL_FATAL);
    cr_expect_eq(FS_OFI_CLS(FI_EIO, IBV_WC_RETRY_EXC_ERR, FS_FAULT_CTX_SLOW_LINK),
                 FS_FAULT_PEER_SUSPECTED);
    cr_expect_eq(FS_OFI_CLS(FI_EIO, IBV_WC_REM_OP_ERR, FS_FAULT_CTX_SLOW_LINK),
                 FS_FAULT_PEER_FAILSTOP);
    cr_expect_eq(FS_OFI_CLS(FI_EIO, IBV_WC_LOC_LEN_ERR, FS_FAULT_CTX_SLOW_LINK),
                 FS_FAULT_LOCAL_FATAL);
    cr_expect_eq(FS_OFI_CLS(FI_EIO, 26, FS_FAULT_CTX_SLOW_LINK), FS_FAULT_PEER_FAILSTOP,
                 "CXI C_RC_PTLTE_NOT_FOUND");
    cr_expect_eq(FS_OFI_CLS(FI_EIO, 0, FS_FAULT_CTX_OP), FS_FAULT_LOCAL_FATAL);
}

Test(classify_ofi, efa_and_cxi_codes)
{
    uint32_t s = FS_FAULT_CTX_SLOW_LINK;

    cr_expect_eq(FS_OFI_CLS(FI_ECONNABORTED, 8, s), FS_FAULT_PEER_FAILSTOP);
    cr_expect_eq(FS_OFI_CLS(FI_ECONNABORTED, 13, s), FS_FAULT_PEER_SUSPECTED);
    cr_expect_eq(FS_OFI_CLS(FI_ECONNABORTED, 4124, s), FS_FAULT_PEER_SUSPECTED);
    cr_expect_eq(FS_OFI_CLS(FI_ECONNABORTED, 4126, s), FS_FAULT_PEER_SUSPECTED);
    cr_expect_eq(FS_OFI_CLS(FI_ECONNABORTED, 0, FS_FAULT_CTX_OP), FS_FAULT_PEER_FAILSTOP);
    cr_expect_eq(FS_OFI_CLS(FI_ENOTCONN, 9, s), FS_FAULT_PEER_FAILSTOP);
    cr_expect_eq(FS_OFI_CLS(FI_ENOTCONN, 14, s), FS_FAULT_PEER_FAILSTOP);
    cr_expect_eq(FS_OFI_CLS(FI_ENOTCONN, 25, s), FS_FAULT_PEER_FAILSTOP, "CXI VNI_NOT_FOUND");
    cr_expect_eq(FS_OFI_CLS(FI_EHOSTUNREACH, 15, s), FS_FAULT_PEER_SUSPECTED);
    cr_expect_eq(FS_OFI_CLS(FI_EHOSTUNREACH, 2, s), FS_FAULT_PEER_SUSPECTED, "CXI UNDELIVERABLE");
    cr_expect_eq(FS_OFI_CLS(FI_ENORX, 10, s), FS_FAULT_TRANSIENT);
    cr_expect_eq(FS_OFI_CLS(FI_ECANCELED, 1, s), FS_FAULT_FLUSH);
    cr_expect_eq(FS_OFI_CLS(FI_ECANCELED, 4127, s), FS_FAULT_PEER_SUSPECTED);
}

Test(classify_ofi, simple_codes)
{
    cr_expect_eq(FS_OFI_CLS(FI_SUCCESS, 0, FS_FAULT_CTX_OP), FS_FAULT_NONE);
    cr_expect_eq(FS_OFI_CLS(FI_EAGAIN, 0, FS_FAULT_CTX_OP), FS_FAULT_TRANSIENT);
    cr_expect_eq(FS_OFI_CLS(FI_ENOTCONN, EPIPE, FS_FAULT_CTX_EP_ERROR), FS_FAULT_PEER_FAILSTOP);
    cr_expect_eq(FS_OFI_CLS(FI_ECONNRESET, 0, FS_FAULT_CTX_OP), FS_FAULT_PEER_FAILSTOP);
    cr_expect_eq(FS_OFI_CLS(FI_ESHUTDOWN, 0, FS_FAULT_CTX_EP_ERROR), FS_FAULT_PEER_FAILSTOP);
    cr_expect_eq(FS_OFI_CLS(FI_ETIMEDOUT, 0, FS_FAULT_CTX_EP_CREATE), FS_FAULT_PEER_SUSPECTED);
    cr_expect_eq(FS_OFI_CLS(FI_ENOENT, 0, FS_FAULT_CTX_OP), FS_FAULT_PEER_FAILSTOP);
    cr_expect_eq(FS_OFI_CLS(FI_ENOENT, 0, FS_FAULT_CTX_EP_CREATE), FS_FAULT_USER_ERROR);
    cr_expect_eq(FS_OFI_CLS(FI_ENETDOWN, 0, FS_FAULT_CTX_OP), FS_FAULT_LOCAL_FATAL);
    cr_expect_eq(FS_OFI_CLS(FI_ETRUNC, 0, FS_FAULT_CTX_OP), FS_FAULT_USER_ERROR);
}

Test(classify_ibv, completion_statuses)
{
    cr_expect_eq(FS_WC_CLS(IBV_WC_SUCCESS), FS_FAULT_NONE);
    cr_expect_eq(FS_WC_CLS(IBV_WC_WR_FLUSH_ERR), FS_FAULT_FLUSH);
    cr_expect_eq(FS_WC_CLS(IBV_WC_RETRY_EXC_ERR), FS_FAULT_PEER_SUSPECTED);
    cr_expect_eq(FS_WC_CLS(IBV_WC_RNR_RETRY_EXC_ERR), FS_FAULT_PEER_SUSPECTED);
    cr_expect_eq(FS_WC_CLS(IBV_WC_RESP_TIMEOUT_ERR), FS_FAULT_PEER_SUSPECTED);
    cr_expect_eq(FS_WC_CLS(IBV_WC_REM_OP_ERR), FS_FAULT_PEER_FAILSTOP);
    cr_expect_eq(FS_WC_CLS(IBV_WC_FATAL_ERR), FS_FAULT_LOCAL_FATAL);
    cr_expect_eq(FS_WC_CLS(IBV_WC_LOC_PROT_ERR), FS_FAULT_USER_ERROR);
}

Test(classify_ibv, async_events)
{
    cr_expect_eq(FS_ASYNC_CLS(IBV_EVENT_PORT_ERR), FS_FAULT_LOCAL_FATAL);
    cr_expect_eq(FS_ASYNC_CLS(IBV_EVENT_DEVICE_FATAL), FS_FAULT_LOCAL_FATAL);
    cr_expect_eq(FS_ASYNC_CLS(IBV_EVENT_QP_FATAL), FS_FAULT_LOCAL_FATAL);
    cr_expect_eq(FS_ASYNC_CLS(IBV_EVENT_SQ_DRAINED), FS_FAULT_FLUSH);
    cr_expect_eq(FS_ASYNC_CLS(IBV_EVENT_QP_LAST_WQE_REACHED), FS_FAULT_FLUSH);
    cr_expect_eq(FS_ASYNC_CLS(IBV_EVENT_PORT_ACTIVE), FS_FAULT_TRANSIENT);
    cr_expect_eq(FS_ASYNC_CLS(IBV_EVENT_COMM_EST), FS_FAULT_NONE);
}

/* The same IB timeout, seen raw, through libfabric verbs or through UCX
 * (which maps RETRY_EXC, RNR_RETRY_EXC and REM_ABORT to -80), is a
 * suspicion on every path. */
Test(classify_ibv, ib_timeouts_agree_across_sources)
{
    static const int32_t timeouts[] = {IBV_WC_RETRY_EXC_ERR,
                                       IBV_WC_RNR_RETRY_EXC_ERR,
                                       IBV_WC_REM_ABORT_ERR};
    size_t i;

    for (i = 0; i < FS_ARRAY_LEN(timeouts); ++i) {
        cr_expect_eq(FS_WC_CLS(timeouts[i]), FS_FAULT_PEER_SUSPECTED);
        cr_expect_eq(FS_OFI_CLS(FI_EIO, timeouts[i], FS_FAULT_CTX_SLOW_LINK),
                     FS_FAULT_PEER_SUSPECTED);
    }
    cr_expect_eq(FS_UCX_CLS(UCS_ERR_ENDPOINT_TIMEOUT, FS_FAULT_CTX_SLOW_LINK),
                 FS_FAULT_PEER_SUSPECTED);
}

/* ---- links to another host (FS_FAULT_CTX_CROSS_HOST, issue 40) ----------- */

typedef struct {
    fs_fault_source_t src;
    int32_t           code, prov;
    uint32_t          ctx;
} cross_case_t;

/* What reads as a death or a final suspicion on its own link kind follows
 * the peer's fate across hosts: the network gives it too. */
Test(classify_cross_host, ambiguous_statuses_follow_the_peers_fate)
{
    static const cross_case_t amb[] = {
        {FS_FAULT_SRC_UCX, UCS_ERR_CONNECTION_RESET, 0, FS_FAULT_CTX_EP_ERROR},
        {FS_FAULT_SRC_UCX, UCS_ERR_CONNECTION_RESET, 0, FS_FAULT_CTX_OP},
        {FS_FAULT_SRC_UCX, UCS_ERR_NOT_CONNECTED, 0, FS_FAULT_CTX_EP_ERROR},
        {FS_FAULT_SRC_UCX, UCS_ERR_ENDPOINT_TIMEOUT, 0, FS_FAULT_CTX_EP_ERROR},
        {FS_FAULT_SRC_UCX, UCS_ERR_ENDPOINT_TIMEOUT, 0, FS_FAULT_CTX_SLOW_LINK},
        {FS_FAULT_SRC_UCX, UCS_ERR_UNREACHABLE, 0, FS_FAULT_CTX_EP_ERROR},
        {FS_FAULT_SRC_UCX, UCS_ERR_TIMED_OUT, 0, FS_FAULT_CTX_OP},
        {FS_FAULT_SRC_UCX, -70, 0, FS_FAULT_CTX_EP_ERROR},
        {FS_FAULT_SRC_OFI, FI_ECONNRESET, 0, FS_FAULT_CTX_EP_ERROR},
        {FS_FAULT_SRC_OFI, FI_ENOTCONN, EPIPE, FS_FAULT_CTX_OP},
        {FS_FAULT_SRC_OFI, FI_ECANCELED, ENOTCONN, FS_FAULT_CTX_OP},
        {FS_FAULT_SRC_OFI, FI_EIO, -FI_EIO, FS_FAULT_CTX_OP},
        {FS_FAULT_SRC_OFI, FI_EIO, IBV_WC_RETRY_EXC_ERR, FS_FAULT_CTX_SLOW_LINK},
        {FS_FAULT_SRC_OFI, FI_ETIMEDOUT, 0, FS_FAULT_CTX_SLOW_LINK},
        {FS_FAULT_SRC_OFI, EPIPE, 0, FS_FAULT_CTX_EP_ERROR},
    };
    size_t i;

    for (i = 0; i < FS_ARRAY_LEN(amb); ++i) {
        const fs_fault_row_t *row = fs_test_classify(amb[i].src, amb[i].code, amb[i].prov,
                                                     amb[i].ctx);
        const fs_fault_row_t *cross = fs_fault_cross_host(row);

        cr_expect(fs_fault_is_peer(row->cls), "%s alone names the peer", row->name);
        cr_expect_eq(cross->cls, FS_FAULT_FLUSH, "%s across hosts: %s", row->name,
                     fs_fault_class_name(cross->cls));
        cr_expect_eq(fs_test_classify(amb[i].src, amb[i].code, amb[i].prov,
                                      amb[i].ctx | FS_FAULT_CTX_CROSS_HOST), cross);
    }
}

/* A refused connection and a fabric naming a destroyed portal are the
 * peer's host answering; local and user errors are not the network's. */
Test(classify_cross_host, answers_of_the_peers_host_and_local_errors_keep_their_reading)
{
    static const cross_case_t keep[] = {
        {FS_FAULT_SRC_UCX, UCS_ERR_REJECTED, 0, FS_FAULT_CTX_EP_ERROR},
        {FS_FAULT_SRC_UCX, UCS_ERR_NO_MEMORY, 0, FS_FAULT_CTX_OP},
        {FS_FAULT_SRC_UCX, UCS_ERR_MESSAGE_TRUNCATED, 0, FS_FAULT_CTX_OP},
        {FS_FAULT_SRC_OFI, FI_ECONNREFUSED, 0, FS_FAULT_CTX_EP_ERROR},
        {FS_FAULT_SRC_OFI, FI_EIO, 26, FS_FAULT_CTX_SLOW_LINK},
        {FS_FAULT_SRC_OFI, FI_EIO, IBV_WC_REM_OP_ERR, FS_FAULT_CTX_SLOW_LINK},
    };
    size_t i;

    for (i = 0; i < FS_ARRAY_LEN(keep); ++i) {
        const fs_fault_row_t *row = fs_test_classify(keep[i].src, keep[i].code, keep[i].prov,
                                                     keep[i].ctx);

        cr_expect_eq(fs_fault_cross_host(row), row, "%s", row->name);
    }
}

/* Rows for the modifier alone are cautious and come before every other
 * row of their code (the first match wins). */
Test(classify_cross_host, cross_host_rows_are_flush_and_first)
{
    size_t count, i, j;
    const fs_fault_row_t *table = fs_fault_table(&count);

    for (i = 0; i < count; ++i) {
        if (table[i].contexts != FS_FAULT_CTX_CROSS_HOST) {
            continue;
        }
        cr_expect_eq(table[i].cls, FS_FAULT_FLUSH, "%s", table[i].name);
        for (j = 0; j < i; ++j) {
            int overlap = (table[j].source == table[i].source) &&
                          (table[j].code <= table[i].code_last) &&
                          (table[i].code <= table[j].code_last) &&
                          (table[j].contexts & FS_FAULT_CTX_CROSS_HOST) &&
                          ((table[j].prov_errno == FS_FAULT_PROV_ANY) ||
                           (table[j].prov_errno == table[i].prov_errno));
            cr_expect(!overlap || (table[j].cls == FS_FAULT_FLUSH),
                      "row %zu %s comes before the cross-host row %zu", j,
                      table[j].name, i);
        }
    }
}
