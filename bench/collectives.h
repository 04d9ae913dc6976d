/* Shared by `mmpi-bench bcast|allreduce|barrier|alltoall|scatter|gather|allgather|reduce` and the Open MPI
 * baseline (mpicollectives.c) so that both measure and report alike: options,
 * iteration rule, what one timed call is, statistics (pingpong.h's), JSON.
 * Plain C, for mpicc, that C++ takes. See docs/guide/benchmarks.md.
 *
 * One timed call: every rank waits in an untimed barrier, reads CLOCK_MONOTONIC
 * (one clock for every process of the machine), makes the call, reads the
 * clock again, and the ranks' two readings are gathered to rank 0 (untimed).
 * bcast and scatter: from the root's start to the last rank's end; the root starts a
 * pause after the barrier (twice the median of recent untimed barriers,
 * struct cb_pause), so that every other rank already waits and a late exit
 * from the barrier is not counted as broadcast time. The others: from the
 * last rank's start to the last rank's end. The barrier before each call
 * keeps back-to-back calls from overlapping. */
#ifndef MMPI_BENCH_COLLECTIVES_H
#define MMPI_BENCH_COLLECTIVES_H

#include "pingpong.h"

#define CB_DEFAULT_SIZES "16,1024,65536,1048576"
#define CB_DEFAULT_ITERATIONS 200L
#define CB_BYTES_PER_SIZE (64UL << 20) /* a size's timed calls move at most this much per rank */
#define CB_MIN_ITERATIONS 3L
#define CB_MAX_TOPOLOGIES 6
#define CB_MAX_PER_RANK 64 /* --per-rank reports at most this many ranks */
#define CB_MAX_PER_RANK_VALUES (16L << 20) /* ranks x timed calls --per-rank keeps (128 MiB) */

enum cb_op { CB_BCAST, CB_ALLREDUCE, CB_BARRIER, CB_ALLTOALL, CB_SCATTER, CB_GATHER, CB_ALLGATHER, CB_REDUCE,
             CB_UNKNOWN };

static const char *const cb_op_names[CB_UNKNOWN] = {"bcast",   "allreduce", "barrier",   "alltoall",
                                                    "scatter", "gather",    "allgather", "reduce"};
static const char *const cb_topology_names[CB_MAX_TOPOLOGIES] = {"auto", "serial", "pipe", "binary", "binomial",
                                                                 "fibonacci"};

struct cb_options {
    enum cb_op op;
    /* bytes: the bcast message; the allreduce and reduce vector (doubles x 8); what alltoall
     * sends each peer, scatter each rank, and gather and allgather take from each rank */
    size_t sizes[PP_MAX_SIZES];
    int size_count;
    long iterations;
    int json;
    int per_rank; /* --per-rank: each rank's median end, and how often it ended last */
    int topologies[CB_MAX_TOPOLOGIES]; /* indexes into cb_topology_names */
    int topology_count;
};

static inline enum cb_op cb_op_from_name(const char *name)
{
    int i;
    for (i = 0; i < CB_UNKNOWN; ++i)
        if (strcmp(name, cb_op_names[i]) == 0)
            return (enum cb_op)i;
    return CB_UNKNOWN;
}

/* K timed calls, fewer for big messages (64 MiB per size), never fewer than 3. */
static inline long cb_iterations(size_t size, long k)
{
    long budget = size > 0 ? (long)(CB_BYTES_PER_SIZE / size) : k;
    long n = k < budget ? k : budget;
    return n > CB_MIN_ITERATIONS ? n : (k < CB_MIN_ITERATIONS ? k : CB_MIN_ITERATIONS);
}

/* Untimed calls first: a tenth, at least 1. */
static inline long cb_warmup(long iterations)
{
    return iterations / 10 > 1 ? iterations / 10 : 1;
}

static inline int cb_usage(const char *program, FILE *out, int status)
{
    fprintf(out,
            "usage: %s bcast|allreduce|barrier|alltoall|scatter|gather|allgather|reduce [--sizes N,N,...]\n"
            "       [--iterations K] [--topology auto|serial|pipe|binary|binomial|fibonacci|all[,...]]\n"
            "       [--per-rank] [--json]\n"
            "  --sizes       bytes: the bcast message, the allreduce and reduce vector (of doubles),\n"
            "                what alltoall sends each rank, scatter gives and gather and allgather take\n"
            "                per rank; 1 to %lu (default " CB_DEFAULT_SIZES "); barrier ignores it\n"
            "  --iterations  K, timed calls per size: max(%ld, min(K, %lu / size)) (default %ld)\n"
            "  --topology    bcast topologies to measure, a list or `all` (default auto)\n"
            "  --per-rank    also each rank's median time from the call's start to its own end, and\n"
            "                in how many calls it ended last (at most %d ranks)\n"
            "  --json        print one JSON line instead of a table\n",
            program, PP_MAX_MESSAGE, CB_MIN_ITERATIONS, CB_BYTES_PER_SIZE, CB_DEFAULT_ITERATIONS, CB_MAX_PER_RANK);
    return status;
}

