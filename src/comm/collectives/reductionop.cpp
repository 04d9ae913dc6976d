#include "reductionop.h"

#include "decision.h"
#include "router.h"

namespace mmpi::detail {

namespace {
constexpr int FinalResult = 1; // argument of rank 0's message to a root != 0
}

ReductionOp::ReductionOp(CollectiveSetup setup, Payload contribution, Combiner combiner, int root,
                         std::optional<Error> problem)
    : CollectiveOp(std::move(setup)), m_accumulated(std::move(contribution)), m_combiner(std::move(combiner)),
      m_root(root), m_problem(std::move(problem))
{
}

void ReductionOp::begin()
{
    if (m_root < 0 || m_root >= size())
        return fail({ErrorCode::InvalidRank,
                     describe(QStringLiteral("root %1 is not a rank of this communicator").arg(m_root))});
    if (m_problem)
        return fail(*m_problem);
    m_flat = decideReduce(size(), m_accumulated.bytes.size(), m_setup.router->links().mediumModel())
             == ReduceShape::Flat;
    step();
}

bool ReductionOp::isChild(int v) const
{
    const int me = vrankOf(rank());
    const int offset = v - me;
    if (m_flat)
        return me == 0 && v > 0 && v < size();
    // The children of vrank me are me + 2^j for every 2^j below me's lowest set bit.
    return offset > 0 && (offset & (offset - 1)) == 0 && v < size() && (me == 0 || offset < (me & -me));
}

void ReductionOp::step()
{
    const int me = vrankOf(rank());
    while (!m_sentUp && m_mask < size()) {
        if (sendsUpNow(me)) {
            send(rankOfV(parentOf(me)), m_accumulated);
            m_sentUp = true;
            break;
        }
        const int child = nextChild(me);
        if (child < size()) {
            const auto it = m_fromChildren.find(child);
            if (it == m_fromChildren.end())
                return; // wait for it
            auto combined = m_combiner.combine(std::move(m_accumulated), std::move(*it));
            if (!combined)
                return fail({combined.error().code,
                             describe(QStringLiteral("combining rank %1's contribution: %2")
                                          .arg(rankOfV(child)).arg(combined.error().message))});
            m_accumulated = std::move(*combined);
            m_fromChildren.erase(it);
        }
        advance();
    }
    if (!m_sentUp) { // the tree's root: the result is complete here
        if (rank() == m_root) {
            m_result->payload = std::move(m_accumulated);
        } else {
            send(m_root, m_accumulated, FinalResult);
            m_accumulated = {};
        }
        return succeed();
    }
    if (rank() == m_root && rank() != treeRoot())
        m_awaitFinal = true;
    else
        succeed();
}

void ReductionOp::handleData(int from, Frame &frame, const CollectiveTag &tag)
{
    Payload payload = payloadOf(std::move(frame));
    if (tag.argument == FinalResult) {
        if (!m_awaitFinal || from != treeRoot())
            return fail({ErrorCode::ProtocolViolation,
                         describe(QStringLiteral("unexpected result from rank %1").arg(from))});
        m_result->payload = std::move(payload);
        return succeed();
    }
    const int v = vrankOf(from);
    if (!isChild(v) || m_fromChildren.contains(v) || m_sentUp || (v - vrankOf(rank())) < m_mask)
        return fail({ErrorCode::ProtocolViolation,
                     describe(QStringLiteral("unexpected contribution from rank %1").arg(from))});
    m_fromChildren.insert(v, std::move(payload));
    step();
}

bool ReductionOp::waitsOn(int r) const
{
    if (m_awaitFinal)
        return r == treeRoot();
    if (m_sentUp)
        return false;
    const int v = vrankOf(r);
    return isChild(v) && v - vrankOf(rank()) >= m_mask && !m_fromChildren.contains(v);
}

} // namespace mmpi::detail
