/* The Open MPI baseline of `mmpi-bench bcast|allreduce|barrier|alltoall|
 * scatter|gather|allgather|reduce`: the same schedule, measurement and output
 * (collectives.h), with MPI_Bcast, MPI_Scatter and MPI_Gather of MPI_BYTE at
 * rank 0, MPI_Allreduce and MPI_Reduce of doubles (MPI_SUM), MPI_Barrier, and
 * MPI_Alltoall and MPI_Allgather of MPI_BYTE. Built by bench/collectives.sh with mpicc.
 *   mpirun -n 4 mpi-collectives bcast --sizes 16,1024 --json */
#include "collectives.h"

#include <mpi.h>

static int run(const struct cb_options *o, size_t size, void *buffer, void *result, int ranks)
{
    switch (o->op) {
    case CB_BCAST:
        return MPI_Bcast(buffer, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
    case CB_ALLREDUCE: {
        int count = size / 8 > 0 ? (int)(size / 8) : 1;
        return MPI_Allreduce(buffer, result, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    case CB_BARRIER:
        return MPI_Barrier(MPI_COMM_WORLD);
    case CB_ALLTOALL:
        return MPI_Alltoall(buffer, (int)size, MPI_BYTE, result, (int)size, MPI_BYTE, MPI_COMM_WORLD);
    case CB_SCATTER:
        return MPI_Scatter(buffer, (int)size, MPI_BYTE, result, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
    case CB_GATHER:
        return MPI_Gather(buffer, (int)size, MPI_BYTE, result, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
    case CB_ALLGATHER:
        return MPI_Allgather(buffer, (int)size, MPI_BYTE, result, (int)size, MPI_BYTE, MPI_COMM_WORLD);
    case CB_REDUCE: {
        int count = size / 8 > 0 ? (int)(size / 8) : 1;
        return MPI_Reduce(buffer, result, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    }
    default:
        (void)ranks;
        return MPI_ERR_OTHER;
    }
}

/* One barrier, its duration (µs) as this rank saw it. */
static double timed_barrier(void)
{
    double start = pp_now_us();
    MPI_Barrier(MPI_COMM_WORLD);
    return pp_now_us() - start;
}

int main(int argc, char **argv)
{
    struct cb_options o;
    struct cb_row rows[PP_MAX_SIZES];
    int rank, ranks, s, status, count = 0;
    size_t largest = 8;
    char *buffer, *result;
    double *times, *all;
    struct cb_pause pause = {{0}, 0, 0, 0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    status = cb_parse_options(argc - 1, argv + 1, "mpi-collectives", &o);
    if (status != PP_RUN) {
        MPI_Finalize();
        return status;
    }
    if (!cb_per_rank_fits(&o, ranks, "mpi-collectives", rank == 0)) {
        MPI_Finalize();
        return 2;
    }
    for (s = 0; s < o.size_count; ++s)
        largest = o.sizes[s] > largest ? o.sizes[s] : largest;
    buffer = calloc((size_t)ranks, largest);
    result = calloc((size_t)ranks, largest);
    times = malloc(sizeof(double) * (size_t)(o.iterations > CB_MIN_ITERATIONS ? o.iterations : CB_MIN_ITERATIONS));
    all = malloc(sizeof(double) * 2 * (size_t)ranks);
    if (!buffer || !result || !times || !all) {
        fprintf(stderr, "mpi-collectives: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (s = 0; s < CB_PAUSE_WINDOW; ++s)
        cb_pause_record(&pause, timed_barrier());
    cb_pause_update(&pause);
    for (s = 0; s < o.size_count; ++s) {
        size_t size = o.sizes[s];
        long timed = cb_iterations(size, o.iterations), warmup = cb_warmup(timed), i;
        struct cb_per_rank per_rank;
        memset(&per_rank, 0, sizeof per_rank);
        if (o.per_rank && rank == 0)
            cb_per_rank_begin(&per_rank, ranks, timed, "mpi-collectives");
        for (i = 0; i < warmup + timed; ++i) {
            double mine[2], *starts = all, *ends = all + ranks;
            int r;
            cb_pause_note(&pause, i, warmup, timed_barrier());
            if (cb_root_sends(o.op) && rank == 0)
                cb_pause_until(pp_now_us() + pause.us);
            mine[0] = pp_now_us();
            if (run(&o, size, buffer, result, ranks) != MPI_SUCCESS)
                MPI_Abort(MPI_COMM_WORLD, 1);
            mine[1] = pp_now_us();
            MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            if (rank != 0 || i < warmup)
                continue;
            /* all holds start, end pairs by rank: split them */
            {
                double pairs[2 * 256];
                for (r = 0; r < 2 * ranks && r < 2 * 256; ++r)
                    pairs[r] = all[r];
                for (r = 0; r < ranks && r < 256; ++r) {
                    starts[r] = pairs[2 * r];
                    ends[r] = pairs[2 * r + 1];
                }
            }
            times[i - warmup] = cb_elapsed(&o, starts, ends, ranks, 0);
            if (o.per_rank)
                cb_per_rank_add(&per_rank, &o, starts, ends, 0);
        }
        if (rank == 0) {
            rows[count].size = size;
            rows[count].topology = o.op == CB_BCAST || o.op == CB_ALLREDUCE ? "openmpi" : "";
            rows[count].chosen = "";
            pp_summarize(times, timed, size, &rows[count].result);
            rows[count].ranks_reported = 0;
            if (o.per_rank)
                cb_per_rank_end(&per_rank, &rows[count]);
            ++count;
        }
    }
    if (rank == 0)
        cb_print(&o, rows, count, "openmpi-tcp", "", ranks);
    free(buffer);
    free(result);
    free(times);
    free(all);
    MPI_Finalize();
    return 0;
}
