/* mpitest.h: header-only helpers for the MPI integration tests.
 *
 * Written purely against the standard MPI API so every test can be validated
 * against any PML.  Conventions:
 *   - MPI_ERRORS_RETURN on MPI_COMM_WORLD (inherited by derived comms), every
 *     return code is checked with MT_CHECK();
 *   - failures print one diagnostic to stderr and MPI_Abort();
 *   - on success each rank prints exactly one stdout line
 *     "MPITEST OK <name> rank <r>/<size>" after MPI_Finalize returned.
 */
#ifndef MPITEST_H
#define MPITEST_H

#include <malloc.h>
#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Checks an MPI return code, recording where (the only control-flow macro). */
#define MT_CHECK(call) mt_check_rc((call), #call, __FILE__, __LINE__)
/* The current source location, passed explicitly to the mt_expect* calls. */
#define MT_HERE mt_at(__FILE__, __LINE__)

/* Where an assertion was made; passed explicitly to the mt_expect* calls. */
typedef struct {
    const char *file;
    int line;
} mt_loc;

struct mt_state {
    const char *name;
    int rank;
    int size;
};

static inline struct mt_state *mt_st(void)
{
    static struct mt_state st = { "?", -1, -1 };
    return &st;
}

static inline int mt_rank(void) { return mt_st()->rank; }
static inline int mt_size(void) { return mt_st()->size; }
static inline int mt_right(void) { return (mt_rank() + 1) % mt_size(); }
static inline int mt_left(void)
{
    return (mt_rank() + mt_size() - 1) % mt_size();
}

static inline mt_loc mt_at(const char *file, int line)
{
    mt_loc l = { file, line };
    return l;
}

__attribute__((noreturn, format(printf, 3, 0)))
static inline void mt_vfail(const char *file, int line, const char *fmt,
                            va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fprintf(stderr, "MPITEST FAIL %s rank %d/%d at %s:%d: %s\n",
            mt_st()->name, mt_rank(), mt_size(), file, line, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    abort(); /* MPI_Abort should not return */
}

__attribute__((noreturn, format(printf, 2, 3)))
static inline void mt_fail(mt_loc at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mt_vfail(at.file, at.line, fmt, ap);
}

__attribute__((format(printf, 3, 4)))
static inline void mt_expect(mt_loc at, int cond, const char *fmt, ...)
{
    va_list ap;
    if (cond)
        return;
    va_start(ap, fmt);
    mt_vfail(at.file, at.line, fmt, ap);
}

static inline const char *mt_errstr(int code, char *buf, size_t len)
{
    int n = 0;
    char tmp[MPI_MAX_ERROR_STRING];
    if (MPI_Error_string(code, tmp, &n) != MPI_SUCCESS)
        snprintf(tmp, sizeof tmp, "unknown error %d", code);
    snprintf(buf, len, "%s", tmp);
    return buf;
}

static inline int mt_errclass(int code)
{
    int cls = -1;
    if (MPI_Error_class(code, &cls) != MPI_SUCCESS)
        return -1;
    return cls;
}

static inline void mt_check_rc(int rc, const char *what, const char *file,
                               int line)
{
    char s[MPI_MAX_ERROR_STRING];
    if (rc == MPI_SUCCESS)
        return;
    mt_fail(mt_at(file, line), "%s returned %d (class %d): %s", what, rc,
            mt_errclass(rc), mt_errstr(rc, s, sizeof s));
}

/* Asserts that rc is an error of class cls (under MPI_ERRORS_RETURN). */
static inline void mt_expect_class(mt_loc at, int rc, int cls,
                                   const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    mt_expect(at, rc != MPI_SUCCESS && mt_errclass(rc) == cls,
              "%s: expected error class %d, got rc %d class %d (%s)", what,
              cls, rc, mt_errclass(rc),
              rc == MPI_SUCCESS ? "success" : mt_errstr(rc, s, sizeof s));
}

static inline void mt_setup(const char *name)
{
    struct mt_state *st = mt_st();
    st->name = name;
    MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &st->rank));
    MT_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &st->size));
    mt_expect(MT_HERE, st->size >= 2,
              "needs at least 2 ranks, got %d", st->size);
}

/* MT_MALLOC_PERTURB=N (run.sh, FS_TEST_PERTURB): glibc fills each new
 * allocation with a non-zero byte, so a field the library under test never
 * sets is garbage in every run.  Set here rather than by MALLOC_PERTURB_ in
 * the environment, which would reach the launcher too (PRRTE's option
 * parser fails under it). */
static inline void mt_perturb(void)
{
    const char *v = getenv("MT_MALLOC_PERTURB");

    if (v != NULL && atoi(v) > 0) {
        mallopt(M_PERTURB, atoi(v));
    }
}

static inline void mt_init(int *argc, char ***argv, const char *name)
{
    mt_perturb();
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "MPITEST FAIL %s: MPI_Init failed\n", name);
        exit(1);
    }
    mt_setup(name);
}

/* Returns the provided thread level. */
static inline int mt_init_thread(int *argc, char ***argv, const char *name,
                                 int required)
{
    int provided = MPI_THREAD_SINGLE;
    mt_perturb();
    if (MPI_Init_thread(argc, argv, required, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "MPITEST FAIL %s: MPI_Init_thread failed\n", name);
        exit(1);
    }
    mt_setup(name);
    return provided;
}

