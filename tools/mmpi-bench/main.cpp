// mmpi-bench: MMPI's benchmarks, started by mmpirun on every rank, e.g.
//   mmpirun -n 2 --transport tcp mmpi-bench pingpong --sizes 1,1024 --json
// Rank 0 prints a table (or one JSON line with --json).
#include "bcastmodel.h"
#include "canvas.h"
#include "checkpoint.h"
#include "collectives.h"
#include "links.h"
#include "pingpong.h"
#include "stream.h"

#include <mmpi/world/world.h>

#include <QCoreApplication>

#include <cstdio>
#include <cstring>

namespace {

int usage(FILE *out, int status)
{
    std::fprintf(out,
                 "usage: mmpirun -n 2 [--transport local|tcp] mmpi-bench pingpong [--sizes N,N,...] "
                 "[--iterations K] [--json] [--qbytearray | --doubles] [--oneway]\n"
                 "       mmpirun -n N [--transport local|tcp|sim] mmpi-bench bcast|allreduce|barrier|alltoall|"
                 "scatter|gather|allgather|reduce [--topology T,...] [--sizes N,N,...] [--iterations K] [--json]\n"
                 "       mmpi-bench bcast-model [--ranks N] [--latency-ms L] [--rate B/s] [--sizes N,N,...] [--json]\n"
                 "       mmpirun -n 2 [--transport T] mmpi-bench stream [--count N] [--size BYTES] [--json]\n"
                 "       mmpi-bench checkpoint [--sizes 64K,1M,...] [--repeat N] [--dir DIR] [--json]\n"
                 "       mmpirun -n N [--transport T] mmpi-bench canvas [--frames F] [--primitives P] [--json]\n"
                 "       mmpirun -n N [--transport T] mmpi-bench links [--wait MS] [--json]\n"
                 "  pingpong   round-trip latency and one-way bandwidth between ranks 0 and 1; with\n"
                 "             --qbytearray the messages are QByteArrays (shared, never copied) instead of\n"
                 "             a buffer each receive copies into; with --doubles, doubles (size / 8 of them);\n"
                 "             with --oneway, bursts of up to 64 messages one way, each answered by a byte\n"
                 "  bcast      broadcast from rank 0 (per topology), allreduce (sum of doubles), barrier,\n"
                 "  alltoall   alltoall, scatter and gather (rank 0's), allgather and reduce (to rank 0):\n"
                 "             time until the last rank is done\n"
                 "  bcast-model the broadcast model's times over tcp on emulated links (no mmpirun)\n"
                 "             (MMPI_ALLREDUCE_ALGORITHM=recursive-doubling|ring|recursive-halving|reduce-bcast\n"
                 "             forces the allreduce's; `chosen`: what ran)\n"
                 "  stream     N numbered messages from rank 0 to rank 1, checked for loss, duplicates\n"
                 "             and order across reconnections (exits 1 if any)\n"
                 "  checkpoint k0 and k1 of a checkpoint per size, beside dd with fsync (no mmpirun)\n"
                 "  canvas     MMPE primitives per second broadcast to every rank, bytes per primitive\n"
                 "  links      how soon a fresh world knows each link's latency and its radio's rate\n"
                 "Run `mmpi-bench <benchmark> --help` for the options of a benchmark.\n");
    return status;
}

} // namespace

int main(int argc, char *argv[])
{
    if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)
        return usage(argc < 2 ? stderr : stdout, argc < 2 ? 2 : 0);
    const bool collective = mmpi::bench::isCollective(argv[1]);
    const bool stream = std::strcmp(argv[1], "stream") == 0;
    const bool checkpoint = std::strcmp(argv[1], "checkpoint") == 0;
    const bool canvas = std::strcmp(argv[1], "canvas") == 0;
    const bool model = std::strcmp(argv[1], "bcast-model") == 0;
    const bool links = std::strcmp(argv[1], "links") == 0;
    if (std::strcmp(argv[1], "pingpong") != 0 && !collective && !stream && !checkpoint && !canvas && !model && !links) {
        std::fprintf(stderr, "mmpi-bench: unknown benchmark '%s'\n", argv[1]);
        return usage(stderr, 2);
    }
    QCoreApplication app(argc, argv);
    if (checkpoint)
        return mmpi::bench::runCheckpoint(argc - 1, argv + 1);
    if (model)
        return mmpi::bench::runBcastModel(argc - 1, argv + 1);
    const auto config = mmpi::WorldConfig::fromEnvironment();
    if (!config) {
        // --help works outside mmpirun too.
        for (int i = 2; i < argc; ++i)
            if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0)
                return canvas       ? mmpi::bench::runCanvas({}, argc - 1, argv + 1, {}, {})
                       : links      ? mmpi::bench::runLinks(nullptr, {}, argc - 1, argv + 1, {})
                       : stream     ? mmpi::bench::runStream(nullptr, {}, argc - 1, argv + 1, {})
                       : collective ? mmpi::bench::runCollective({}, argc - 1, argv + 1, {}, {})
                                    : mmpi::bench::runPingPong({}, argc - 1, argv + 1, {});
        std::fprintf(stderr, "mmpi-bench: %s\nStart it with mmpirun, e.g.: mmpirun -n 2 mmpi-bench pingpong\n",
                     qPrintable(config.error().message));
        return 2;
    }
    mmpi::World world;
    const auto comm = mmpi::Communicator::world(world);
    world.form(*config);
    if (auto formed = world.waitForFormed(); !formed) {
        std::fprintf(stderr, "mmpi-bench: %s\n", qPrintable(formed.error().toString()));
        return 1;
    }
    const QString link = config->transport == QLatin1String("sim")
                             ? config->transportOptions.value(QStringLiteral("link"), QStringLiteral("bluetooth")).toString()
                             : QString();
    const int status = canvas ? mmpi::bench::runCanvas(*comm, argc - 1, argv + 1, config->transport, link)
                       : links  ? mmpi::bench::runLinks(&world, *comm, argc - 1, argv + 1, config->transport)
                       : stream ? mmpi::bench::runStream(&world, *comm, argc - 1, argv + 1, config->transport)
                       : collective ? mmpi::bench::runCollective(*comm, argc - 1, argv + 1, config->transport, link)
                                    : mmpi::bench::runPingPong(*comm, argc - 1, argv + 1, config->transport);
    // Leave cleanly: the peer may still be receiving our last message.
    world.closeAndWait();
    return status;
}
