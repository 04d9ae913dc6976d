#include <mmpi/comm/allreduceoptions.h>

namespace mmpi {

namespace {

struct AlgorithmName
{
    AllreduceAlgorithm algorithm;
    const char *name;
};

constexpr AlgorithmName Names[] = {
    {AllreduceAlgorithm::Auto, "auto"},
    {AllreduceAlgorithm::RecursiveDoubling, "recursive-doubling"},
    {AllreduceAlgorithm::Ring, "ring"},
    {AllreduceAlgorithm::ReduceBcast, "reduce-bcast"},
};

} // namespace

QString allreduceAlgorithmName(AllreduceAlgorithm algorithm)
{
    for (const auto &n : Names)
        if (n.algorithm == algorithm)
            return QString::fromLatin1(n.name);
    return QStringLiteral("unknown");
}

std::optional<AllreduceAlgorithm> allreduceAlgorithmFromName(QStringView name)
{
    for (const auto &n : Names)
        if (name == QLatin1String(n.name))
            return n.algorithm;
    return std::nullopt;
}

} // namespace mmpi
