// Starting collectives from the Communicator API, and the collectives made of
// several phases (allreduce, dup, split, intercommunicators), chained on the
// completion of each phase so that none needs the caller's thread.
#include <mmpi/comm/communicator.h>
#include <mmpi/comm/intercommunicator.h>

#include "allreduceop.h"
#include "barrierop.h"
#include "bcastop.h"
#include "communicatoraccess.h"
#include "communicatordata.h"
#include "decision.h"
#include "exchangeop.h"
#include "gatherop.h"
#include "halvingallreduceop.h"
#include "reductionop.h"
#include "ringallreduceop.h"
#include "router.h"
#include "scatterop.h"

#include <mmpi/core/logging.h>
#include <mmpi/wire/bufferpool.h>
#include <mmpi/world/world.h>

#include <algorithm>
#include <atomic>

namespace mmpi {

using detail::CollectiveOp;
using detail::CollectiveResult;
using detail::CommunicatorAccess;
using detail::CommunicatorData;
using detail::RequestState;

namespace {

// `revokedToo`: false for what is local and still makes sense on a revoked
// communicator (a new group from it, as ULFM's shrink does).
std::optional<Error> refusal(const CommunicatorData *d, const char *name, bool revokedToo = true)
{
    const QLatin1String what(name); // made a QString only for an error: this runs before every collective
    if (!d)
        return Error{ErrorCode::NotFormed, QStringLiteral("%1 on a null communicator").arg(what)};
    if (d->isInter())
        return Error{ErrorCode::BadConfiguration,
                     QStringLiteral("%1 needs an intracommunicator: use localCommunicator() or merge()").arg(what)};
    if (d->world->state() != World::State::Formed)
        return Error{ErrorCode::NotFormed, QStringLiteral("%1: the world is not formed").arg(what)};
    if (auto why = d->router->revoked(d->id); why && revokedToo)
        return why;
    if (d->size() > detail::MaxCollectiveRanks)
        return Error{ErrorCode::BadConfiguration, QStringLiteral("%1: collectives run on at most %2 ranks, not %3")
                                                      .arg(what).arg(detail::MaxCollectiveRanks).arg(d->size())};
    return std::nullopt;
}

detail::CollectiveSetup setupFor(const CommunicatorData &d, quint32 sequence, const char *name)
{
    detail::CollectiveSetup s;
    s.world = d.world;
    s.router = d.router;
    s.context = d.collectiveContext();
    s.sequence = sequence & detail::SequenceMask;
    s.group = d.members();
    s.rank = d.rank();
    s.name = name;
    return s;
}

std::shared_ptr<RequestState> newState(quint32 context)
{
    return std::make_shared<RequestState>(RequestState::Kind::Receive, context, AnySource, AnyTag);
}

Result<Status> outcomeOf(const std::shared_ptr<RequestState> &state)
{
    return *state->outcome();
}

Payload longs(const QList<qint64> &values)
{
    return MessageCodec<QList<qint64>>::encode(values);
}

Result<QList<qint64>> longsOf(const Payload &payload, qsizetype atLeast, const char *what)
{
    auto values = MessageCodec<QList<qint64>>::decode(payload);
    if (!values)
        return values.error();
    if (values->size() < atLeast)
        return Error{ErrorCode::ProtocolViolation,
                     QStringLiteral("%1: %2 values, expected at least %3").arg(QLatin1String(what)).arg(values->size()).arg(atLeast)};
    return values;
}

// The largest "next free id" of the members: an id no member has used yet.
Result<quint32> agreedId(qint64 largest)
{
    if (largest <= 0 || largest > qint64(detail::MaxCommunicatorId))
        return Error{ErrorCode::BadConfiguration, QStringLiteral("no communicator ids left (next would be %1)").arg(largest)};
    return quint32(largest);
}

template<typename T>
Operation<T> heldResult(const std::shared_ptr<RequestState> &state, std::shared_ptr<T> holder)
{
    return Operation<T>(Request(state), [holder](const Request &r) -> Result<T> {
        if (auto ok = r.wait(); !ok)
            return ok.error();
        return *holder;
    });
}

template<typename T>
Operation<T> refused(Error error)
{
    auto state = CommunicatorAccess::failedState(std::move(error));
    return Operation<T>(Request(state), [](const Request &r) -> Result<T> { return r.wait().error(); });
}

} // namespace

// ---------------------------------------------------------------- one phase

Operation<void> Communicator::barrier() const
{
    if (auto no = refusal(m_data.get(), "barrier"))
        return sendOperation(failed(*no));
    auto op = std::make_shared<detail::BarrierOp>(setupFor(*m_data, m_data->takeSequence(), "barrier"));
    op->start();
    return sendOperation(Request(op->request()));
}

Communicator::Started Communicator::startBcast(Payload payload, int root, const BcastOptions &options) const
{
    if (auto no = refusal(m_data.get(), "bcast"))
        return {failed(*no), std::make_shared<CollectiveResult>()};
    auto op = std::make_shared<detail::BcastOp>(setupFor(*m_data, m_data->takeSequence(), "bcast"), root,
                                                std::move(payload), options);
    op->start();
    return {Request(op->request()), op->result()};
}

Communicator::Started Communicator::startScatter(Result<QList<Payload>> parts, int root) const
{
    if (auto no = refusal(m_data.get(), "scatter"))
        return {failed(*no), std::make_shared<CollectiveResult>()};
    auto op = std::make_shared<detail::ScatterOp>(setupFor(*m_data, m_data->takeSequence(), "scatter"),
                                                  std::move(parts), root);
    op->start();
    return {Request(op->request()), op->result()};
}

Communicator::Started Communicator::startGather(Payload payload, int root, detail::ExchangeList into) const
{
    if (auto no = refusal(m_data.get(), "gather"))
        return {failed(*no), std::make_shared<CollectiveResult>()};
    auto op = std::make_shared<detail::GatherOp>(setupFor(*m_data, m_data->takeSequence(), "gather"),
                                                 std::move(payload), root, std::move(into));
    op->start();
    return {Request(op->request()), op->result()};
}

Communicator::Started Communicator::startExchange(Result<QList<Payload>> parts, detail::ExchangeList into) const
{
    const bool all = parts && parts->size() == 1;
    const char *name = all ? "allgather" : "alltoall";
    if (auto no = refusal(m_data.get(), name))
        return {failed(*no), std::make_shared<CollectiveResult>()};
    auto op = std::make_shared<detail::ExchangeOp>(setupFor(*m_data, m_data->takeSequence(), name), std::move(parts),
                                                   std::move(into));
    op->start();
    return {Request(op->request()), op->result()};
}

// ---------------------------------------------------------------- reduce, allreduce

namespace {

// What decideAllreduce() reads of a contribution and its op.
detail::AllreduceShape shapeOf(const Payload &payload, const Result<detail::Combiner> &combiner, int ranks)
{
    detail::AllreduceShape shape;
    shape.ranks = ranks;
    shape.bytes = payload.bytes.size();
    shape.items = payload.count;
    shape.commutative = combiner && combiner->commutative;
    shape.fixedSizeItems = combiner && combiner->itemBytes > 0 && shape.bytes == shape.items * combiner->itemBytes;
    return shape;
}

// Once per process: a loop of allreduces would repeat it every call.
void warnForcedNotRun(AllreduceAlgorithm forced, AllreduceAlgorithm chosen)
{
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true))
        qCWarning(lcComm).noquote() << QStringLiteral("allreduce: %1 was forced but cannot run this call (it needs a "
                                                      "commutative op on fixed-size items, one per rank at least); "
                                                      "%2 runs instead")
                                           .arg(allreduceAlgorithmName(forced), allreduceAlgorithmName(chosen));
}

