#include "decision.h"

#include <mmpi/core/logging.h>

#include <QStringList>

#include <cmath>

namespace mmpi::detail {

namespace {

constexpr BcastTopology BcastTopologies[] = {BcastTopology::Auto,   BcastTopology::Serial,   BcastTopology::Pipe,
                                             BcastTopology::Binary, BcastTopology::Binomial, BcastTopology::Fibonacci};
constexpr AllreduceAlgorithm AllreduceAlgorithms[] = {AllreduceAlgorithm::Auto, AllreduceAlgorithm::RecursiveDoubling,
                                                      AllreduceAlgorithm::Ring, AllreduceAlgorithm::ReduceBcast};

template<typename Algorithm, size_t N>
Result<Algorithm> fromVariable(const char *variable, const char *collective, const QString &value,
                               const Algorithm (&all)[N], QString (*nameOf)(Algorithm),
                               std::optional<Algorithm> (*fromName)(QStringView))
{
    const QString wanted = value.trimmed().toLower();
    if (wanted.isEmpty())
        return Algorithm::Auto;
    if (const auto algorithm = fromName(wanted))
        return *algorithm;
    QStringList names;
    for (Algorithm a : all)
        names.append(nameOf(a));
    return Error{ErrorCode::BadConfiguration,
                 QStringLiteral("%1=%2 names no %3 algorithm (allowed: %4); %3 decides itself")
                     .arg(QLatin1String(variable), value, QLatin1String(collective), names.join(QLatin1String(", ")))};
}

template<typename Algorithm>
Algorithm orAutoWithWarning(Result<Algorithm> parsed)
{
    if (parsed)
        return *parsed;
    qCWarning(lcComm).noquote() << parsed.error().message;
    return Algorithm::Auto;
}

AllreduceAlgorithm automaticAllreduce(const AllreduceShape &shape)
{
    if (shape.ranks <= 2 || shape.bytes <= RecursiveDoublingMaxBytes)
        return AllreduceAlgorithm::RecursiveDoubling;
    if (ringApplies(shape) && (shape.ranks <= MaxRingRanks || shape.bytes / shape.ranks >= MinRingSegmentBytes))
        return AllreduceAlgorithm::Ring;
    return AllreduceAlgorithm::ReduceBcast;
}

} // namespace

ReduceShape decideReduce(int ranks, qint64 bytes, const LinkModel &medium)
{
    if (ranks <= 2)
        return ReduceShape::Binomial; // the same one message either way
    const double hop = frameOccupancyUs(bytes, medium);
    const double latency = std::max(0.0, medium.latencyUs);
    const double flat = double(ranks - 1) * hop + latency;
    const double binomial = std::ceil(std::log2(double(ranks))) * (hop + latency);
    return flat < binomial ? ReduceShape::Flat : ReduceShape::Binomial;
}

BcastPlan decideBcast(int ranks, qint64 bytes, const LinkModel &link, BcastTopology forced)
{
    if (ranks > 1)
        return planBcast(ranks, bytes, link, forced);
    BcastPlan plan;
    if (forced != BcastTopology::Auto)
        plan.topology = forced;
    return plan;
}

bool ringApplies(const AllreduceShape &shape)
{
    return shape.commutative && shape.fixedSizeItems && shape.ranks >= 2 && shape.items >= shape.ranks;
}

AllreduceAlgorithm decideAllreduce(const AllreduceShape &shape, AllreduceAlgorithm forced)
{
    if (forced == AllreduceAlgorithm::Auto || (forced == AllreduceAlgorithm::Ring && !ringApplies(shape)))
        return automaticAllreduce(shape);
    return forced;
}

Result<BcastTopology> bcastTopologyFromVariable(const QString &value)
{
    return fromVariable(BcastVariable, "bcast", value, BcastTopologies, &bcastTopologyName, &bcastTopologyFromName);
}

Result<AllreduceAlgorithm> allreduceAlgorithmFromVariable(const QString &value)
{
    return fromVariable(AllreduceVariable, "allreduce", value, AllreduceAlgorithms, &allreduceAlgorithmName,
                        &allreduceAlgorithmFromName);
}

ForcedAlgorithms forcedByEnvironment()
{
    ForcedAlgorithms forced;
    forced.bcast = orAutoWithWarning(bcastTopologyFromVariable(qEnvironmentVariable(BcastVariable)));
    forced.allreduce = orAutoWithWarning(allreduceAlgorithmFromVariable(qEnvironmentVariable(AllreduceVariable)));
    return forced;
}

} // namespace mmpi::detail
