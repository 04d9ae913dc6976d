#include "collectives.h"

#include "../../bench/collectives.h"

#include <mmpi/comm/tuning.h>

#include <QByteArray>
#include <QHash>

#include <cstdio>
#include <vector>

namespace mmpi::bench {

namespace {

// What the root's last call chose: the bcast's topology, the allreduce's
// algorithm (MMPI_ALLREDUCE_ALGORITHM forces one); empty for the others.
QString chosenName(const Communicator &comm, cb_op op)
{
    if (op == CB_BCAST)
        if (const auto plan = lastBcastPlan(comm))
            return bcastTopologyName(plan->topology);
    if (op == CB_ALLREDUCE)
        if (const auto algorithm = lastAllreduceAlgorithm(comm))
            return allreduceAlgorithmName(*algorithm);
    return {};
}

struct Call
{
    const Communicator &comm;
    const cb_options &options;
    size_t size;
    BcastOptions bcast;
    QByteArray message;    // bcast, at the root
    QList<double> vector;  // allreduce, reduce
    QList<quint8> blocks;  // alltoall; scatter at the root; gather and allgather, this rank's

    Call(const Communicator &c, const cb_options &o, size_t s, BcastTopology t) : comm(c), options(o), size(s)
    {
        bcast.topology = t;
        if (o.op == CB_BCAST && c.rank() == 0)
            message = QByteArray(qsizetype(s), 'x');
        if (o.op == CB_ALLREDUCE || o.op == CB_REDUCE)
            vector = QList<double>(qMax<qsizetype>(1, qsizetype(s) / 8), 1.0 + c.rank());
        if (o.op == CB_ALLTOALL || (o.op == CB_SCATTER && c.rank() == 0))
            blocks = QList<quint8>(qsizetype(s) * c.size(), quint8(c.rank()));
        if (o.op == CB_GATHER || o.op == CB_ALLGATHER)
            blocks = QList<quint8>(qsizetype(s), quint8(c.rank()));
    }

    // What a rank that gathered holds: `size` bytes from every rank, in rank order.
    Result<void> checkGathered(const QList<quint8> &got) const
    {
        if (got.size() != qsizetype(size) * comm.size())
            return Error{ErrorCode::CountMismatch,
                         QStringLiteral("%1 gave %2 bytes, not %3").arg(QLatin1StringView(cb_op_names[options.op]))
                             .arg(got.size()).arg(qsizetype(size) * comm.size())};
        for (int r = 0; r < comm.size(); ++r)
            if (got.at(qsizetype(r) * qsizetype(size)) != quint8(r))
                return Error{ErrorCode::CountMismatch, QStringLiteral("%1 put rank %2's bytes out of place")
                                                           .arg(QLatin1StringView(cb_op_names[options.op])).arg(r)};
        return success();
    }