std::optional<Error> problemOf(const Result<detail::Combiner> &combiner)
{
    return combiner ? std::nullopt : std::optional<Error>(combiner.error());
}

// Reduce along the binomial tree, which keeps the contribution, or results
// made of it, past the caller's owner (a bcast phase forwards it later):
// its own copy.
std::shared_ptr<detail::ReductionOp> reductionOp(const CommunicatorData &d, quint32 sequence, const char *name,
                                                 Payload payload, const Result<detail::Combiner> &combiner, int root)
{
    payload.bytes = BufferPool::owned(std::move(payload.bytes));
    return std::make_shared<detail::ReductionOp>(setupFor(d, sequence, name), std::move(payload),
                                                 combiner ? *combiner : detail::Combiner{}, root, problemOf(combiner));
}

} // namespace

Communicator::Started Communicator::startReduce(Payload payload, Result<detail::Combiner> combiner, int root) const
{
    if (auto no = refusal(m_data.get(), "reduce"))
        return {failed(*no), std::make_shared<CollectiveResult>()};
    auto reduce = reductionOp(*m_data, m_data->takeSequence(), "reduce", std::move(payload), combiner, root);
    reduce->start();
    return {Request(reduce->request()), reduce->result()};
}

// Every algorithm reserves two sequence numbers, since reduce + bcast takes
// two. Each phase runs even if the one before failed here, poisoned, so
// that no rank waits for a phase that another rank will never start.
Communicator::Started Communicator::startAllreduce(Payload payload, Result<detail::Combiner> combiner,
                                                   AllreduceOptions options) const
{
    const char *name = "allreduce";
    if (auto no = refusal(m_data.get(), name))
        return {failed(*no), std::make_shared<CollectiveResult>()};
    const quint32 first = m_data->takeSequence(2);
    const auto forced = detail::forcedAlgorithm(options.algorithm, m_data->router->forcedAlgorithms().allreduce);
    const auto algorithm = detail::decideAllreduce(shapeOf(payload, combiner, m_data->size()),
                                                   m_data->router->links().mediumModel(), forced);
    if (combiner && forced != AllreduceAlgorithm::Auto && algorithm != forced)
        warnForcedNotRun(forced, algorithm);
    m_data->router->setLastAllreduceAlgorithm(algorithm);
    // One-phase algorithms use `first` only. A rank whose contribution
    // differs took reduce + bcast and may wait in the bcast: a failure here
    // tells it too.
    const auto data = m_data;
    const auto onePhase = [data, first](const std::shared_ptr<detail::CollectiveOp> &op) -> Started {
        op->request()->whenFinished([op, data, first] {
            if (!outcomeOf(op->request())) {
                auto bcast = std::make_shared<detail::BcastOp>(setupFor(*data, first + 1, "allreduce"), 0, Payload{},
                                                               BcastOptions{});
                bcast->poison(outcomeOf(op->request()).error());
                bcast->start();
            }
        });
        op->start();
        return {Request(op->request()), op->result()};
    };
    switch (algorithm) {
    case AllreduceAlgorithm::RecursiveDoubling:
        return onePhase(std::make_shared<detail::AllreduceOp>(setupFor(*m_data, first, name), std::move(payload),
                                                              combiner ? *combiner : detail::Combiner{},
                                                              problemOf(combiner)));
    case AllreduceAlgorithm::Ring:
        // The ring keeps a view of the caller's items as long as their owner
        // lets it (Payload::owner); it copies them only if nothing owns them.
        return onePhase(std::make_shared<detail::RingAllreduceOp>(setupFor(*m_data, first, name), std::move(payload),
                                                                  *combiner));
    case AllreduceAlgorithm::RecursiveHalving:
        // Like the ring, it reads the caller's items in place while their owner keeps them.
        return onePhase(std::make_shared<detail::HalvingAllreduceOp>(setupFor(*m_data, first, name),
                                                                     std::move(payload), *combiner));
    case AllreduceAlgorithm::Auto: // decided by now
    case AllreduceAlgorithm::ReduceBcast:
        break;
    }
    auto reduce = reductionOp(*m_data, first, name, std::move(payload), combiner, 0);
    auto outer = newState(m_data->collectiveContext());
    auto result = std::make_shared<CollectiveResult>();
    reduce->request()->whenFinished([reduce, outer, result, data, first] {
        const Result<Status> reduced = outcomeOf(reduce->request());
        const bool atRoot = data->rank() == 0;
        auto bcast = std::make_shared<detail::BcastOp>(setupFor(*data, first + 1, "allreduce"), 0,
                                                       atRoot && reduced ? reduce->result()->payload : Payload{},
                                                       BcastOptions{});
        if (!reduced)
            bcast->poison(reduced.error());
        bcast->request()->whenFinished([bcast, outer, result, reduced] {
            Result<Status> outcome = reduced ? outcomeOf(bcast->request()) : reduced;
            if (outcome) {
                *result = *bcast->result();
                outcome->source = 0;
            }
            outer->complete(outcome, result->payload);
        });
        bcast->start();
    });
    reduce->start();
    return {Request(outer), result};
}