/* MPI_Finalize, then this rank's OK line; 1 if MPI_Finalize failed. */
static inline int mt_finalize_ok(void)
{
    int rc = MPI_Finalize();

    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "MPITEST FAIL %s rank %d: MPI_Finalize rc %d\n",
                mt_st()->name, mt_rank(), rc);
        return 1;
    }
    printf("MPITEST OK %s rank %d/%d\n", mt_st()->name, mt_rank(),
           mt_size());
    fflush(stdout);
    return 0;
}

/* Everything sent on MPI_COMM_WORLD must have been received: a visible
 * leftover means a duplicated or misrouted message.  Then finalize and
 * print the single OK line. */
static inline int mt_finish(void)
{
    int flag = 0;
    MPI_Status st;
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MT_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                        &st));
    mt_expect(MT_HERE, !flag,
              "leftover message on MPI_COMM_WORLD from %d tag %d",
              st.MPI_SOURCE, st.MPI_TAG);
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    return mt_finalize_ok();
}

/* Prints a skip notice (stderr) and still succeeds. */
static inline void mt_note(const char *msg)
{
    if (mt_rank() == 0)
        fprintf(stderr, "MPITEST NOTE %s: %s\n", mt_st()->name, msg);
}

/* ---- memory and time ---------------------------------------------------- */

static inline void *mt_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        mt_fail(MT_HERE, "malloc(%zu) failed", n);
    return p;
}

static inline void *mt_zalloc(size_t n)
{
    void *p = mt_malloc(n);
    memset(p, 0, n ? n : 1);
    return p;
}

/* Every rank's processor name (its host), MPI_MAX_PROCESSOR_NAME bytes
 * each in rank order; the caller frees it.  Collective on MPI_COMM_WORLD. */
static inline char *mt_host_names(void)
{
    char name[MPI_MAX_PROCESSOR_NAME] = {0}, *all;
    int len = 0;

    MT_CHECK(MPI_Get_processor_name(name, &len));
    all = mt_zalloc((size_t)mt_size() * MPI_MAX_PROCESSOR_NAME);
    MT_CHECK(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all,
                           MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD));
    return all;
}

static inline double mt_now(void) { return MPI_Wtime(); }

/* Only for the deliberate synchronous-send timing check. */
static inline void mt_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Completes *req by polling MPI_Test for at most secs seconds; a request
 * that should complete locally must not need anything from the peer. */
static inline void mt_test_until(mt_loc at, MPI_Request *req, MPI_Status *st,
                                 double secs, const char *what)
{
    int flag = 0;
    double end = mt_now() + secs;
    while (!flag) {
        MT_CHECK(MPI_Test(req, &flag, st));
        if (!flag && mt_now() > end)
            mt_fail(at, "%s: not complete after %.1f s", what, secs);
    }
}

/* ---- payload patterns --------------------------------------------------- */

/* Eight payload bytes (word w) of what (rank, iter) sends: position
 * dependent and not periodic, so shifted, swapped or stale chunks are all
 * detected.  Word based to keep multi-MiB fills cheap. */
static inline uint64_t mt_word(int rank, int iter, size_t w)
{
    uint64_t x = (uint64_t)w * 0x9e3779b97f4a7c15ull;
    x ^= (uint64_t)(uint32_t)rank * 0xbf58476d1ce4e5b9ull;
    x ^= (uint64_t)(uint32_t)iter * 0x94d049bb133111ebull;
    x ^= x >> 31;
    x *= 0xd6e8feb86659fd93ull;
    x ^= x >> 29;
    return x;
}

/* Byte i of the payload that (rank, iter) sends. */
static inline unsigned char mt_byte(int rank, int iter, size_t i)
{
    return (unsigned char)(mt_word(rank, iter, i / 8) >> (8 * (i % 8)));
}

static inline int mt_ival(int rank, int iter, size_t i)
{
    return (int)(mt_word(rank, iter + 0x10000, i) & 0x7fffffff);
}

static inline void mt_fill(void *buf, size_t n, int rank, int iter)
{
    unsigned char *b = buf;
    size_t w, nw = n / 8;
    for (w = 0; w < nw; w++) {
        uint64_t x = mt_word(rank, iter, w);
        for (int j = 0; j < 8; j++)
            b[8 * w + j] = (unsigned char)(x >> (8 * j));
    }
    for (size_t i = 8 * nw; i < n; i++)
        b[i] = mt_byte(rank, iter, i);
}

static inline void mt_verify(mt_loc at, const void *buf, size_t n, int rank,
                             int iter, const char *what)
{
    const unsigned char *b = buf;
    for (size_t w = 0; w < (n + 7) / 8; w++) {
        uint64_t x = mt_word(rank, iter, w);
        for (size_t i = 8 * w; i < n && i < 8 * w + 8; i++) {
            unsigned char want = (unsigned char)(x >> (8 * (i % 8)));
            if (b[i] != want)
                mt_fail(at, "%s: payload mismatch at byte %zu of %zu: got "
                        "0x%02x want 0x%02x (pattern rank %d iter %d)", what,
                        i, n, b[i], want, rank, iter);
        }
    }
}

/* Checks source, tag and element count (of type dt) of a status. */
static inline void mt_expect_status(mt_loc at, const MPI_Status *st, int src,
                                    int tag, MPI_Datatype dt, int count)
{
    int got = -1;
    MT_CHECK(MPI_Get_count(st, dt, &got));
    mt_expect(at, st->MPI_SOURCE == src && st->MPI_TAG == tag && got == count,
              "status: source %d tag %d count %d, expected %d/%d/%d",
              st->MPI_SOURCE, st->MPI_TAG, got, src, tag, count);
}

#endif /* MPITEST_H */
