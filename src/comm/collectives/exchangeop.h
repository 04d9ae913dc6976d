// ExchangeOp: every rank sends a part to every other rank and receives one
// from each (alltoall; allgather when every rank's parts are the same one).
// One hop each; a group that runs collectives is small.
#pragma once

#include "collectiveop.h"

#include <mmpi/comm/collectiveresult.h>

namespace mmpi::detail {

class ExchangeOp : public CollectiveOp
{
public:
    // `parts`: one per rank (alltoall) or a single one for everybody
    // (allgather); an error is reported to every rank. Parts may borrow the
    // caller's memory (isBorrowed()) if start() is called while it lives:
    // nothing keeps them past start(). With `into`, equal blocks end up in
    // CollectiveResult::list; a block that does not fit the list leaves them
    // all in CollectiveResult::parts (the caller's decode names the misfit).
    ExchangeOp(CollectiveSetup setup, Result<QList<Payload>> parts, ExchangeList into = {});

protected:
    void begin() override;
    void handleData(int rank, Frame &frame, const CollectiveTag &tag) override;
    char *place(int rank, const FrameHeader &header, const CollectiveTag &tag, qint64 bytes,
                std::shared_ptr<void> &keep) override;
    bool waitsOn(int rank) const override;

private:
    bool startList(const Payload &own);
    qsizetype blockBytes() const { return qsizetype(m_blockCount) * m_into.itemBytes; }
    bool fitsList(ItemType type, quint32 count) const;
    bool copyIntoList(int rank, const Payload &part);
    void finish();

    Result<QList<Payload>> m_parts;
    QList<bool> m_got;
    int m_missing = 0;
    ExchangeList m_into;
    ListPlace m_list;          // set while blocks go into the caller's list
    QList<bool> m_inList;      // by rank: its block is in m_list
    ItemType m_itemType = ItemType::None;
    quint32 m_blockCount = 0;
};

} // namespace mmpi::detail