// ---------------------------------------------------------------- dup, split

namespace {

// Every rank's values, gathered to every rank; `then` turns them into the
// new communicator (run once, on the thread that completes the exchange).
using Build = std::function<Result<Communicator>(const QList<QList<qint64>> &all)>;

Operation<Communicator> exchangeThenBuild(const std::shared_ptr<const CommunicatorData> &data, const char *name,
                                          const QList<qint64> &mine, Build build)
{
    auto op = std::make_shared<detail::ExchangeOp>(setupFor(*data, data->takeSequence(), name),
                                                   QList<Payload>{longs(mine)});
    auto outer = newState(data->collectiveContext());
    auto holder = std::make_shared<Communicator>();
    op->request()->whenFinished([op, outer, holder, build = std::move(build), name, mine] {
        Result<Status> outcome = outcomeOf(op->request());
        if (outcome) {
            QList<QList<qint64>> all;
            for (qsizetype r = 0; r < op->result()->parts.size() && outcome; ++r) {
                auto values = longsOf(op->result()->parts.at(r), mine.size(), name);
                if (!values)
                    outcome = detail::partError(int(r), values.error());
                else
                    all.append(*values);
            }
            if (outcome) {
                auto built = build(all);
                if (built)
                    *holder = *built;
                else
                    outcome = built.error();
            }
        }
        outer->complete(outcome);
    });
    op->start();
    return heldResult<Communicator>(outer, holder);
}

} // namespace

