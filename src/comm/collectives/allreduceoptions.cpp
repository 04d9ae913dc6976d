#include <mmpi/comm/allreduceoptions.h>

#include "nametable.h"

namespace mmpi {

namespace {

constexpr detail::Named<AllreduceAlgorithm> Names[] = {
    {AllreduceAlgorithm::Auto, "auto"},
    {AllreduceAlgorithm::RecursiveDoubling, "recursive-doubling"},
    {AllreduceAlgorithm::Ring, "ring"},
    {AllreduceAlgorithm::RecursiveHalving, "recursive-halving"},
    {AllreduceAlgorithm::ReduceBcast, "reduce-bcast"},
};

} // namespace

QString allreduceAlgorithmName(AllreduceAlgorithm algorithm)
{
    return detail::nameIn(Names, algorithm);
}

std::optional<AllreduceAlgorithm> allreduceAlgorithmFromName(QStringView name)
{
    return detail::valueIn(Names, name);
}

} // namespace mmpi
