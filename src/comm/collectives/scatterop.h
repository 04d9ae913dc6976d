// ScatterOp: the root sends every rank its part directly.
#pragma once

#include "collectiveop.h"

namespace mmpi::detail {

class ScatterOp : public CollectiveOp
{
public:
    // `parts` (one per rank) matters at the root only; an error there is
    // reported to every rank.
    ScatterOp(CollectiveSetup setup, Result<QList<Payload>> parts, int root);

protected:
    void begin() override;
    void handleData(int rank, Frame &frame, const CollectiveTag &tag) override;
    bool waitsOn(int rank) const override;

private:
    Result<QList<Payload>> m_parts;
    int m_root;
};

} // namespace mmpi::detail