Operation<Communicator> Communicator::dup() const
{
    if (auto no = refusal(m_data.get(), "dup"))
        return refused<Communicator>(*no);
    const auto data = m_data;
    return exchangeThenBuild(data, "dup", {qint64(data->router->nextFreeId())},
                             [data](const QList<QList<qint64>> &all) -> Result<Communicator> {
                                 qint64 largest = 0;
                                 for (const auto &v : all)
                                     largest = std::max(largest, v.at(0));
                                 const auto id = agreedId(largest);
                                 if (!id)
                                     return id.error();
                                 data->router->claimId(*id);
                                 return CommunicatorAccess::make(detail::makeGroupData(*data, *id, data->members()));
                             });
}

quint32 Communicator::unusedId() const
{
    return m_data ? m_data->router->nextFreeId() : 0;
}

Result<Communicator> Communicator::createGroup(const QList<int> &ranks, quint32 id) const
{
    if (auto no = refusal(m_data.get(), "createGroup", false))
        return *no;
    if (auto ok = agreedId(id); !ok)
        return ok.error();
    QList<int> group;
    for (int rank : ranks) {
        const int worldRank = m_data->worldRank(rank);
        if (worldRank == NoRank)
            return Error{ErrorCode::InvalidRank, QStringLiteral("createGroup: no rank %1 in a communicator of %2")
                                                     .arg(rank).arg(m_data->size())};
        if (group.contains(worldRank))
            return Error{ErrorCode::BadConfiguration, QStringLiteral("createGroup: rank %1 given twice").arg(rank)};
        group.append(worldRank);
    }
    if (!ranks.contains(m_data->rank()))
        return Error{ErrorCode::BadConfiguration,
                     QStringLiteral("createGroup: this node (rank %1) is not in the group").arg(m_data->rank())};
    m_data->router->claimId(id);
    return CommunicatorAccess::make(detail::makeGroupData(*m_data, id, group));
}