static inline int cb_parse_sizes(const char *list, struct cb_options *o)
{
    char item[32];
    unsigned long size;
    o->size_count = 0;
    for (;;) {
        const char *comma = strchr(list, ',');
        size_t length = comma ? (size_t)(comma - list) : strlen(list);
        if (length >= sizeof item || o->size_count == PP_MAX_SIZES)
            return 0;
        memcpy(item, list, length);
        item[length] = '\0';
        if (!pp_parse_count(item, PP_MAX_MESSAGE, &size))
            return 0;
        o->sizes[o->size_count++] = size;
        if (!comma)
            return 1;
        list = comma + 1;
    }
}

static inline int cb_parse_topologies(const char *list, struct cb_options *o)
{
    char item[32];
    int i;
    o->topology_count = 0;
    if (strcmp(list, "all") == 0) {
        for (i = 0; i < CB_MAX_TOPOLOGIES; ++i)
            o->topologies[o->topology_count++] = i;
        return 1;
    }
    for (;;) {
        const char *comma = strchr(list, ',');
        size_t length = comma ? (size_t)(comma - list) : strlen(list);
        int found = -1;
        if (length >= sizeof item || o->topology_count == CB_MAX_TOPOLOGIES)
            return 0;
        memcpy(item, list, length);
        item[length] = '\0';
        for (i = 0; i < CB_MAX_TOPOLOGIES; ++i)
            if (strcmp(item, cb_topology_names[i]) == 0)
                found = i;
        if (found < 0)
            return 0;
        o->topologies[o->topology_count++] = found;
        if (!comma)
            return 1;
        list = comma + 1;
    }
}

/* argv[0] is the benchmark's name (bcast, ...). Returns PP_RUN, or the exit
 * status after --help (0) or a usage error (2). */
static inline int cb_parse_options(int argc, char **argv, const char *program, struct cb_options *o)
{
    unsigned long k = CB_DEFAULT_ITERATIONS;
    const char *value;
    int i, ok = 1;
    o->op = argc > 0 ? cb_op_from_name(argv[0]) : CB_UNKNOWN;
    o->json = 0;
    o->per_rank = 0;
    o->topologies[0] = 0;
    o->topology_count = 1;
    cb_parse_sizes(CB_DEFAULT_SIZES, o);
    for (i = 1; i < argc && ok; ++i) {
        if (strcmp(argv[i], "--json") == 0)
            o->json = 1;
        else if (strcmp(argv[i], "--per-rank") == 0)
            o->per_rank = 1;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return cb_usage(program, stdout, 0);
        else if ((value = pp_option_value(argc, argv, &i, "--sizes")))
            ok = cb_parse_sizes(value, o);
        else if ((value = pp_option_value(argc, argv, &i, "--iterations")))
            ok = pp_parse_count(value, 100000000UL, &k);
        else if ((value = pp_option_value(argc, argv, &i, "--topology")))
            ok = cb_parse_topologies(value, o);
        else
            ok = 0;
    }
    o->iterations = (long)k;
    if (!ok || o->op == CB_UNKNOWN) {
        fprintf(stderr, "%s: bad argument '%s'\n", program, ok ? (argc > 0 ? argv[0] : "") : argv[i - 1]);
        return cb_usage(program, stderr, 2);
    }
    if (o->op == CB_BARRIER) { /* one row, nothing to size */
        o->sizes[0] = 0;
        o->size_count = 1;
    }
    return PP_RUN;
}

#define CB_PAUSE_WINDOW 9

/* How long the bcast root waits after the barrier: twice the median duration
 * (µs) of the last CB_PAUSE_WINDOW untimed barriers it timed (CB_PAUSE_WINDOW
 * at the start, then the barrier before each warm-up call), set at the start
 * and again before each row's timed calls. Had the pause been fixed from
 * barriers at the start, another program starting beside the run (a shell
 * pipeline's interpreter) made it 4 ms instead of 0.16 and doubled every
 * 8-rank broadcast that ranks wait for by sleeping (docs/guide/benchmarks.md). */
