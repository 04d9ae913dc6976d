/* Shared by the ping-pong baselines (raw-, qt- and mpi-pingpong) so that they
 * measure and report exactly like `mmpi-bench pingpong`: options, iteration rule,
 * schedule of round trips, statistics, output. Plain C, for mpicc, that C++ takes. */
#ifndef MMPI_BENCH_PINGPONG_H
#define MMPI_BENCH_PINGPONG_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/types.h>
#include <sys/wait.h>

#define PP_DEFAULT_SIZES "1,64,1024,65536,1048576,4194304"
#define PP_DEFAULT_ITERATIONS 1000L
#define PP_MIN_ITERATIONS 20L
#define PP_BYTES_PER_SIZE (64UL << 20) /* timed round trips of one size move at most this much */
#define PP_MAX_MESSAGE (256UL << 20)
#define PP_MAX_SIZES 64
#define PP_RUN (-1) /* pp_parse_options: go on and measure */

struct pp_options {
    size_t sizes[PP_MAX_SIZES];
    int size_count;
    long iterations; /* K: timed round trips per size, before the rule below */
    int json;
};

struct pp_result {
    size_t size;
    long iterations;
    double median_us, min_us, max_us, mbps;
};

/* Which round trip comes next. Both sides of a baseline walk the same schedule,
 * so the echo side knows every message size without a header on the wire. */
struct pp_schedule {
    const struct pp_options *options;
    int index;      /* into options->sizes */
    long done;      /* round trips of this size so far, warm-up included */
    long warmup;
    long timed;
    double *times_us;
    struct pp_result results[PP_MAX_SIZES];
};

/* The iteration rule of every implementation: K round trips, fewer for big
 * messages (64 MiB per size at most), but never fewer than 20. */
static inline long pp_iterations(size_t size, long k)
{
    long budget = (long)(PP_BYTES_PER_SIZE / size);
    long n = k < budget ? k : budget;
    return n > PP_MIN_ITERATIONS ? n : PP_MIN_ITERATIONS;
}

/* Untimed round trips before the timed ones of each size: a tenth, at least 2. */
static inline long pp_warmup(long iterations)
{
    return iterations / 10 > 2 ? iterations / 10 : 2;
}

/* CLOCK_MONOTONIC: the clock behind std::chrono::steady_clock on Linux. */
static inline double pp_now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static inline int pp_parse_count(const char *text, unsigned long max, unsigned long *value)
{
    char *end = NULL;
    errno = 0;
    *value = strtoul(text, &end, 10);
    return errno == 0 && end != text && *end == '\0' && text[0] != '-' && *value >= 1 && *value <= max;
}

static inline int pp_parse_sizes(const char *list, struct pp_options *o)
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

static inline int pp_usage(const char *program, FILE *out, int status)
{
    fprintf(out,
            "usage: %s [--sizes N,N,...] [--iterations K] [--json]\n"
            "  --sizes       message sizes in bytes, 1 to %lu (default " PP_DEFAULT_SIZES ")\n"
            "  --iterations  K, timed round trips per size: max(%ld, min(K, %lu / size)) (default %ld)\n"
            "  --json        print one JSON line instead of a table\n",
            program, PP_MAX_MESSAGE, PP_MIN_ITERATIONS, PP_BYTES_PER_SIZE, PP_DEFAULT_ITERATIONS);
    return status;
}

/* The value of option `name` at argv[*i], given as "--name value" or "--name=value". */
static inline const char *pp_option_value(int argc, char **argv, int *i, const char *name)
{
    size_t length = strlen(name);
    if (strncmp(argv[*i], name, length) != 0)
        return NULL;
    if (argv[*i][length] == '=')
        return argv[*i] + length + 1;
    if (argv[*i][length] == '\0' && *i + 1 < argc)
        return argv[++*i];
    return NULL;
}

/* Returns PP_RUN, or the exit status after --help (0) or a usage error (2). */
static inline int pp_parse_options(int argc, char **argv, struct pp_options *o)
{
    unsigned long k = PP_DEFAULT_ITERATIONS;
    const char *value;
    int i, ok = 1;
    o->json = 0;
    pp_parse_sizes(PP_DEFAULT_SIZES, o);
    for (i = 1; i < argc && ok; ++i) {
        if (strcmp(argv[i], "--json") == 0)
            o->json = 1;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return pp_usage(argv[0], stdout, 0);
        else if ((value = pp_option_value(argc, argv, &i, "--sizes")))
            ok = pp_parse_sizes(value, o);
        else if ((value = pp_option_value(argc, argv, &i, "--iterations")))
            ok = pp_parse_count(value, 100000000UL, &k);
        else
            ok = 0;
    }
    o->iterations = (long)k;
    if (!ok) {
        fprintf(stderr, "%s: bad argument '%s'\n", argv[0], argv[i - 1]);
        return pp_usage(argv[0], stderr, 2);
    }
    return PP_RUN;
}