Operation<Communicator> Communicator::split(int color, int key) const
{
    if (auto no = refusal(m_data.get(), "split"))
        return refused<Communicator>(*no);
    const auto data = m_data;
    const int me = data->rank();
    return exchangeThenBuild(
        data, "split", {qint64(color), qint64(key), qint64(data->router->nextFreeId())},
        [data, color, me](const QList<QList<qint64>> &all) -> Result<Communicator> {
            qint64 largest = 0;
            struct Member
            {
                qint64 key;
                int rank;
            };
            QList<Member> members;
            for (int r = 0; r < all.size(); ++r) {
                const qint64 c = all.at(r).at(0);
                if (c < 0 && c != Undefined)
                    return Error{ErrorCode::BadConfiguration,
                                 QStringLiteral("split: rank %1 passed color %2 (colors are >= 0, or Undefined)")
                                     .arg(r).arg(c)};
                largest = std::max(largest, all.at(r).at(2));
                if (c == color && color != Undefined)
                    members.append({all.at(r).at(1), r});
            }
            const auto id = agreedId(largest);
            if (!id)
                return id.error();
            // Every rank claims the id, even one left out, so that ids stay
            // ahead of every communicator any member has seen.
            data->router->claimId(*id);
            if (color == Undefined)
                return Communicator();
            std::stable_sort(members.begin(), members.end(), [](const Member &a, const Member &b) {
                return a.key != b.key ? a.key < b.key : a.rank < b.rank;
            });
            QList<int> group;
            for (const Member &m : members)
                group.append(data->worldRank(m.rank));
            Q_ASSERT(group.contains(data->worldRank(me)));
            // The colors' groups are disjoint, so they may share the id.
            return CommunicatorAccess::make(detail::makeGroupData(*data, *id, group));
        });
}

// ---------------------------------------------------------------- intercommunicators

namespace {

// Phases of create() and merge(): a local exchange, the leaders talking
// across, a bcast of what the leader learnt. Kept alive by its callbacks.
struct InterChain : std::enable_shared_from_this<InterChain>
{
    std::shared_ptr<const CommunicatorData> local;
    quint32 firstSequence = 0;
    int leaderRank = 0; // in `local`
    bool leader = false;
    const char *name = "";
    std::shared_ptr<RequestState> outer;
    // Phase 1 result: every local rank's values.
    QList<QList<qint64>> localValues;
    // What the leader learnt across (bcast to the group in phase 3).
    QList<qint64> remoteValues;
    std::function<void(const std::shared_ptr<InterChain> &)> across; // the leader's phase 2
    std::function<Result<Status>(const std::shared_ptr<InterChain> &)> finish;

    void start(const QList<qint64> &mine)
    {
        auto self = shared_from_this();
        auto op = std::make_shared<detail::ExchangeOp>(setupFor(*local, firstSequence, name), QList<Payload>{longs(mine)});
        op->request()->whenFinished([self, op, width = mine.size()] {
            Result<Status> outcome = outcomeOf(op->request());
            for (qsizetype r = 0; outcome && r < op->result()->parts.size(); ++r) {
                auto values = longsOf(op->result()->parts.at(r), width, self->name);
                if (values)
                    self->localValues.append(*values);
                else
                    outcome = detail::partError(int(r), values.error());
            }
            if (!outcome)
                return self->spread(outcome.error());
            if (self->leader)
                return self->across(self);
            self->spread(std::nullopt);
        });
        op->start();
    }

