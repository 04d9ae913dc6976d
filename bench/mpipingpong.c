/* mpi-pingpong: the Open MPI reference for mmpi-bench pingpong, with
 * MPI_Send/MPI_Recv of MPI_BYTE between ranks 0 and 1. bench/pingpong.sh builds
 * it with mpicc and runs it with mpirun -n 2. See docs/guide/benchmarks.md. */
#include "pingpong.h"

#include <mpi.h>

/* Rank 0: times every round trip of the schedule. */
static void ping(struct pp_schedule *s, char *out, char *in)
{
    while (!pp_schedule_finished(s)) {
        int size = (int)pp_schedule_size(s);
        double start = pp_now_us();
        MPI_Send(out, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(in, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        pp_schedule_record(s, pp_now_us() - start);
    }
}

/* Rank 1: sends every message back. */
static void pong(struct pp_schedule *s, char *buffer)
{
    while (!pp_schedule_finished(s)) {
        int size = (int)pp_schedule_size(s);
        MPI_Recv(buffer, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buffer, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        pp_schedule_record(s, 0);
    }
}

static int run(const struct pp_options *options, int rank)
{
    struct pp_schedule schedule;
    int started = pp_schedule_start(&schedule, options);
    size_t largest = pp_largest_size(options);
    char *out = (char *)malloc(largest);
    char *in = (char *)calloc(largest, 1);
    if (!started || !out || !in) {
        fprintf(stderr, "mpi-pingpong: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(out, 'x', largest);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        ping(&schedule, out, in);
        pp_print(&schedule, "openmpi");
    } else {
        pong(&schedule, in);
    }
    pp_schedule_free(&schedule);
    free(out);
    free(in);
    return 0;
}

int main(int argc, char **argv)
{
    struct pp_options options;
    int rank, size, status;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    status = pp_parse_options(argc, argv, &options);
    if (status == PP_RUN && size != 2) {
        if (rank == 0)
            fprintf(stderr, "mpi-pingpong: needs exactly 2 ranks (mpirun -n 2), not %d\n", size);
        status = 2;
    }
    if (status == PP_RUN)
        status = run(&options, rank);
    MPI_Finalize();
    return status;
}
