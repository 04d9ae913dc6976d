// AllreduceOptions: what a caller may ask of one allreduce(), as BcastOptions
// is for bcast(): the algorithm to run instead of the one the decision picks
// (docs/design/collectives.md, "The decisions"). Every rank must pass the same.
#pragma once

#include <QString>
#include <QStringView>

#include <optional>

namespace mmpi {

enum class AllreduceAlgorithm {
    Auto,              // chosen from the ranks, the bytes and the op
    RecursiveDoubling, // log2(n) rounds in which partners swap what they have combined
    Ring,              // reduce-scatter, then allgather, around a ring (commutative op, fixed-size items)
    ReduceBcast,       // reduce to rank 0, then bcast from it
    // Rabenseifner's: reduce-scatter by recursive halving, then allgather by
    // recursive doubling, 2 log2(n) messages where the ring sends 2 (n - 1),
    // as few bytes as the ring (commutative op, fixed-size items); a group of
    // 2^k + r ranks first folds r pairs into one rank each, as recursive
    // doubling does
    RecursiveHalving,
};

// "auto", "recursive-doubling", "ring", "reduce-bcast", "recursive-halving":
// the names MMPI_ALLREDUCE_ALGORITHM takes.
QString allreduceAlgorithmName(AllreduceAlgorithm algorithm);
std::optional<AllreduceAlgorithm> allreduceAlgorithmFromName(QStringView name);

struct AllreduceOptions
{
    // A ring or recursive halving asked of a call it cannot cut into whole
    // items per rank (or of a non-commutative op) runs what Auto would, with
    // a warning.
    AllreduceAlgorithm algorithm = AllreduceAlgorithm::Auto;
};

} // namespace mmpi
