#include <mmpi/comm/communicator.h>

#include "matcher.h"
#include "requeststate.h"

#include <mmpi/world/world.h>

namespace mmpi {

struct Communicator::Data
{
    World *world = nullptr;
    std::shared_ptr<detail::Matcher> matcher;
    quint32 id = 0;
};

Communicator::Communicator(std::shared_ptr<const Data> data)
    : m_data(std::move(data))
{
}

Result<Communicator> Communicator::world(World &world)
{
    auto matcher = std::dynamic_pointer_cast<detail::Matcher>(world.messageSink());
    if (!matcher) {
        if (world.messageSink())
            return Error{ErrorCode::BadConfiguration,
                         QStringLiteral("the world already routes its messages elsewhere")};
        if (world.state() != World::State::Idle)
            return Error{ErrorCode::BadConfiguration,
                         QStringLiteral("make the world communicator before form(): messages may "
                                        "already have arrived")};
        matcher = std::make_shared<detail::Matcher>(&world);
        world.setMessageSink(matcher);
    }
    return Communicator(std::make_shared<const Data>(Data{&world, matcher, 0}));
}

int Communicator::rank() const { return m_data ? m_data->world->rank() : NoRank; }
int Communicator::size() const { return m_data ? m_data->world->size() : 0; }
quint32 Communicator::id() const { return m_data ? m_data->id : 0; }

Request Communicator::failed(Error error)
{
    auto state = std::make_shared<detail::RequestState>(detail::RequestState::Kind::Send, 0, AnySource, AnyTag);
    state->complete(std::move(error));
    return Request(state);
}

Request Communicator::isendPayload(int destination, int tag, Payload payload) const
{
    if (!m_data)
        return failed({ErrorCode::NotFormed, QStringLiteral("send on a null communicator")});
    if (tag < 0)
        return failed({ErrorCode::InvalidTag, QStringLiteral("tag %1 is negative (user tags are 0..%2)")
                                                  .arg(tag).arg(MaxTag)});
    Frame frame;
    frame.header.kind = FrameKind::Data;
    frame.header.communicator = m_data->id;
    frame.header.tag = tag;
    frame.header.itemType = payload.itemType;
    frame.header.count = payload.count;
    frame.payload = std::move(payload.bytes);
    const Status status{rank(), tag, frame.header.itemType, frame.header.count, frame.payload.size()};
    auto state = std::make_shared<detail::RequestState>(detail::RequestState::Kind::Send, m_data->id,
                                                        destination, tag);
    auto sent = m_data->world->sendFrame(destination, std::move(frame), [state, status](const Error &e) {
        state->complete(e.isError() ? Result<Status>(e) : Result<Status>(status));
    });
    if (!sent)
        state->complete(sent.error());
    return Request(state);
}

Request Communicator::irecv(int source, int tag) const
{
    if (!m_data)
        return failed({ErrorCode::NotFormed, QStringLiteral("receive on a null communicator")});
    if (source != AnySource && (source < 0 || source >= size()))
        return failed({ErrorCode::InvalidRank,
                       QStringLiteral("rank %1 is not in this communicator of %2").arg(source).arg(size())});
    if (tag < AnyTag)
        return failed({ErrorCode::InvalidTag, QStringLiteral("tag %1 is negative (user tags are 0..%2)")
                                                  .arg(tag).arg(MaxTag)});
    auto state = std::make_shared<detail::RequestState>(detail::RequestState::Kind::Receive, m_data->id,
                                                        source, tag);
    m_data->matcher->post(state);
    return Request(state);
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
    return m_data->matcher->probe(m_data->id, source, tag);
}

std::optional<Status> Communicator::iprobe(int source, int tag) const
{
    if (!m_data)
        return std::nullopt;
    return m_data->matcher->iprobe(m_data->id, source, tag);
}

qint64 Communicator::unexpectedBytes() const
{
    return m_data ? m_data->matcher->unexpectedBytes() : 0;
}

} // namespace mmpi