struct cb_pause {
    double recent[CB_PAUSE_WINDOW];
    int count, next;
    double us;
};

static inline void cb_pause_record(struct cb_pause *p, double barrier_us)
{
    p->recent[p->next] = barrier_us;
    p->next = (p->next + 1) % CB_PAUSE_WINDOW;
    if (p->count < CB_PAUSE_WINDOW)
        ++p->count;
}

static inline void cb_pause_update(struct cb_pause *p)
{
    double sorted[CB_PAUSE_WINDOW];
    int i;
    if (p->count == 0)
        return;
    for (i = 0; i < p->count; ++i)
        sorted[i] = p->recent[i];
    qsort(sorted, (size_t)p->count, sizeof(double), pp_compare_doubles);
    p->us = 2 * sorted[p->count / 2];
}

/* The barrier before call `i` of a row with `warmup` untimed calls took
 * `barrier_us`: the warm-up calls' barriers count, and the first timed call
 * sets the pause for the rest. */
static inline void cb_pause_note(struct cb_pause *p, long i, long warmup, double barrier_us)
{
    if (i < warmup)
        cb_pause_record(p, barrier_us);
    else if (i == warmup)
        cb_pause_update(p);
}

/* Sleeps until pp_now_us() reaches `until` (a rank that sleeps yields its core). */
static inline void cb_pause_until(double until)
{
    double now;
    while ((now = pp_now_us()) < until) {
        double left = until - now;
        struct timespec t;
        t.tv_sec = (time_t)(left / 1e6);
        t.tv_nsec = (long)((left - (double)t.tv_sec * 1e6) * 1e3);
        nanosleep(&t, NULL);
    }
}

/* Whether the root's data starts the call (bcast, scatter): the root then
 * starts after the pause, and the call is timed from its start. */
static inline int cb_root_sends(enum cb_op op)
{
    return op == CB_BCAST || op == CB_SCATTER;
}

/* When a call starts (µs): rank `root`'s start for bcast and scatter, the last rank's for the others. */
static inline double cb_call_start(const struct cb_options *o, const double *starts, int ranks, int root)
{
    double first = cb_root_sends(o->op) ? starts[root] : starts[0];
    int r;
    for (r = 0; !cb_root_sends(o->op) && r < ranks; ++r)
        if (starts[r] > first)
            first = starts[r];
    return first;
}

/* The time of one call from every rank's start and end (µs). */
static inline double cb_elapsed(const struct cb_options *o, const double *starts, const double *ends, int ranks,
                                int root)
{
    double last = ends[0];
    int r;
    for (r = 1; r < ranks; ++r)
        if (ends[r] > last)
            last = ends[r];
    return last - cb_call_start(o, starts, ranks, root);
}

/* --per-rank: which ranks a call waits for. Each timed call's ends, less the
 * call's start, kept by rank (values[rank * capacity + call]), and the rank
 * that ended last. A broadcast whose last rank is always one sharing the
 * root's CPU waits for the CPU, not for the network. */
struct cb_per_rank {
    int ranks;
    long capacity, count;
    double *values;
    long last[CB_MAX_PER_RANK];
};

/* Whether --per-rank can keep every size's calls for `ranks` ranks; if not,
 * says why on stderr (when `say`). Every rank asks before the first call, so
 * that all of them stop together. */
static inline int cb_per_rank_fits(const struct cb_options *o, int ranks, const char *program, int say)
{
    long most = 0;
    int s;
    for (s = 0; s < o->size_count; ++s)
        if (cb_iterations(o->sizes[s], o->iterations) > most)
            most = cb_iterations(o->sizes[s], o->iterations);
    if (!o->per_rank || (ranks <= CB_MAX_PER_RANK && (long)ranks * most <= CB_MAX_PER_RANK_VALUES))
        return 1;
    if (say)
        fprintf(stderr, "%s: --per-rank keeps at most %d ranks and %ld values, not %d ranks x %ld calls\n", program,
                CB_MAX_PER_RANK, CB_MAX_PER_RANK_VALUES, ranks, most);
    return 0;
}

