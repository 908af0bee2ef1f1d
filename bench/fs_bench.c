/*
 * fs_bench: failure-free point-to-point benchmark for comparing PMLs.
 *
 *   fs_bench latency|bw|bibw|mr [options]
 *
 * Methodology follows the OSU micro-benchmarks (ping-pong latency, windowed
 * bandwidth with a zero-byte ack, bidirectional windows, multi-pair message
 * rate) so numbers are comparable with stock osu_* runs on the same machine.
 * Rank 0 prints one "RESULT <test> <size> <value>" line per size on stdout and
 * nothing else; diagnostics go to stderr.
 *
 * Payloads are not checked inside the timed loop (that would measure memcmp),
 * but every size is verified once before warm-up and once after the timed
 * loop, so a broken PML cannot report fast garbage.
 */
#include <mpi.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 64
#define MAX_MSG   ((size_t)1 << 30) /* MPI counts are int; keep well below */
#define TAG_DATA  100
#define TAG_ACK   101
#define TAG_CHECK 102
#define FILL_SEND 'a'
#define FILL_RECV 'b'

typedef enum { T_LATENCY, T_BW, T_BIBW, T_MR } test_kind;

typedef struct {
    test_kind kind;
    const char *name;
    long iters, iters_large;    /* timed iterations: small sizes / floor */
    long warmup, warmup_large;  /* untimed iterations before timing */
    size_t threshold;           /* above it, counts shrink as 1/size */
    int window;                 /* messages in flight per window */
    size_t minsize, maxsize;
    size_t sizes[MAX_SIZES];
    int nsizes;
    int rank, nprocs;
    int npairs;                 /* senders are ranks [0, npairs) */
    size_t bufsize;
    char *sbuf, *rbuf;
    MPI_Request *reqs;
} bench_t;

static void usage(void)
{
    fputs("usage: fs_bench latency|bw|bibw|mr [options]\n"
          "  -i N     timed iterations for sizes <= threshold\n"
          "  -I N     minimum timed iterations for larger sizes\n"
          "  -w N     warm-up iterations for sizes <= threshold\n"
          "  -W N     minimum warm-up iterations for larger sizes\n"
          "  -t BYTES threshold (default 8192); above it counts scale as\n"
          "           N*threshold/size, never below the -I/-W floor\n"
          "  -n N     window size for bw/bibw/mr (default 64)\n"
          "  -x BYTES minimum size (default 0 latency, 1 bw/bibw, 8 mr)\n"
          "  -m BYTES maximum size (default 4M; mr: 8)\n"
          "  -s LIST  explicit comma-separated sizes, e.g. 8,64K,1M\n"
          "sizes accept K and M suffixes (KiB, MiB).\n"
          "output: RESULT <test> <bytes> <value> on rank 0's stdout;\n"
          "latency in us (one-way), bw/bibw in MB/s (1e6 B/s), mr in msgs/s\n",
          stderr);
}

/* Prints from rank 0 only: every rank parses the same argv, so all fail. */
static int arg_error(const bench_t *b, const char *msg, const char *arg)
{
    if (b->rank == 0) {
        fprintf(stderr, "fs_bench: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
        usage();
    }
    return -1;
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-')
        return -1;
    if (*end == 'k' || *end == 'K') {
        v <<= 10;
        end++;
    } else if (*end == 'm' || *end == 'M') {
        v <<= 20;
        end++;
    }
    if (*end != '\0' || v > MAX_MSG)
        return -1;
    *out = (size_t)v;
    return 0;
}

static int parse_count(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < 0 || v > INT_MAX)
        return -1;
    *out = v;
    return 0;
}

