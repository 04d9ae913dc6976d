// GatherOp: every rank sends its contribution straight to the root, which
// keeps them by rank. A handful of nodes: one hop beats a tree here, and the
// root's link only receives.
#pragma once

#include "blocklist.h"
#include "collectiveop.h"

namespace mmpi::detail {

class GatherOp : public CollectiveOp
{
public:
    // With `into`, the root's equal blocks end up in CollectiveResult::list
    // (BlockList).
    GatherOp(CollectiveSetup setup, Payload contribution, int root, ExchangeList into = {});

protected:
    void begin() override;
    void handleData(int rank, Frame &frame, const CollectiveTag &tag) override;
    char *place(int rank, const FrameHeader &header, const CollectiveTag &tag, qint64 bytes,
                std::shared_ptr<void> &keep) override;
    bool waitsOn(int rank) const override;

private:
    void finish();

    Payload m_contribution;
    int m_root;
    ExchangeList m_into;
    BlockList m_list;
    QList<bool> m_got;
    int m_missing = 0;
};

} // namespace mmpi::detail
