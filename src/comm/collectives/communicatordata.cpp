#include "communicatordata.h"

#include "router.h"

#include <mmpi/world/world.h>

namespace mmpi::detail {

int CommunicatorData::rank() const
{
    return wholeWorld ? world->rank() : ownRank;
}

int CommunicatorData::size() const
{
    return wholeWorld ? world->size() : int(group.size());
}

int CommunicatorData::worldRank(int r) const
{
    if (r < 0 || r >= size())
        return NoRank;
    return wholeWorld ? r : group.at(r);
}

int CommunicatorData::rankOfWorldRank(int w) const
{
    if (wholeWorld)
        return w >= 0 && w < world->size() ? w : NoRank;
    return rankOf.value(w, NoRank);
}

QList<int> CommunicatorData::members() const
{
    if (!wholeWorld)
        return group;
    return router->worldRanks(world->size());
}

int CommunicatorData::peerWorldRank(int r) const
{
    if (!isInter())
        return worldRank(r);
    return r >= 0 && r < remote.size() ? remote.at(r) : NoRank;
}

int CommunicatorData::peerRankOfWorldRank(int w) const
{
    return isInter() ? remoteRankOf.value(w, NoRank) : rankOfWorldRank(w);
}

quint32 CommunicatorData::takeSequence(quint32 count) const
{
    quint32 next = sequence->load();
    quint32 first = 0;
    do {
        const bool wraps = (next & CountMask) + count > CountMask + 1;
        first = wraps ? next & ~CountMask : next;
    } while (!sequence->compare_exchange_weak(next, (first & ~CountMask) | ((first + count) & CountMask)));
    return first;
}

quint32 CommunicatorData::beginNextEpoch() const
{
    quint32 next = sequence->load();
    quint32 epoch = 0;
    do {
        epoch = (epochOf(next) + 1) % Epochs;
    } while (!sequence->compare_exchange_weak(next, firstOfEpoch(epoch)));
    return epoch;
}

std::shared_ptr<CommunicatorData> makeGroupData(const CommunicatorData &parent, quint32 id, QList<int> group)
{
    auto d = std::make_shared<CommunicatorData>();
    d->world = parent.world;
    d->matcher = parent.matcher;
    d->router = parent.router;
    d->id = id;
    d->wholeWorld = false;
    d->group = std::move(group);
    for (int r = 0; r < d->group.size(); ++r)
        d->rankOf.insert(d->group.at(r), r);
    d->ownRank = d->rankOf.value(parent.world->rank(), NoRank);
    return d;
}

} // namespace mmpi::detail