static int parse_list(bench_t *b, const char *list)
{
    char tmp[1024];
    if (strlen(list) >= sizeof tmp)
        return -1;
    strcpy(tmp, list);
    b->nsizes = 0;
    for (char *save = NULL, *tok = strtok_r(tmp, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (b->nsizes == MAX_SIZES || parse_size(tok, &b->sizes[b->nsizes]))
            return -1;
        b->nsizes++;
    }
    return b->nsizes > 0 ? 0 : -1;
}

/* 0 (if requested), then powers of two from max(min,1) up to max. */
static void make_sizes(bench_t *b)
{
    b->nsizes = 0;
    if (b->minsize == 0)
        b->sizes[b->nsizes++] = 0;
    for (size_t s = b->minsize ? b->minsize : 1; s <= b->maxsize && b->nsizes < MAX_SIZES;
         s *= 2)
        b->sizes[b->nsizes++] = s;
}

static void set_defaults(bench_t *b)
{
    b->threshold = 8192;
    b->window = 64;
    b->maxsize = (size_t)4 << 20;
    switch (b->kind) {
    case T_LATENCY:
        b->iters = 10000, b->warmup = 1000, b->iters_large = 100, b->warmup_large = 10;
        b->minsize = 0;
        break;
    case T_BW:
    case T_BIBW:
        /* OSU's 100 windows of tiny messages last < 1 ms: too noisy here */
        b->iters = 1000, b->warmup = 100, b->iters_large = 20, b->warmup_large = 4;
        b->minsize = 1;
        break;
    case T_MR:
        /* 4 ranks share 2 cores here: longer runs average out time slices */
        b->iters = 1000, b->warmup = 100, b->iters_large = 50, b->warmup_large = 5;
        b->minsize = 8, b->maxsize = 8;
        break;
    }
}

static int parse_test(bench_t *b, const char *name)
{
    static const struct { const char *name; test_kind kind; } tests[] = {
        { "latency", T_LATENCY }, { "bw", T_BW }, { "bibw", T_BIBW }, { "mr", T_MR },
    };
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        if (strcmp(name, tests[i].name) == 0) {
            b->kind = tests[i].kind;
            b->name = tests[i].name;
            return 0;
        }
    }
    return -1;
}

static int parse_opt(bench_t *b, int c, const char *arg, const char **list)
{
    long n = 0;
    switch (c) {
    case 'i': case 'I': case 'w': case 'W': case 'n':
        if (parse_count(arg, &n) || (c == 'n' && n < 1) ||
            ((c == 'i' || c == 'I') && n < 1))
            return arg_error(b, "bad count", arg);
        if (c == 'i') b->iters = n;
        if (c == 'I') b->iters_large = n;
        if (c == 'w') b->warmup = n;
        if (c == 'W') b->warmup_large = n;
        if (c == 'n') b->window = (int)n;
        return 0;
    case 't':
        return parse_size(arg, &b->threshold) ? arg_error(b, "bad size", arg) : 0;
    case 'x':
        return parse_size(arg, &b->minsize) ? arg_error(b, "bad size", arg) : 0;
    case 'm':
        return parse_size(arg, &b->maxsize) ? arg_error(b, "bad size", arg) : 0;
    case 's':
        *list = arg;
        return 0;
    default:
        return arg_error(b, "unknown option", NULL);
    }
}

static int parse_args(bench_t *b, int argc, char **argv)
{
    if (argc < 2 || parse_test(b, argv[1]))
        return arg_error(b, "first argument must be latency, bw, bibw or mr",
                         argc < 2 ? NULL : argv[1]);
    set_defaults(b);
    const char *list = NULL;
    int c;
    opterr = 0; /* we report errors ourselves, from rank 0 only */
    /* argv[1] (the test) plays argv[0] for getopt */
    while ((c = getopt(argc - 1, argv + 1, "i:I:w:W:t:n:x:m:s:h")) != -1) {
        if (c == 'h') {
            if (b->rank == 0)
                usage();
            return 1;
        }
        if (parse_opt(b, c, optarg, &list))
            return -1;
    }
    if (optind != argc - 1)
        return arg_error(b, "unexpected argument", argv[optind + 1]);
    if (list && parse_list(b, list))
        return arg_error(b, "bad size list", list);
    if (!list) {
        if (b->minsize > b->maxsize)
            return arg_error(b, "minimum size above maximum", NULL);
        make_sizes(b);
    }
    return 0;
}

static int check_layout(bench_t *b)
{
    if (b->nprocs < 2)
        return arg_error(b, "needs at least 2 ranks", NULL);
    if (b->kind == T_MR && b->nprocs % 2)
        return arg_error(b, "mr needs an even number of ranks", NULL);
    b->npairs = b->kind == T_MR ? b->nprocs / 2 : 1;
    return 0;
}