    Result<void> run() const
    {
        switch (options.op) {
        case CB_BCAST: {
            auto got = comm.bcast(message, 0, bcast).wait();
            if (!got)
                return got.error();
            if (size_t(got->size()) != size)
                return Error{ErrorCode::CountMismatch, QStringLiteral("bcast delivered %1 bytes, not %2").arg(got->size()).arg(size)};
            return success();
        }
        case CB_ALLREDUCE: {
            auto got = comm.allreduce(vector, Op::Sum).wait();
            if (!got)
                return got.error();
            const double expected = comm.size() * (comm.size() + 1) / 2.0;
            if (got->size() != vector.size() || got->first() != expected)
                return Error{ErrorCode::CountMismatch, QStringLiteral("allreduce gave a wrong sum")};
            return success();
        }
        case CB_BARRIER:
            return comm.barrier().wait();
        case CB_ALLTOALL: {
            auto got = comm.alltoall(std::span<const quint8>(blocks)).wait();
            if (!got)
                return got.error();
            return success();
        }
        case CB_SCATTER: {
            auto got = comm.scatter(std::span<const quint8>(blocks), 0).wait();
            if (!got)
                return got.error();
            if (got->size() != qsizetype(size))
                return Error{ErrorCode::CountMismatch, QStringLiteral("scatter gave %1 bytes, not %2").arg(got->size()).arg(size)};
            return success();
        }
        case CB_GATHER: {
            auto got = comm.gather(std::span<const quint8>(blocks), 0).wait();
            if (!got)
                return got.error();
            return comm.rank() == 0 ? checkGathered(*got) : success();
        }
        case CB_ALLGATHER: {
            auto got = comm.allgather(std::span<const quint8>(blocks)).wait();
            if (!got)
                return got.error();
            return checkGathered(*got);
        }
        case CB_REDUCE: {
            auto got = comm.reduce(std::span<const double>(vector), Op::Sum, 0).wait();
            if (!got)
                return got.error();
            const double expected = comm.size() * (comm.size() + 1) / 2.0;
            if (comm.rank() == 0 && (got->size() != vector.size() || got->first() != expected))
                return Error{ErrorCode::CountMismatch, QStringLiteral("reduce gave a wrong sum")};
            return success();
        }
        case CB_UNKNOWN:
            break;
        }
        return Error{ErrorCode::BadConfiguration, QStringLiteral("unknown benchmark")};
    }
};

// One barrier; its duration (µs) as this rank saw it.
Result<double> timedBarrier(const Communicator &comm)
{
    const double start = pp_now_us();
    if (auto ok = comm.barrier().wait(); !ok)
        return ok.error();
    return pp_now_us() - start;
}

int fail(const Error &error)
{
    std::fprintf(stderr, "mmpi-bench: %s\n", qPrintable(error.toString()));
    return 1;
}

} // namespace

bool isCollective(const char *name)
{
    return cb_op_from_name(name) != CB_UNKNOWN;
}

int runCollective(const Communicator &comm, int argc, char **argv, const QString &transport, const QString &link)
{
    cb_options options;
    if (const int status = cb_parse_options(argc, argv, "mmpi-bench", &options); status != PP_RUN)
        return status;
    const bool root = comm.rank() == 0;
    if (!cb_per_rank_fits(&options, comm.size(), "mmpi-bench", root))
        return 2;
    const bool topologies = options.op == CB_BCAST;
    // The bcast root's pause after each barrier (bench/collectives.h).
    cb_pause pause{};
    for (int b = 0; b < CB_PAUSE_WINDOW; ++b) {
        const auto took = timedBarrier(comm);
        if (!took)
            return fail(took.error());
        cb_pause_record(&pause, *took);
    }
    cb_pause_update(&pause);
    std::vector<cb_row> rows;
    std::vector<QByteArray> chosenNames; // keeps the rows' strings alive
    chosenNames.reserve(PP_MAX_SIZES * CB_MAX_TOPOLOGIES);
    for (int s = 0; s < options.size_count; ++s) {
        const size_t size = options.sizes[s];
        for (int t = 0; t < (topologies ? options.topology_count : 1); ++t) {
            const char *topologyName = topologies ? cb_topology_names[options.topologies[t]] : "";
            const auto topology = bcastTopologyFromName(QString::fromLatin1(topologyName)).value_or(BcastTopology::Auto);
            const Call call(comm, options, size, topology);
            const long timed = cb_iterations(size, options.iterations);
            const long warmup = cb_warmup(timed);
            std::vector<double> times;
            QHash<QString, int> chosen;
            cb_per_rank perRank{};
            if (options.per_rank && root)
                cb_per_rank_begin(&perRank, comm.size(), timed, "mmpi-bench");
            for (long i = 0; i < warmup + timed; ++i) {
                const auto took = timedBarrier(comm);
                if (!took)
                    return fail(took.error());
                cb_pause_note(&pause, i, warmup, *took);
                if (cb_root_sends(options.op) && root)
                    cb_pause_until(pp_now_us() + pause.us);
                const double start = pp_now_us();
                if (auto ok = call.run(); !ok)
                    return fail(ok.error());
                const double end = pp_now_us();
                const QList<double> mine{start, end};
                const auto all = comm.gather(std::span<const double>(mine), 0).wait();
                if (!all)
                    return fail(all.error());
                if (!root || i < warmup)
                    continue;
                std::vector<double> starts, ends;
                for (qsizetype r = 0; r < all->size(); r += 2) {
                    starts.push_back(all->at(r));
                    ends.push_back(all->at(r + 1));
                }
                times.push_back(cb_elapsed(&options, starts.data(), ends.data(), comm.size(), 0));
                if (options.per_rank)
                    cb_per_rank_add(&perRank, &options, starts.data(), ends.data(), 0);
                if (const QString name = chosenName(comm, options.op); !name.isEmpty())
                    ++chosen[name];
            }
            if (!root)
                continue;
            cb_row row{};
            row.size = size;
            row.topology = options.op == CB_BCAST || options.op == CB_ALLREDUCE ? (topologies ? topologyName : "auto") : "";
            QString most;
            for (auto it = chosen.cbegin(); it != chosen.cend(); ++it)
                if (most.isEmpty() || it.value() > chosen.value(most))
                    most = it.key();
            chosenNames.push_back(most.toLatin1());
            row.chosen = chosenNames.back().constData();
            pp_summarize(times.data(), long(times.size()), size, &row.result);
            if (options.per_rank)
                cb_per_rank_end(&perRank, &row);
            rows.push_back(row);
        }
    }
    if (root)
        cb_print(&options, rows.data(), int(rows.size()), qPrintable(transport), qPrintable(link), comm.size());
    return 0;
}

} // namespace mmpi::bench
