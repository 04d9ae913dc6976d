// Router: the comm layer's MessageSink for one world. Point-to-point frames go
// to the Matcher, collective frames (communicator ids with the collective bit)
// to the CollectiveMatcher; departures go to both. It keeps this node's link
// model (LinkTable) for the broadcast decision and the algorithms the
// environment forces (read once, as it is made), and hands out communicator
// ids so that dup/split agree on new ones. Runs on the progress thread; thread-safe.
#pragma once

#include "collectivematcher.h"
#include "communicatordata.h"
#include "decision.h"
#include "linktable.h"
#include "../eagersends.h"

#include <mmpi/world/world.h>

#include <atomic>

namespace mmpi::detail {

class Matcher;

class Router : public MessageSink, public std::enable_shared_from_this<Router>
{
public:
    explicit Router(World *world);
    ~Router() override;

    World *world() const { return m_world; }
    const std::shared_ptr<Matcher> &matcher() const { return m_matcher; }
    CollectiveMatcher &collectives() { return m_collectives; }
    LinkTable &links() { return m_links; }
    // Shared with the completions of the sends it let finish early.
    const std::shared_ptr<EagerSends> &eagerSends() const { return m_eager; }
    // The sequence counter of the world communicator, shared by every handle
    // that Communicator::world() makes.
    const std::shared_ptr<std::atomic<quint32>> &worldSequence() const { return m_worldSequence; }

    // World ranks 0 .. n - 1 (the world communicator's group; every
    // collective on it asks, so the list is kept while the size holds).
    QList<int> worldRanks(int n) const;

    // The lowest id this node has not used yet; new communicators take the
    // largest of their members' (collision-free without a global counter).
    quint32 nextFreeId() const { return m_nextFreeId.load(); }
    // Records that `id` is in use, so later ones are larger.
    void claimId(quint32 id);
    // Communicator `id` is revoked: every later operation on it fails with
    // `reason`, and so do the receives posted and the collectives running on
    // it. The first revoke of `id` sends a notice to the world ranks in
    // `tell`, which revoke it too and pass the notice on to the rest, so it
    // reaches every member even if this node dies while sending (ULFM's
    // reliable broadcast, the simple way: at most n^2 small frames, once).
    // Later revokes of `id` do nothing. Thread-safe.
    void revoke(quint32 id, const Error &reason, const QList<int> &tell = {});
    std::optional<Error> revoked(quint32 id) const;
    // Communicator `id` was interrupted here (Communicator::interrupt()) and
    // its collectives take sequence numbers of `epoch` from now on: the
    // receives posted on it and its collectives of earlier epochs fail with
    // `reason`. It is not revoked. Thread-safe.
    void interrupt(quint32 id, quint32 epoch, const Error &reason);

    // decideBcast() for a node that forwards `bytes` to a range of `ranks`
    // whose other members are `peers`, with this node's link model;
    // remembered, since the same calls come again and the simulation is not free.
    BcastPlan bcastPlan(int ranks, qint64 bytes, BcastTopology topology, const QList<int> &peers);

    // What MMPI_BCAST_ALGORITHM and MMPI_ALLREDUCE_ALGORITHM force here.
    const ForcedAlgorithms &forcedAlgorithms() const { return m_forced; }

    // What the last broadcast this node forwarded chose (mmpi::lastBcastPlan()),
    // and the last allreduce it started (mmpi::lastAllreduceAlgorithm()).
    std::optional<BcastPlan> lastBcastPlan() const;
    void setLastBcastPlan(const BcastPlan &plan);
    std::optional<AllreduceAlgorithm> lastAllreduceAlgorithm() const;
    void setLastAllreduceAlgorithm(AllreduceAlgorithm algorithm);

    void handleFrame(const Frame &frame) override;
    void takeFrame(Frame &&frame) override;
    // A posted receive's buffer, or a running collective's result (between 2
    // ranks an allreduce's list).
    char *placeFor(const FrameHeader &header, qint64 bytes) override;
    void handleMessageAbandoned(int rank, const Error &reason) override;
    void handlePlacedProgress(int rank, qint64 bytes) override;
    void handlePeerGone(int rank, const Error &reason) override;
    void handlePeerRejoined(int rank) override;

    // A peer that said goodbye has delivered everything it sent before; one
    // that was lost may not have (the world reports both through one call).
    static bool isCleanLeave(const Error &reason);

private:
    void handleRevokeNotice(const Frame &frame);
    // revoke() and interrupt(): fail what waits on communicator `id`; with
    // `epoch`, only its collectives of earlier epochs.
    void failOperations(quint32 id, const Error &reason, std::optional<quint32> epoch = std::nullopt);

    World *m_world;
    std::shared_ptr<ReceiveGate> m_gate;
    std::shared_ptr<Matcher> m_matcher;
    CollectiveMatcher m_collectives;
    LinkTable m_links;
    std::shared_ptr<EagerSends> m_eager = std::make_shared<EagerSends>();
    std::shared_ptr<std::atomic<quint32>> m_worldSequence = std::make_shared<std::atomic<quint32>>(0);
    std::atomic<quint32> m_nextFreeId{1};
    mutable QMutex m_revokedMutex;
    QHash<quint32, Error> m_revoked;
    mutable QMutex m_worldRanksMutex;
    mutable QList<int> m_worldRanks;
    const ForcedAlgorithms m_forced;
    mutable QMutex m_planMutex;
    std::optional<BcastPlan> m_lastPlan;
    std::optional<AllreduceAlgorithm> m_lastAllreduce; // guarded by m_planMutex
    struct PlanKey
    {
        int ranks;
        qint64 bytes;
        BcastTopology topology;
        LinkModel model;
        bool operator==(const PlanKey &o) const
        {
            return ranks == o.ranks && bytes == o.bytes && topology == o.topology && model == o.model;
        }
        friend size_t qHash(const PlanKey &k, size_t seed = 0)
        {
            return qHashMulti(seed, k.ranks, k.bytes, int(k.topology), k.model.latencyUs, k.model.bytesPerUs,
                              k.model.overheadUs);
        }
    };
    QHash<PlanKey, BcastPlan> m_plans; // guarded by m_planMutex
};

} // namespace mmpi::detail