static int alloc_buffers(bench_t *b)
{
    b->bufsize = 1;
    for (int i = 0; i < b->nsizes; i++)
        if (b->sizes[i] > b->bufsize)
            b->bufsize = b->sizes[i];
    void *s = NULL, *r = NULL;
    /* page-aligned like OSU, so alignment is identical across configs */
    if (posix_memalign(&s, 4096, b->bufsize) || posix_memalign(&r, 4096, b->bufsize)) {
        fprintf(stderr, "fs_bench: rank %d: cannot allocate %zu bytes\n", b->rank,
                b->bufsize);
        return -1;
    }
    b->sbuf = s;
    b->rbuf = r;
    b->reqs = malloc(2 * (size_t)b->window * sizeof *b->reqs);
    if (!b->reqs)
        return -1;
    /* touch every page now so first-touch faults stay out of the timing */
    memset(b->sbuf, FILL_SEND, b->bufsize);
    memset(b->rbuf, FILL_RECV, b->bufsize);
    return 0;
}

/* -1 for ranks outside the pairs (extra ranks just join the barriers). */
static int peer_of(const bench_t *b)
{
    if (b->rank < b->npairs)
        return b->rank + b->npairs;
    if (b->rank < 2 * b->npairs)
        return b->rank - b->npairs;
    return -1;
}

static unsigned char pattern(size_t i, unsigned seed)
{
    return (unsigned char)((i * 131u + seed * 7u + (i >> 8)) & 0xff);
}

