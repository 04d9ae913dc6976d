/* Shared by the ping-pong baselines (raw-, qt-, zmq- and mpi-pingpong) so that
 * they measure and report exactly like `mmpi-bench pingpong`: options, iteration
 * rule, schedule of round trips (or of one-way bursts), statistics, output, and
 * the parts of a two-process run. Plain C, for mpicc, that C++ takes. */
#ifndef MMPI_BENCH_PINGPONG_H
#define MMPI_BENCH_PINGPONG_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define PP_DEFAULT_SIZES "1,64,1024,65536,1048576,4194304"
#define PP_DEFAULT_ITERATIONS 1000L
#define PP_MIN_ITERATIONS 20L
#define PP_BYTES_PER_SIZE (64UL << 20) /* timed round trips of one size move at most this much */
#define PP_MAX_MESSAGE (256UL << 20)
#define PP_MAX_SIZES 64
#define PP_RUN (-1) /* pp_parse_options: go on and measure */
/* --oneway: messages per burst at most, the window of OSU's osu_bw ... */
#define PP_ONEWAY_WINDOW 64L
/* ... and fewer for big messages, so that a burst is this many bytes: a few
 * times what Linux's loopback socket buffers hold (tcp_wmem's 4 MiB), so the
 * one-byte reply that ends a burst costs little beside it. */
#define PP_ONEWAY_BURST_BYTES (16UL << 20)

struct pp_options {
    size_t sizes[PP_MAX_SIZES];
    int size_count;
    long iterations; /* K: timed round trips per size, before the rule below */
    int json;
    /* --oneway (set by the programs that take it, after pp_parse_options):
     * instead of round trips, bursts of pp_window() messages from rank 0 to
     * rank 1, each answered by one byte once rank 1 has all of it. */
    int oneway;
};

