#include <mmpi/comm/communicator.h>

#include "collectives/communicatoraccess.h"
#include "collectives/communicatordata.h"
#include "collectives/router.h"
#include "matcher.h"
#include "requeststate.h"

#include <mmpi/world/world.h>

namespace mmpi {

Communicator::Communicator(std::shared_ptr<const Data> data)
    : m_data(std::move(data))
{
}

Result<Communicator> Communicator::world(World &world)
{
    auto router = std::dynamic_pointer_cast<detail::Router>(world.messageSink());
    if (!router) {
        if (world.messageSink())
            return Error{ErrorCode::BadConfiguration,
                         QStringLiteral("the world already routes its messages elsewhere")};
        if (world.state() != World::State::Idle)
            return Error{ErrorCode::BadConfiguration,
                         QStringLiteral("make the world communicator before form(): messages may "
                                        "already have arrived")};
        router = std::make_shared<detail::Router>(&world);
        world.setMessageSink(router);
    }
    auto data = std::make_shared<Data>();
    data->world = &world;
    data->matcher = router->matcher();
    data->router = router;
    data->id = 0;
    data->wholeWorld = true;
    // Every handle of the world communicator takes collectives' sequence
    // numbers from one counter, or they would disagree with the other ranks.
    data->sequence = router->worldSequence();
    return Communicator(std::move(data));
}

Result<Communicator> Communicator::service(World &world)
{
    auto made = Communicator::world(world);
    if (!made)
        return made.error();
    auto data = std::make_shared<Data>(*made->m_data);
    data->id = detail::ServiceCommunicatorId;
    data->sequence = std::make_shared<std::atomic<quint32>>(0);
    return Communicator(std::move(data));
}

int Communicator::rank() const { return m_data ? m_data->rank() : NoRank; }
int Communicator::size() const { return m_data ? m_data->size() : 0; }
quint32 Communicator::id() const { return m_data ? m_data->id : 0; }
QList<int> Communicator::group() const { return m_data ? m_data->members() : QList<int>(); }
int Communicator::worldRank(int rank) const { return m_data ? m_data->worldRank(rank) : NoRank; }
int Communicator::rankOfWorldRank(int worldRank) const { return m_data ? m_data->rankOfWorldRank(worldRank) : NoRank; }
bool Communicator::isInter() const { return m_data && m_data->isInter(); }

Request Communicator::failed(Error error)
{
    return Request(detail::CommunicatorAccess::failedState(std::move(error)));
}

Request Communicator::isendPayload(int destination, int tag, Payload payload) const
{
    return Request(detail::CommunicatorAccess::isend(m_data.get(), destination, tag, std::move(payload)));
}

Request Communicator::irecv(int source, int tag) const
{
    return Request(detail::CommunicatorAccess::irecv(m_data, source, tag));
}

Operation<void> Communicator::sendOperation(Request request)
{
    return Operation<void>(std::move(request), [](const Request &r) -> Result<void> {
        if (auto ok = r.wait(); !ok)
            return ok.error();
        return success();
    });
}

Result<Status> Communicator::probe(int source, int tag) const
{
    if (!m_data)
        return Error{ErrorCode::NotFormed, QStringLiteral("probe on a null communicator")};
    if (auto why = m_data->router->revoked(m_data->id))
        return *why;
    const int from = source == AnySource ? AnySource : m_data->peerWorldRank(source);
    if (from == NoRank)
        return Error{ErrorCode::InvalidRank, QStringLiteral("rank %1 is not in this communicator").arg(source)};
    auto status = m_data->matcher->probe(m_data->id, from, tag);
    if (status && m_data->translates())
        status->source = m_data->peerRankOfWorldRank(status->source);
    return status;
}

void Communicator::revoke(const Error &reason, RevokeScope scope) const
{
    if (!m_data)
        return;
    QList<int> members;
    if (scope == RevokeScope::AllMembers && m_data->world->state() == World::State::Formed) {
        members = m_data->members();
        for (int rank : m_data->remote) // an intercommunicator's other group
            if (!members.contains(rank))
                members.append(rank);
    }
    m_data->router->revoke(m_data->id, {ErrorCode::Revoked, reason.message}, members);
}

// The epoch first: a collective started meanwhile on another thread either
// took a number of the old one, and is interrupted, or of the new one.
void Communicator::interrupt(const Error &reason) const
{
    if (m_data)
        m_data->router->interrupt(m_data->id, m_data->beginNextEpoch(), reason);
}

World *Communicator::world() const
{
    return m_data ? m_data->world : nullptr;
}

qsizetype Communicator::unexpectedMessages() const
{
    return m_data ? m_data->matcher->unexpectedCount() : 0;
}

std::optional<Error> Communicator::revoked() const
{
    return m_data ? m_data->router->revoked(m_data->id) : std::nullopt;
}

std::optional<Status> Communicator::iprobe(int source, int tag) const
{
    if (!m_data || m_data->router->revoked(m_data->id))
        return std::nullopt;
    const int from = source == AnySource ? AnySource : m_data->peerWorldRank(source);
    if (from == NoRank)
        return std::nullopt;
    auto status = m_data->matcher->iprobe(m_data->id, from, tag);
    if (status && m_data->translates())
        status->source = m_data->peerRankOfWorldRank(status->source);
    return status;
}

qint64 Communicator::unexpectedBytes() const
{
    return m_data ? m_data->matcher->unexpectedBytes() + m_data->router->collectives().earlyBytes() : 0;
}

Error Communicator::countError(const QString &what)
{
    return {ErrorCode::CountMismatch, what};
}

namespace detail {

std::shared_ptr<RequestState> CommunicatorAccess::failedState(Error error)
{
    auto state = std::make_shared<RequestState>(RequestState::Kind::Send, 0, AnySource, AnyTag);
    state->complete(std::move(error));
    return state;
}

std::shared_ptr<RequestState> CommunicatorAccess::isend(const CommunicatorData *d, int destination, int tag,
                                                        Payload payload)
{
    if (!d)
        return failedState({ErrorCode::NotFormed, QStringLiteral("send on a null communicator")});
    if (auto why = d->router->revoked(d->id))
        return failedState(*why);
    if (tag < 0)
        return failedState({ErrorCode::InvalidTag,
                            QStringLiteral("tag %1 is negative (user tags are 0..%2)").arg(tag).arg(MaxTag)});
    // The world communicator leaves range checks to the world (NotFormed first).
    const int to = d->wholeWorld && !d->isInter() ? destination : d->peerWorldRank(destination);
    if (to == NoRank)
        return failedState({ErrorCode::InvalidRank, QStringLiteral("rank %1 is not in this communicator of %2")
                                                        .arg(destination).arg(d->peerCount())});
    Frame frame;
    frame.header.kind = FrameKind::Data;
    frame.header.communicator = d->id;
    frame.header.tag = tag;
    frame.header.itemType = payload.itemType;
    frame.header.count = payload.count;
    frame.header.flags = detail::frameFlagsOf(payload);
    frame.payload = std::move(payload.bytes);
    frame.owner = std::move(payload.owner);
    const Status status{d->rank(), tag, frame.header.itemType, frame.header.count, frame.payload.size()};
    auto state = std::make_shared<RequestState>(RequestState::Kind::Send, d->id, destination, tag);
    // A send to a rank known gone waits for its refusal (LinkClosed); what
    // finished early and is lost with its rank, nodeLost tells.
    const qint64 bytes = frame.payload.size();
    std::shared_ptr<EagerSends> eager = d->router->eagerSends();
    if (d->matcher->isGone(to) || !eager->take(to, bytes))
        eager.reset();
    auto sent = d->world->sendFrame(to, std::move(frame), [state, status, eager, to, bytes](const Error &e) {
        if (eager)
            eager->release(to, bytes);
        state->complete(e.isError() ? Result<Status>(e) : Result<Status>(status));
    });
    if (!sent) {
        if (eager) // the completion will not run
            eager->release(to, bytes);
        state->complete(sent.error());
    } else if (eager) {
        state->complete(status);
    }
    return state;
}

std::shared_ptr<RequestState> CommunicatorAccess::irecv(const std::shared_ptr<const CommunicatorData> &d, int source,
                                                        int tag)
{
    if (!d)
        return failedState({ErrorCode::NotFormed, QStringLiteral("receive on a null communicator")});
    if (auto why = d->router->revoked(d->id))
        return failedState(*why);
    if (source != AnySource && (source < 0 || source >= d->peerCount()))
        return failedState({ErrorCode::InvalidRank, QStringLiteral("rank %1 is not in this communicator of %2")
                                                        .arg(source).arg(d->peerCount())});
    if (tag < AnyTag)
        return failedState({ErrorCode::InvalidTag,
                            QStringLiteral("tag %1 is negative (user tags are 0..%2)").arg(tag).arg(MaxTag)});
    const int from = source == AnySource ? AnySource : d->peerWorldRank(source);
    auto inner = std::make_shared<RequestState>(RequestState::Kind::Receive, d->id, from, tag);
    if (!d->translates()) {
        d->matcher->post(inner);
        return inner;
    }
    // The matcher speaks world ranks: a second state reports the source as a
    // rank of this communicator and cancels through the first.
    auto outer = std::make_shared<RequestState>(RequestState::Kind::Receive, d->id, source, tag);
    d->matcher->post(inner);
    outer->standsFor = inner;
    inner->whenFinished([outer, inner, d] {
        Result<Status> outcome = *inner->outcome();
        if (outcome)
            outcome->source = d->peerRankOfWorldRank(outcome->source);
        outer->complete(std::move(outcome), inner->payload());
    });
    return outer;
}

} // namespace detail

} // namespace mmpi