static void die_verify(const bench_t *b, size_t size, int from, const char *what,
                       long detail)
{
    fprintf(stderr,
            "fs_bench: rank %d: VERIFY FAILED: %s size %zu from rank %d: %s (%ld)\n",
            b->rank, b->name, size, from, what, detail);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* One checked message src -> dst: byte pattern, length, source and tag. */
static void verify_one(bench_t *b, size_t size, int src, int dst, unsigned seed)
{
    if (b->rank == src) {
        for (size_t i = 0; i < size; i++)
            b->sbuf[i] = (char)pattern(i, seed);
        MPI_Send(b->sbuf, (int)size, MPI_BYTE, dst, TAG_CHECK, MPI_COMM_WORLD);
        memset(b->sbuf, FILL_SEND, size);
    } else if (b->rank == dst) {
        MPI_Status st;
        int count = -1;
        memset(b->rbuf, (int)(~pattern(0, seed) & 0xff), size);
        MPI_Recv(b->rbuf, (int)size, MPI_BYTE, src, TAG_CHECK, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (count < 0 || (size_t)count != size)
            die_verify(b, size, src, "wrong length", count);
        if (st.MPI_SOURCE != src || st.MPI_TAG != TAG_CHECK)
            die_verify(b, size, src, "wrong source/tag", st.MPI_SOURCE);
        for (size_t i = 0; i < size; i++)
            if ((unsigned char)b->rbuf[i] != pattern(i, seed))
                die_verify(b, size, src, "payload mismatch at byte", (long)i);
        memset(b->rbuf, FILL_RECV, size);
    }
}

/* Checks every direction the test's timed loop uses. The seed depends only
 * on size, phase and the pair's sender, so both sides derive the same one. */
static void verify_size(bench_t *b, size_t size, unsigned phase)
{
    int peer = peer_of(b);
    if (peer < 0)
        return;
    int snd = b->rank < b->npairs ? b->rank : peer;
    int rcv = snd == b->rank ? peer : b->rank;
    unsigned seed = (unsigned)size * 3u + phase * 11u + (unsigned)snd;
    verify_one(b, size, snd, rcv, seed);
    if (b->kind == T_LATENCY || b->kind == T_BIBW)
        verify_one(b, size, rcv, snd, seed + 1u);
}

static double run_latency(bench_t *b, size_t size, long iters)
{
    int peer = peer_of(b);
    int n = (int)size;
    double t0 = MPI_Wtime();
    if (b->rank == 0) {
        for (long i = 0; i < iters; i++) {
            MPI_Send(b->sbuf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
            MPI_Recv(b->rbuf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        }
    } else if (b->rank == 1) {
        for (long i = 0; i < iters; i++) {
            MPI_Recv(b->rbuf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Send(b->sbuf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - t0;
}

/*
 * bw and mr: senders post a window of Isends, receivers a window of Irecvs
 * and answer with a zero-byte ack. As in OSU, one buffer serves the whole
 * window (a per-message buffer would need 64 x 4 MiB and change cache
 * behaviour); payload order is irrelevant here and checked elsewhere.
 */
static double run_window(bench_t *b, size_t size, long iters)
{
    int peer = peer_of(b);
    int n = (int)size, w = b->window;
    double t0 = MPI_Wtime();
    if (peer < 0)
        return 0.0;
    for (long i = 0; i < iters; i++) {
        if (b->rank < b->npairs) {
            for (int j = 0; j < w; j++)
                MPI_Isend(b->sbuf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD,
                          &b->reqs[j]);
            MPI_Waitall(w, b->reqs, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int j = 0; j < w; j++)
                MPI_Irecv(b->rbuf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD,
                          &b->reqs[j]);
            MPI_Waitall(w, b->reqs, MPI_STATUSES_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - t0;
}

/* Both ranks receive and send a full window at once; no ack needed. */
static double run_bibw(bench_t *b, size_t size, long iters)
{
    int peer = peer_of(b);
    int n = (int)size, w = b->window;
    double t0 = MPI_Wtime();
    if (peer < 0)
        return 0.0;
    for (long i = 0; i < iters; i++) {
        for (int j = 0; j < w; j++)
            MPI_Irecv(b->rbuf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &b->reqs[j]);
        for (int j = 0; j < w; j++)
            MPI_Isend(b->sbuf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD,
                      &b->reqs[w + j]);
        MPI_Waitall(2 * w, b->reqs, MPI_STATUSES_IGNORE);
    }
    return MPI_Wtime() - t0;
}

static double run_kernel(bench_t *b, size_t size, long iters)
{
    switch (b->kind) {
    case T_LATENCY:
        return run_latency(b, size, iters);
    case T_BIBW:
        return run_bibw(b, size, iters);
    case T_BW:
    case T_MR:
        break;
    }
    return run_window(b, size, iters);
}

/* Converts the slowest participant's time into the reported metric. */
static double metric(const bench_t *b, size_t size, long iters, double t)
{
    double msgs = (double)iters * b->window * b->npairs;
    if (t <= 0.0)
        return 0.0;
    switch (b->kind) {
    case T_LATENCY:
        return t * 1e6 / (2.0 * (double)iters);
    case T_BW:
        return (double)size * msgs / t / 1e6;
    case T_BIBW:
        return 2.0 * (double)size * msgs / t / 1e6;
    case T_MR:
        break;
    }
    return msgs / t;
}

/* Keeps bytes per timed loop roughly constant above the threshold, so large
 * sizes neither dominate the run time nor get a uselessly short loop. */
static long scaled(long n, long floor, size_t threshold, size_t size)
{
    if (size <= threshold)
        return n;
    double v = (double)n * (double)threshold / (double)size;
    return v > (double)floor ? (long)v : floor;
}

static void bench_size(bench_t *b, size_t size)
{
    long iters = scaled(b->iters, b->iters_large, b->threshold, size);
    long warmup = scaled(b->warmup, b->warmup_large, b->threshold, size);
    double t, tmax = 0.0;

    verify_size(b, size, 1);
    run_kernel(b, size, warmup);
    MPI_Barrier(MPI_COMM_WORLD);
    t = run_kernel(b, size, iters);
    /* slowest rank defines the rate (for mr: the last pair to finish) */
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    verify_size(b, size, 2); /* catches state the timed loop corrupted */
    if (b->rank == 0) {
        const char *fmt = b->kind == T_LATENCY ? "RESULT %s %zu %.3f\n"
                          : b->kind == T_MR    ? "RESULT %s %zu %.0f\n"
                                               : "RESULT %s %zu %.2f\n";
        printf(fmt, b->name, size, metric(b, size, iters, tmax));
        fflush(stdout); /* a later hang must not lose finished sizes */
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    bench_t b;
    memset(&b, 0, sizeof b);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.nprocs);

    int rc = parse_args(&b, argc, argv);
    if (rc || check_layout(&b)) {
        MPI_Finalize();
        return rc == 1 ? 0 : 2;
    }
    if (alloc_buffers(&b))
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < b.nsizes; i++)
        bench_size(&b, b.sizes[i]);

    free(b.reqs);
    free(b.sbuf);
    free(b.rbuf);
    MPI_Finalize();
    return 0;
}