static inline size_t pp_largest_size(const struct pp_options *o)
{
    size_t largest = 0;
    int i;
    for (i = 0; i < o->size_count; ++i)
        largest = o->sizes[i] > largest ? o->sizes[i] : largest;
    return largest;
}

static inline void pp_schedule_enter_size(struct pp_schedule *s)
{
    s->done = s->warmup = s->timed = 0;
    if (s->index < s->options->size_count) {
        s->timed = pp_iterations(s->options->sizes[s->index], s->options->iterations);
        s->warmup = pp_warmup(s->timed);
    }
}

/* Returns 0 when out of memory. */
static inline int pp_schedule_start(struct pp_schedule *s, const struct pp_options *o)
{
    long most = o->iterations > PP_MIN_ITERATIONS ? o->iterations : PP_MIN_ITERATIONS;
    s->options = o;
    s->index = 0;
    s->times_us = (double *)malloc((size_t)most * sizeof(double));
    pp_schedule_enter_size(s);
    return s->times_us != NULL;
}

static inline void pp_schedule_free(struct pp_schedule *s)
{
    free(s->times_us);
    s->times_us = NULL;
}

static inline int pp_schedule_finished(const struct pp_schedule *s)
{
    return s->index >= s->options->size_count;
}

/* Message size of the next round trip. */
static inline size_t pp_schedule_size(const struct pp_schedule *s)
{
    return s->options->sizes[s->index];
}

static inline int pp_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline void pp_summarize(double *times_us, long n, size_t size, struct pp_result *r)
{
    qsort(times_us, (size_t)n, sizeof(double), pp_compare_doubles);
    r->size = size;
    r->iterations = n;
    r->min_us = times_us[0];
    r->max_us = times_us[n - 1];
    r->median_us = n % 2 ? times_us[n / 2] : (times_us[n / 2 - 1] + times_us[n / 2]) / 2;
    r->mbps = (double)size / (r->median_us / 2); /* one way, MB = 1e6 bytes */
}

/* Counts one round trip of pp_schedule_size() bytes that took `us` (the echo
 * side passes 0) and moves on to the next size after the last one. */
static inline void pp_schedule_record(struct pp_schedule *s, double us)
{
    if (s->done >= s->warmup)
        s->times_us[s->done - s->warmup] = us;
    if (++s->done < s->warmup + s->timed)
        return;
    pp_summarize(s->times_us, s->timed, pp_schedule_size(s), &s->results[s->index]);
    ++s->index;
    pp_schedule_enter_size(s);
}

static inline void pp_print_json(const struct pp_schedule *s, const char *transport)
{
    int i;
    printf("{\"op\":\"pingpong\",\"transport\":\"%s\",\"ranks\":2,\"results\":[", transport);
    for (i = 0; i < s->options->size_count; ++i) {
        const struct pp_result *r = &s->results[i];
        /* %g for MB/s: a byte over a slow link is far below 0.001 MB/s */
        printf("%s{\"size\":%zu,\"iterations\":%ld,\"median_us\":%.3f,\"min_us\":%.3f,"
               "\"max_us\":%.3f,\"mbps\":%.6g}",
               i ? "," : "", r->size, r->iterations, r->median_us, r->min_us, r->max_us, r->mbps);
    }
    printf("]}\n");
}

static inline void pp_print_table(const struct pp_schedule *s, const char *transport)
{
    int i;
    printf("pingpong over %s, 2 ranks, round trips in microseconds\n", transport);
    printf("%10s %10s %11s %11s %11s %11s\n", "size", "iterations", "median", "min", "max", "MB/s");
    for (i = 0; i < s->options->size_count; ++i) {
        const struct pp_result *r = &s->results[i];
        printf("%10zu %10ld %11.2f %11.2f %11.2f %11.2f\n",
               r->size, r->iterations, r->median_us, r->min_us, r->max_us, r->mbps);
    }
}

static inline void pp_print(const struct pp_schedule *s, const char *transport)
{
    if (s->options->json)
        pp_print_json(s, transport);
    else
        pp_print_table(s, transport);
    fflush(stdout);
}

/* Waits for the forked rank 1 and returns the job's status: rank 0's, or else rank 1's. */
static inline int pp_wait_child(pid_t child, int status)
{
    int child_status = 0;
    pid_t waited;
    do
        waited = waitpid(child, &child_status, 0);
    while (waited < 0 && errno == EINTR);
    if (status != 0)
        return status;
    return waited == child && WIFEXITED(child_status) ? WEXITSTATUS(child_status) : 1;
}

#endif /* MMPI_BENCH_PINGPONG_H */
