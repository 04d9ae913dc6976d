// CommunicatorData: what a Communicator handle shares with its copies — the
// world, the world's router (matching, collectives, link estimates), the
// communicator id, its group (world ranks by rank; for an intercommunicator
// also the remote group) and the sequence counter its collectives agree on.
#pragma once

#include "collectivetag.h"

#include <mmpi/wire/frame.h>

#include <QHash>
#include <QList>

#include <atomic>
#include <memory>

namespace mmpi {
class World;
}

namespace mmpi::detail {

class Matcher;
class Router;

struct CommunicatorData
{
    World *world = nullptr;
    std::shared_ptr<Matcher> matcher;
    std::shared_ptr<Router> router;
    quint32 id = 0;
    // The world communicator's group is every rank of the world, which is
    // only known once it has formed: wholeWorld stands for it.
    bool wholeWorld = true;
    QList<int> group;      // world rank of each rank (unless wholeWorld)
    QHash<int, int> rankOf; // world rank -> rank (unless wholeWorld)
    int ownRank = NoRank;   // this node's rank (unless wholeWorld)
    // Intercommunicators: the other group, by remote rank, and the
    // intracommunicator of this node's own group.
    QList<int> remote;
    QHash<int, int> remoteRankOf;
    std::shared_ptr<const CommunicatorData> local;
    // Sequence numbers of collectives: every member takes them in the same
    // order. The next one to take, epoch and count (collectivetag.h).
    std::shared_ptr<std::atomic<quint32>> sequence = std::make_shared<std::atomic<quint32>>(0);

    bool isInter() const { return local != nullptr; }
    int rank() const;
    int size() const;
    int remoteSize() const { return int(remote.size()); }
    // World rank of `rank` of this group, NoRank if out of range.
    int worldRank(int rank) const;
    // Rank in this group of a world rank, NoRank if not a member.
    int rankOfWorldRank(int worldRank) const;
    // The group as world ranks (resolves wholeWorld).
    QList<int> members() const;
    // Point-to-point peers: the remote group of an intercommunicator, else the group.
    int peerWorldRank(int rank) const;
    int peerRankOfWorldRank(int worldRank) const;
    int peerCount() const { return isInter() ? remoteSize() : size(); }
    // Whether ranks and world ranks differ, so statuses need translating.
    bool translates() const { return !wholeWorld; }
    quint32 collectiveContext() const { return id | CollectiveContextBit; }
    // Reserves `count` consecutive sequence numbers of the current epoch;
    // returns the first. A run that would pass the epoch's last count starts
    // over at its first (every member wraps alike), so first + i stays in it.
    quint32 takeSequence(quint32 count = 1) const;
    // Communicator::interrupt(): the collectives started from now on take
    // sequence numbers from the next epoch, beginning at its first. Returns it.
    quint32 beginNextEpoch() const;
};

// A communicator of `group` (world ranks by rank, containing this node) with `id`.
std::shared_ptr<CommunicatorData> makeGroupData(const CommunicatorData &parent, quint32 id, QList<int> group);

} // namespace mmpi::detail