struct pp_result {
    size_t size;
    long iterations;
    long window; /* messages rank 0 sends per timed step: 1, or pp_window() */
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
    long window;    /* messages of this size rank 0 sends per step */
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

/* Messages per one-way burst of `size` bytes: PP_ONEWAY_WINDOW, fewer above
 * PP_ONEWAY_BURST_BYTES a burst, at least 1. */
static inline long pp_window(size_t size)
{
    long fit = (long)(PP_ONEWAY_BURST_BYTES / size);
    return fit < 1 ? 1 : fit < PP_ONEWAY_WINDOW ? fit : PP_ONEWAY_WINDOW;
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
    o->oneway = 0;
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

/* Takes a program's own flag (e.g. --oneway, --spin) out of argv before
 * pp_parse_options sees the rest; says whether it was there. */
static inline int pp_take_flag(int *argc, char **argv, const char *flag)
{
    int i, j, found = 0;
    for (i = j = 1; i < *argc; ++i) {
        if (strcmp(argv[i], flag) == 0)
            found = 1;
        else
            argv[j++] = argv[i];
    }
    *argc = j;
    argv[j] = NULL;
    return found;
}

static inline size_t pp_largest_size(const struct pp_options *o)
{
    size_t largest = 0;
    int i;
    for (i = 0; i < o->size_count; ++i)
        largest = o->sizes[i] > largest ? o->sizes[i] : largest;
    return largest;
}

/* A one-way burst counts as one step of window x size bytes in the iteration rule. */
static inline void pp_schedule_enter_size(struct pp_schedule *s)
{
    s->done = s->warmup = s->timed = 0;
    s->window = 1;
    if (s->index < s->options->size_count) {
        size_t size = s->options->sizes[s->index];
        s->window = s->options->oneway ? pp_window(size) : 1;
        s->timed = pp_iterations(size * (size_t)s->window, s->options->iterations);
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

/* Message size of the next step. */
static inline size_t pp_schedule_size(const struct pp_schedule *s)
{
    return s->options->sizes[s->index];
}

/* Size of the reply that ends the next step: the message back, or one byte
 * after a one-way burst. */
static inline size_t pp_reply_size(const struct pp_schedule *s)
{
    return s->options->oneway ? 1 : pp_schedule_size(s);
}

static inline int pp_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Statistics of n timed round trips of `size` bytes; MB/s (1e6 bytes) one
 * way: half a round trip carries `size` bytes. */
static inline void pp_summarize(double *times_us, long n, size_t size, struct pp_result *r)
{
    qsort(times_us, (size_t)n, sizeof(double), pp_compare_doubles);
    r->size = size;
    r->iterations = n;
    r->window = 1;
    r->min_us = times_us[0];
    r->max_us = times_us[n - 1];
    r->median_us = n % 2 ? times_us[n / 2] : (times_us[n / 2 - 1] + times_us[n / 2]) / 2;
    r->mbps = (double)size / (r->median_us / 2);
}

/* The same for the steps of the schedule's current size: with --oneway, a
 * burst, reply included, carries window x size bytes. */
static inline void pp_summarize_steps(struct pp_schedule *s, struct pp_result *r)
{
    pp_summarize(s->times_us, s->timed, pp_schedule_size(s), r);
    if (!s->options->oneway)
        return;
    r->window = s->window;
    r->mbps = (double)r->size * (double)r->window / r->median_us;
}

/* Counts one step (round trip or burst) of pp_schedule_size() bytes that took
 * `us` (the echo side passes 0) and moves on to the next size after the last one. */
static inline void pp_schedule_record(struct pp_schedule *s, double us)
{
    if (s->done >= s->warmup)
        s->times_us[s->done - s->warmup] = us;
    if (++s->done < s->warmup + s->timed)
        return;
    pp_summarize_steps(s, &s->results[s->index]);
    ++s->index;
    pp_schedule_enter_size(s);
}

/* "op" is "pingpong", or "oneway" with a "window" per result. */
static inline void pp_print_json(const struct pp_schedule *s, const char *transport)
{
    int i;
    printf("{\"op\":\"%s\",\"transport\":\"%s\",\"ranks\":2,\"results\":[",
           s->options->oneway ? "oneway" : "pingpong", transport);
    for (i = 0; i < s->options->size_count; ++i) {
        const struct pp_result *r = &s->results[i];
        printf("%s{\"size\":%zu,\"iterations\":%ld,", i ? "," : "", r->size, r->iterations);
        if (s->options->oneway)
            printf("\"window\":%ld,", r->window);
        /* %g for MB/s: a byte over a slow link is far below 0.001 MB/s */
        printf("\"median_us\":%.3f,\"min_us\":%.3f,\"max_us\":%.3f,\"mbps\":%.6g}",
               r->median_us, r->min_us, r->max_us, r->mbps);
    }
    printf("]}\n");
}

static inline void pp_print_table(const struct pp_schedule *s, const char *transport)
{
    int i;
    if (s->options->oneway)
        printf("one way over %s, 2 ranks, bursts of `window` messages and a 1-byte reply, in microseconds\n",
               transport);
    else
        printf("pingpong over %s, 2 ranks, round trips in microseconds\n", transport);
    printf("%10s %10s %7s %11s %11s %11s %11s\n", "size", "iterations", "window", "median", "min", "max", "MB/s");
    for (i = 0; i < s->options->size_count; ++i) {
        const struct pp_result *r = &s->results[i];
        printf("%10zu %10ld %7ld %11.2f %11.2f %11.2f %11.2f\n",
               r->size, r->iterations, r->window, r->median_us, r->min_us, r->max_us, r->mbps);
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

/* A connection to the other rank for the baselines that block in send and
 * receive (raw-, zmq-pingpong): each call moves one whole message of `size`
 * bytes. Nonzero stops the run; the call has said why (or thrown, in C++). */
struct pp_link {
    void *context;
    int (*send)(void *context, const char *data, size_t size);
    int (*receive)(void *context, char *data, size_t size);
};

/* One step from rank 0's side: window messages out, then the reply in. */
static inline int pp_link_ping(const struct pp_link *l, const struct pp_schedule *s, const char *out, char *in)
{
    long i;
    for (i = 0; i < s->window; ++i)
        if (l->send(l->context, out, pp_schedule_size(s)))
            return 1;
    return l->receive(l->context, in, pp_reply_size(s));
}

/* The same step from rank 1's side: every message in, then the reply out. */
static inline int pp_link_pong(const struct pp_link *l, const struct pp_schedule *s, char *buffer)
{
    long i;
    for (i = 0; i < s->window; ++i)
        if (l->receive(l->context, buffer, pp_schedule_size(s)))
            return 1;
    return l->send(l->context, buffer, pp_reply_size(s));
}

/* Walks the whole schedule over `l`: rank 0 (timing) times every step; out
 * and in hold pp_largest_size() bytes (rank 1 uses `in` only). */
static inline int pp_link_run(const struct pp_link *l, struct pp_schedule *s, int timing, const char *out, char *in)
{
    while (!pp_schedule_finished(s)) {
        double start = pp_now_us();
        if (timing ? pp_link_ping(l, s, out, in) : pp_link_pong(l, s, in))
            return 1;
        pp_schedule_record(s, timing ? pp_now_us() - start : 0);
    }
    return 0;
}

/* Rank 1 of the baselines that listen after fork() (qt-, zmq-pingpong) is made
 * here, and learns rank 0's port through a pipe. Returns fork()'s value, -1 on
 * failure; *port_pipe is the end this process keeps (write: rank 0, read: rank 1). */
static inline pid_t pp_fork_rank1(int *port_pipe)
{
    int ends[2];
    pid_t child;
    if (pipe(ends) != 0)
        return -1;
    child = fork();
    if (child < 0) {
        close(ends[0]);
        close(ends[1]);
        return -1;
    }
    close(ends[child == 0 ? 1 : 0]);
    *port_pipe = ends[child == 0 ? 0 : 1];
    return child;
}

/* Rank 0: tells rank 1 its port (0 when it could not listen: rank 1 gives up)
 * and closes the pipe. Returns 0 if the pipe took it. */
static inline int pp_tell_port(int port_pipe, unsigned short port)
{
    int told = write(port_pipe, &port, sizeof port) == (ssize_t)sizeof port;
    close(port_pipe);
    return told ? 0 : -1;
}

/* Rank 1: the port rank 0 listens on, or 0; closes the pipe. */
static inline unsigned short pp_learn_port(int port_pipe)
{
    unsigned short port = 0;
    if (read(port_pipe, &port, sizeof port) != (ssize_t)sizeof port)
        port = 0;
    close(port_pipe);
    return port;
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