/* Without memory for the values the row goes without per-rank figures (said on stderr). */
static inline void cb_per_rank_begin(struct cb_per_rank *p, int ranks, long calls, const char *program)
{
    memset(p, 0, sizeof *p);
    p->values = (double *)malloc(sizeof(double) * (size_t)ranks * (size_t)(calls > 0 ? calls : 1));
    if (!p->values) {
        fprintf(stderr, "%s: --per-rank: no memory for %d ranks x %ld calls; this row goes without\n", program,
                ranks, calls);
        return;
    }
    p->ranks = ranks;
    p->capacity = calls;
}

static inline void cb_per_rank_add(struct cb_per_rank *p, const struct cb_options *o, const double *starts,
                                   const double *ends, int root)
{
    const double first = cb_call_start(o, starts, p->ranks, root);
    int r, slowest = 0;
    if (!p->values || p->count == p->capacity)
        return;
    for (r = 0; r < p->ranks; ++r) {
        p->values[(long)r * p->capacity + p->count] = ends[r] - first;
        if (ends[r] > ends[slowest])
            slowest = r;
    }
    ++p->last[slowest];
    ++p->count;
}

struct cb_row {
    size_t size;
    const char *topology; /* as asked ("" when not applicable) */
    const char *chosen;   /* what the root used most often ("" when not applicable) */
    struct pp_result result;
    int ranks_reported;   /* --per-rank: how many of the two below hold values (0 without it) */
    double rank_median_us[CB_MAX_PER_RANK];
    long rank_last[CB_MAX_PER_RANK];
};

/* Puts the per-rank medians and counts into `row` and frees the values. */
static inline void cb_per_rank_end(struct cb_per_rank *p, struct cb_row *row)
{
    int r;
    row->ranks_reported = p->values && p->count > 0 ? p->ranks : 0;
    for (r = 0; r < row->ranks_reported; ++r) {
        struct pp_result mine;
        pp_summarize(p->values + (long)r * p->capacity, p->count, row->size, &mine);
        row->rank_median_us[r] = mine.median_us;
        row->rank_last[r] = p->last[r];
    }
    free(p->values);
    p->values = NULL;
}

static inline void cb_print(const struct cb_options *o, const struct cb_row *rows, int count, const char *transport,
                            const char *link, int ranks)
{
    int i;
    if (o->json) {
        printf("{\"op\":\"%s\",\"transport\":\"%s\",", cb_op_names[o->op], transport);
        if (link && *link)
            printf("\"link\":\"%s\",", link);
        printf("\"ranks\":%d,\"results\":[", ranks);
        for (i = 0; i < count; ++i) {
            const struct cb_row *r = &rows[i];
            printf("%s{\"size\":%zu,", i ? "," : "", r->size);
            if (r->topology && *r->topology)
                printf("\"topology\":\"%s\",", r->topology);
            if (r->chosen && *r->chosen)
                printf("\"chosen\":\"%s\",", r->chosen);
            printf("\"iterations\":%ld,\"median_us\":%.3f,\"min_us\":%.3f,\"max_us\":%.3f", r->result.iterations,
                   r->result.median_us, r->result.min_us, r->result.max_us);
            if (r->ranks_reported > 0) {
                int k;
                printf(",\"per_rank\":[");
                for (k = 0; k < r->ranks_reported; ++k)
                    printf("%s{\"rank\":%d,\"median_us\":%.3f,\"last\":%ld}", k ? "," : "", k,
                           r->rank_median_us[k], r->rank_last[k]);
                printf("]");
            }
            printf("}");
        }
        printf("]}\n");
    } else {
        printf("%s over %s%s%s, %d ranks, microseconds per call\n", cb_op_names[o->op], transport,
               link && *link ? " " : "", link ? link : "", ranks);
        printf("%10s %10s %10s %10s %11s %11s %11s\n", "size", "topology", "chosen", "iterations", "median", "min",
               "max");
        for (i = 0; i < count; ++i) {
            const struct cb_row *r = &rows[i];
            printf("%10zu %10s %10s %10ld %11.2f %11.2f %11.2f\n", r->size,
                   r->topology && *r->topology ? r->topology : "-",
                   r->chosen && *r->chosen ? r->chosen : "-", r->result.iterations, r->result.median_us,
                   r->result.min_us, r->result.max_us);
            if (r->ranks_reported > 0) {
                int k;
                printf("%10s per rank, median end (calls it ended last):", "");
                for (k = 0; k < r->ranks_reported; ++k)
                    printf("%s %d: %.2f (%ld)", k ? "," : "", k, r->rank_median_us[k], r->rank_last[k]);
                printf("\n");
            }
        }
    }
    fflush(stdout);
}

#endif /* MMPI_BENCH_COLLECTIVES_H */
