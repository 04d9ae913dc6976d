// GatherOp: every rank sends its contribution straight to the root, which
// keeps them by rank. A handful of nodes: one hop beats a tree here, and the
// root's link only receives.
#pragma once

#include "collectiveop.h"

namespace mmpi::detail {

class GatherOp : public CollectiveOp
{
public:
    GatherOp(CollectiveSetup setup, Payload contribution, int root);

protected:
    void begin() override;
    void handleData(int rank, Frame &frame, const CollectiveTag &tag) override;
    bool waitsOn(int rank) const override;

private:
    Payload m_contribution;
    int m_root;
    QList<bool> m_got;
    int m_missing = 0;
};

} // namespace mmpi::detail
