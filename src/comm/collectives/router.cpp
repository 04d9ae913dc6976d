#include "router.h"

#include "errorrecord.h"

#include "../matcher.h"

#include <mmpi/core/logging.h>

namespace mmpi::detail {

Router::Router(World *world)
    : m_world(world),
      m_gate(std::make_shared<ReceiveGate>(world)),
      m_matcher(std::make_shared<Matcher>(world, m_gate)),
      m_collectives(m_gate, [world] { return world->config().maxUnexpectedBytes; }),
      m_links(world),
      m_forced(forcedByEnvironment())
{
}

Router::~Router() = default;

void Router::claimId(quint32 id)
{
    quint32 next = m_nextFreeId.load();
    while (next <= id && !m_nextFreeId.compare_exchange_weak(next, id + 1)) {
    }
}

QList<int> Router::worldRanks(int n) const
{
    QMutexLocker lock(&m_worldRanksMutex);
    if (m_worldRanks.size() != n) {
        QList<int> all(qMax(n, 0));
        for (int r = 0; r < n; ++r)
            all[r] = r;
        m_worldRanks = std::move(all);
    }
    return m_worldRanks;
}

BcastPlan Router::bcastPlan(int ranks, qint64 bytes, BcastTopology topology, const QList<int> &peers)
{
    const PlanKey key{ranks, bytes, topology, m_links.model(peers)};
    {
        QMutexLocker lock(&m_planMutex);
        if (const auto it = m_plans.constFind(key); it != m_plans.cend())
            return *it;
    }
    const BcastPlan plan = decideBcast(ranks, bytes, key.model, topology);
    QMutexLocker lock(&m_planMutex);
    if (m_plans.size() >= 1024) // sizes vary without bound; the recent ones matter
        m_plans.clear();
    m_plans.insert(key, plan);
    return plan;
}

std::optional<BcastPlan> Router::lastBcastPlan() const
{
    QMutexLocker lock(&m_planMutex);
    return m_lastPlan;
}

void Router::setLastBcastPlan(const BcastPlan &plan)
{
    QMutexLocker lock(&m_planMutex);
    m_lastPlan = plan;
}

std::optional<AllreduceAlgorithm> Router::lastAllreduceAlgorithm() const
{
    QMutexLocker lock(&m_planMutex);
    return m_lastAllreduce;
}

void Router::setLastAllreduceAlgorithm(AllreduceAlgorithm algorithm)
{
    QMutexLocker lock(&m_planMutex);
    m_lastAllreduce = algorithm;
}

void Router::handleFrame(const Frame &frame)
{
    takeFrame(Frame(frame));
}

void Router::takeFrame(Frame &&frame)
{
    const quint32 communicator = frame.header.communicator;
    if (!(communicator & CollectiveContextBit))
        return m_matcher->handleFrame(frame);
    if (decodeCollectiveTag(frame.header.tag).kind == CollectiveFrameKind::Revoke)
        return handleRevokeNotice(frame);
    m_collectives.handleFrame(std::move(frame));
}

char *Router::placeFor(const FrameHeader &header, qint64 bytes)
{
    return header.communicator & CollectiveContextBit ? m_collectives.placeFor(header, bytes)
                                                      : m_matcher->placeFor(header, bytes);
}

void Router::handleMessageAbandoned(int rank, const Error &reason)
{
    m_matcher->handleMessageAbandoned(rank, reason);
    m_collectives.handleMessageAbandoned(rank);
}

void Router::handlePlacedProgress(int rank, qint64 bytes)
{
    m_collectives.handlePlacedProgress(rank, bytes);
}

void Router::handlePeerGone(int rank, const Error &reason)
{
    m_matcher->handlePeerGone(rank, reason);
    m_collectives.handlePeerGone(rank, reason, isCleanLeave(reason));
}

void Router::handlePeerRejoined(int rank)
{
    m_matcher->handlePeerRejoined(rank);
    m_collectives.handlePeerRejoined(rank);
}

// The world reports a goodbye as PeerLeft, a loss with the link's error.
bool Router::isCleanLeave(const Error &reason)
{
    return reason.code == ErrorCode::PeerLeft;
}

void Router::revoke(quint32 id, const Error &reason, const QList<int> &tell)
{
    {
        QMutexLocker lock(&m_revokedMutex);
        if (m_revoked.contains(id))
            return;
        m_revoked.insert(id, reason);
    }
    failOperations(id, reason);
    if (tell.isEmpty())
        return;
    const Payload record = encodeErrorRecord({reason, tell});
    Frame notice = makeFrame(FrameKind::Data, record.itemType, record.count, record.bytes);
    notice.header.communicator = id | CollectiveContextBit;
    notice.header.tag = encodeCollectiveTag(0, 0, CollectiveFrameKind::Revoke);
    const int me = m_world->rank();
    for (int rank : tell) {
        if (rank == me)
            continue;
        // A member gone since cannot take it, and needs it no more.
        if (auto sent = m_world->sendFrame(rank, notice); !sent)
            qCDebug(lcComm) << "revoke notice for communicator" << id << "not sent to rank" << rank << ":"
                            << sent.error().message;
    }
}

void Router::interrupt(quint32 id, quint32 epoch, const Error &reason)
{
    failOperations(id, reason, epoch);
}

void Router::failOperations(quint32 id, const Error &reason, std::optional<quint32> epoch)
{
    m_matcher->failCommunicator(id, reason);
    if (epoch)
        m_collectives.interruptContext(id | CollectiveContextBit, *epoch, reason);
    else
        m_collectives.failContext(id | CollectiveContextBit, reason);
}

void Router::handleRevokeNotice(const Frame &frame)
{
    const quint32 id = frame.header.communicator & ~CollectiveContextBit;
    const auto record = decodeErrorRecord(frame);
    if (!record || record->error.code != ErrorCode::Revoked) {
        qCWarning(lcComm) << "ignoring a malformed revoke notice for communicator" << id << "from rank"
                          << frame.header.source;
        return;
    }
    if (!revoked(id))
        qCInfo(lcComm).noquote() << "rank" << frame.header.source << "revoked communicator" << id << ":"
                                 << record->error.message;
    QList<int> rest = record->ranks;
    rest.removeAll(frame.header.source);
    revoke(id, record->error, rest);
}

std::optional<Error> Router::revoked(quint32 id) const
{
    QMutexLocker lock(&m_revokedMutex);
    const auto it = m_revoked.constFind(id);
    return it == m_revoked.cend() ? std::nullopt : std::optional<Error>(*it);
}

} // namespace mmpi::detail