    // Phase 3: the leader's findings (or its failure) to the whole group.
    void spread(std::optional<Error> problem)
    {
        auto self = shared_from_this();
        auto bcast = std::make_shared<detail::BcastOp>(setupFor(*local, firstSequence + 1, name), leaderRank,
                                                       leader && !problem ? longs(remoteValues) : Payload{},
                                                       BcastOptions{});
        if (problem)
            bcast->poison(*problem);
        bcast->request()->whenFinished([self, bcast, problem] {
            Result<Status> outcome = problem ? Result<Status>(*problem) : outcomeOf(bcast->request());
            if (outcome) {
                auto values = longsOf(bcast->result()->payload, 1, self->name);
                if (!values)
                    outcome = values.error();
                else
                    self->remoteValues = *values;
            }
            if (outcome)
                outcome = self->finish(self);
            self->outer->complete(outcome);
        });
        bcast->start();
    }
};

Result<QList<int>> groupFrom(const QList<qint64> &values, qsizetype from, int worldSize)
{
    QList<int> group;
    for (qsizetype i = from; i < values.size(); ++i) {
        if (values.at(i) < 0 || values.at(i) >= worldSize || group.contains(int(values.at(i))))
            return Error{ErrorCode::ProtocolViolation, QStringLiteral("the remote group names world rank %1 twice or "
                                                                      "out of range").arg(values.at(i))};
        group.append(int(values.at(i)));
    }
    return group;
}

std::shared_ptr<CommunicatorData> interData(const std::shared_ptr<const CommunicatorData> &local, quint32 id,
                                            const QList<int> &remote)
{
    auto d = detail::makeGroupData(*local, id, local->members());
    d->remote = remote;
    for (int r = 0; r < remote.size(); ++r)
        d->remoteRankOf.insert(remote.at(r), r);
    d->local = local;
    return d;
}

} // namespace

Operation<Intercommunicator> Intercommunicator::create(const Communicator &local, int localLeader,
                                                       const Communicator &peer, int remoteLeader, int tag)
{
    const auto &data = CommunicatorAccess::data(local);
    if (auto no = refusal(data.get(), "creating an intercommunicator"))
        return refused<Intercommunicator>(*no);
    if (localLeader < 0 || localLeader >= data->size())
        return refused<Intercommunicator>({ErrorCode::InvalidRank, QStringLiteral("local leader %1 is not a rank of "
                                                                                  "the local communicator").arg(localLeader)});
    auto chain = std::make_shared<InterChain>();
    chain->local = data;
    chain->firstSequence = data->takeSequence(2);
    chain->leaderRank = localLeader;
    chain->leader = data->rank() == localLeader;
    chain->name = "intercommunicator creation";
    chain->outer = newState(data->collectiveContext());
    auto holder = std::make_shared<Intercommunicator>();
    const auto peerData = CommunicatorAccess::data(peer);
    chain->across = [peerData, remoteLeader, tag](const std::shared_ptr<InterChain> &self) {
        if (!peerData || remoteLeader < 0 || remoteLeader >= peerData->peerCount() || tag < 0
            || peerData->peerWorldRank(remoteLeader) == peerData->world->rank())
            return self->spread(Error{ErrorCode::InvalidRank,
                                      QStringLiteral("the remote leader %1 is not another rank of the peer "
                                                     "communicator (or the tag %2 is negative)").arg(remoteLeader).arg(tag)});
        qint64 largest = 0;
        for (const auto &v : self->localValues)
            largest = std::max(largest, v.at(0));
        QList<qint64> introduction{largest};
        for (int w : self->local->members())
            introduction.append(w);
        auto sent = CommunicatorAccess::isend(peerData.get(), remoteLeader, tag, longs(introduction));
        auto received = CommunicatorAccess::irecv(peerData, remoteLeader, tag);
        auto both = std::make_shared<std::atomic<int>>(2);
        const auto done = [self, sent, received, both] {
            if (--*both != 0)
                return;
            if (auto s = outcomeOf(sent); !s)
                return self->spread(s.error());
            if (auto r = outcomeOf(received); !r)
                return self->spread(r.error());
            auto values = longsOf(received->payload(), 2, self->name);
            if (!values)
                return self->spread(values.error());
            self->remoteValues = *values;
            self->spread(std::nullopt);
        };
        sent->whenFinished(done);
        received->whenFinished(done);
    };
    chain->finish = [holder](const std::shared_ptr<InterChain> &self) -> Result<Status> {
        qint64 largest = self->remoteValues.at(0);
        for (const auto &v : self->localValues)
            largest = std::max(largest, v.at(0));
        const auto id = agreedId(largest);
        if (!id)
            return id.error();
        auto remote = groupFrom(self->remoteValues, 1, self->local->world->size());
        if (!remote)
            return remote.error();
        for (int w : *remote)
            if (self->local->rankOfWorldRank(w) != NoRank)
                return Error{ErrorCode::BadConfiguration,
                             QStringLiteral("the groups are not disjoint: world rank %1 is in both").arg(w)};
        self->local->router->claimId(*id);
        *holder = CommunicatorAccess::makeInter(interData(self->local, *id, *remote));
        return Status{};
    };
    chain->start({qint64(data->router->nextFreeId())});
    return heldResult<Intercommunicator>(chain->outer, holder);
}

