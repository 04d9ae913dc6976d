// ExchangeOp: every rank sends a part to every other rank and receives one
// from each (alltoall; allgather when every rank's parts are the same one).
// One hop each; a group that runs collectives is small.
#pragma once

#include "blocklist.h"
#include "collectiveop.h"

namespace mmpi::detail {

class ExchangeOp : public CollectiveOp
{
public:
    // `parts`: one per rank (alltoall) or a single one for everybody
    // (allgather); an error is reported to every rank. Parts may borrow the
    // caller's memory (isBorrowed()) if start() is called while it lives:
    // nothing keeps them past start(). With `into`, equal blocks end up in
    // CollectiveResult::list (BlockList).
    ExchangeOp(CollectiveSetup setup, Result<QList<Payload>> parts, ExchangeList into = {});

protected:
    void begin() override;
    void handleData(int rank, Frame &frame, const CollectiveTag &tag) override;
    char *place(int rank, const FrameHeader &header, const CollectiveTag &tag, qint64 bytes,
                std::shared_ptr<void> &keep) override;
    bool waitsOn(int rank) const override;

private:
    void finish();

    Result<QList<Payload>> m_parts;
    ExchangeList m_into;
    BlockList m_list;
    QList<bool> m_got;
    int m_missing = 0;
};

} // namespace mmpi::detail
