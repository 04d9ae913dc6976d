// BlockList: the list a collective of equal blocks returns (alltoall,
// allgather, gather of items), made when it starts, with every rank's block
// read or copied to its place in it instead of into buffers of their own
// that are concatenated afterwards (ExchangeList says how to make it).
#pragma once

#include <mmpi/comm/collectiveresult.h>
#include <mmpi/wire/frame.h>

namespace mmpi::detail {

class BlockList
{
public:
    // A list of `ranks` blocks of `own`'s size, `own` in it at `rank`;
    // false (and nothing made) unless `into` can make one for such blocks.
    bool start(const ExchangeList &into, int ranks, int rank, const Payload &own);
    bool isStarted() const { return bool(m_list.list); }
    // Where the message of `rank`'s block may be read as it arrives, or
    // nullptr if it does not fit; `keep` then holds the list.
    char *placeFor(int rank, const FrameHeader &header, qint64 bytes, std::shared_ptr<void> &keep) const;
    // `rank`'s block has come in `frame`: noted if it was read into place,
    // copied in if it fits, else left in parts[rank]. False if the frame
    // says it was read into place where there is no list (the op's error).
    bool take(int rank, Frame &&frame, QList<Payload> &parts);
    // Every block in: the list is the result. Otherwise the blocks in it
    // become parts again (views of it), beside those that did not fit.
    void finishInto(CollectiveResult &result);

private:
    bool fits(ItemType type, quint32 count) const;
    bool copyIn(int rank, const Payload &part);
    qsizetype blockBytes() const { return qsizetype(m_blockCount) * m_itemBytes; }

    ListPlace m_list;
    QList<bool> m_in; // by rank: its block is in the list
    ItemType m_itemType = ItemType::None;
    quint32 m_blockCount = 0;
    qsizetype m_itemBytes = 0;
};

} // namespace mmpi::detail