int Intercommunicator::remoteSize() const
{
    return m_data ? m_data->remoteSize() : 0;
}

QList<int> Intercommunicator::remoteGroup() const
{
    return m_data ? m_data->remote : QList<int>();
}

Communicator Intercommunicator::localCommunicator() const
{
    return m_data ? CommunicatorAccess::make(m_data->local) : Communicator();
}

Operation<Communicator> Intercommunicator::merge(bool high) const
{
    if (!m_data || !m_data->isInter())
        return refused<Communicator>({ErrorCode::BadConfiguration, QStringLiteral("merge() of a null intercommunicator")});
    const auto inter = m_data;
    const auto local = inter->local;
    if (auto no = refusal(local.get(), "merge"))
        return refused<Communicator>(*no);
    auto chain = std::make_shared<InterChain>();
    chain->local = local;
    chain->firstSequence = local->takeSequence(2);
    const quint32 acrossSequence = inter->takeSequence();
    chain->leader = local->rank() == 0;
    chain->name = "merge";
    chain->outer = newState(local->collectiveContext());
    auto holder = std::make_shared<Communicator>();
    chain->across = [inter, acrossSequence](const std::shared_ptr<InterChain> &self) {
        qint64 largest = 0;
        for (const auto &v : self->localValues) {
            if (v.at(0) != self->localValues.first().at(0))
                return self->spread(Error{ErrorCode::BadConfiguration,
                                          QStringLiteral("merge: the ranks of one group passed different `high`")});
            largest = std::max(largest, v.at(1));
        }
        // The two leaders (rank 0 of each group), on the intercommunicator's context.
        detail::CollectiveSetup setup = setupFor(*inter, acrossSequence, "merge");
        setup.group = {inter->world->rank(), inter->remote.at(0)};
        setup.rank = 0;
        auto op = std::make_shared<detail::ExchangeOp>(setup, QList<Payload>{longs({self->localValues.first().at(0), largest})});
        op->request()->whenFinished([self, op] {
            Result<Status> outcome = outcomeOf(op->request());
            if (!outcome)
                return self->spread(outcome.error());
            auto values = longsOf(op->result()->parts.value(1), 2, self->name);
            if (!values)
                return self->spread(values.error());
            self->remoteValues = *values;
            self->spread(std::nullopt);
        });
        op->start();
    };
    chain->finish = [holder, inter](const std::shared_ptr<InterChain> &self) -> Result<Status> {
        const bool mine = self->localValues.first().at(0) != 0;
        const bool theirs = self->remoteValues.at(0) != 0;
        qint64 largest = self->remoteValues.value(1);
        for (const auto &v : self->localValues)
            largest = std::max(largest, v.at(1));
        const auto id = agreedId(largest);
        if (!id)
            return id.error();
        const QList<int> ours = self->local->members();
        const bool oursFirst = mine != theirs ? !mine : ours.first() < inter->remote.first();
        const QList<int> merged = oursFirst ? ours + inter->remote : inter->remote + ours;
        self->local->router->claimId(*id);
        *holder = CommunicatorAccess::make(detail::makeGroupData(*self->local, *id, merged));
        return Status{};
    };
    chain->start({high ? 1 : 0, qint64(local->router->nextFreeId())});
    return heldResult<Communicator>(chain->outer, holder);
}

} // namespace mmpi
