#include <mmpi/mp/channelgroup.h>

#include <mmpi/mp/logging.h>

#include "receivestate.h"

#include <QTcpServer>
#include <QTcpSocket>

namespace mmpi::mp {

ChannelGroup::ChannelGroup(qint32 id, ChannelGroupOptions options, QObject *parent)
    : QObject(parent), m_id(id), m_options(options)
{
}

ChannelGroup::~ChannelGroup()
{
    close();
    // Channels are children; they call forget() while we still exist.
    qDeleteAll(std::exchange(m_channels, {}));
}

Result<void> ChannelGroup::listen(const QHostAddress &address, quint16 port)
{
    if (!m_server) {
        m_server = new QTcpServer(this);
        connect(m_server, &QTcpServer::newConnection, this, &ChannelGroup::onNewConnection);
    }
    if (m_server->isListening())
        return Error(ErrorCode::ListenFailed, QStringLiteral("already listening on port %1").arg(m_server->serverPort()));
    if (!m_server->listen(address, port))
        return Error(ErrorCode::ListenFailed,
                     QStringLiteral("cannot listen on %1:%2: %3").arg(address.toString()).arg(port).arg(m_server->errorString()));
    qCDebug(lcMp) << "group" << m_id << "listening on" << address << m_server->serverPort();
    return success();
}

bool ChannelGroup::isListening() const
{
    return m_server && m_server->isListening();
}

quint16 ChannelGroup::serverPort() const
{
    return isListening() ? m_server->serverPort() : 0;
}

void ChannelGroup::onNewConnection()
{
    while (QTcpSocket *socket = m_server->nextPendingConnection())
        addChannel(new Channel(this, socket, true, m_options));
}

Channel *ChannelGroup::connectTo(const QString &host, quint16 port)
{
    auto *channel = addChannel(new Channel(this, new QTcpSocket, false, m_options));
    channel->connectToPeer(host, port);
    return channel;
}

Channel *ChannelGroup::addChannel(Channel *channel)
{
    m_channels.append(channel);
    return channel;
}

Channel *ChannelGroup::channel(qint32 farId) const
{
    for (auto it = m_channels.crbegin(); it != m_channels.crend(); ++it) {
        if ((*it)->isOpen() && (*it)->farId() == farId)
            return *it;
    }
    return nullptr;
}

Receive ChannelGroup::receive(const ReceiveSpec &spec)
{
    auto state = std::make_shared<detail::ReceiveState>(spec);
    Receive handle(state);
    if (spec.capacity < 0) {
        state->finish(Error(ErrorCode::BadConfiguration, QStringLiteral("negative receive capacity %1").arg(spec.capacity)));
        return handle;
    }
    if (spec.channel && !m_channels.contains(spec.channel)) {
        state->finish(Error(ErrorCode::BadConfiguration, QStringLiteral("the channel does not belong to this group")));
        return handle;
    }
    if (takeQueued(state))
        return handle;
    const Channel *channel = spec.channel;
    if (channel && (channel->state() == Channel::State::Closed || channel->state() == Channel::State::Failed)) {
        state->finish(channel->error().isError()
                          ? channel->error()
                          : Error(ErrorCode::LinkClosed, QStringLiteral("channel with %1 is closed").arg(channel->peerName())));
        return handle;
    }
    m_pending.append(state);
    std::weak_ptr<detail::ReceiveState> weak = state;
    state->withdraw = [this, weak] {
        if (auto s = weak.lock())
            m_pending.removeOne(s);
    };
    return handle;
}

bool ChannelGroup::matches(const ReceiveSpec &spec, const Channel *channel, const Message &message) const
{
    return (!spec.channel || spec.channel == channel) && spec.tags.contains(message.tag)
        && (!spec.typeCode || *spec.typeCode == message.typeCode);
}

// The oldest queued message the receive matches, across its channels.
bool ChannelGroup::takeQueued(const StatePtr &state)
{
    Channel *best = nullptr;
    qsizetype bestIndex = -1;
    quint64 bestArrival = 0;
    for (Channel *channel : std::as_const(m_channels)) {
        if (state->spec.channel && state->spec.channel != channel)
            continue;
        for (qsizetype i = 0; i < channel->m_queue.size(); ++i) {
            const auto &queued = channel->m_queue.at(i);
            if (!matches(state->spec, channel, queued.message))
                continue;
            if (!best || queued.arrival < bestArrival) {
                best = channel;
                bestIndex = i;
                bestArrival = queued.arrival;
            }
            break; // later ones in this channel arrived later
        }
    }
    if (!best)
        return false;
    complete(state, best, best->take(bestIndex));
    return true;
}

void ChannelGroup::deliver(Channel *channel, Message message)
{
    for (qsizetype i = 0; i < m_pending.size(); ++i) {
        if (matches(m_pending.at(i)->spec, channel, message)) {
            complete(m_pending.takeAt(i), channel, std::move(message));
            return;
        }
    }
    channel->enqueue(std::move(message), ++m_arrivals);
}

void ChannelGroup::complete(const StatePtr &state, Channel *channel, Message message)
{
    Received received;
    received.status.channel = channel;
    received.status.farId = channel->farId();
    received.status.tag = message.tag;
    received.status.typeCode = message.typeCode;
    received.status.count = message.count;
    // An object stream is one unit; other messages keep what fits and drop the
    // rest, as PJ reads extra items into nowhere.
    const qint32 kept = message.isObject() ? message.count : qMin(message.count, state->spec.capacity);
    received.status.kept = kept;
    message.items.truncate(qsizetype(kept) * bytesPerItem(message.typeCode));
    received.items = std::move(message.items);
    if (message.isObject())
        received.objectMessage = ObjectMessage(message.count, received.items);
    state->finish(std::move(received));
}

void ChannelGroup::channelStateChanged(Channel *channel)
{
    switch (channel->state()) {
    case Channel::State::Open:
        emit channelOpened(channel);
        break;
    case Channel::State::Closed:
        failPendingOn(channel);
        emit channelClosed(channel);
        break;
    case Channel::State::Failed:
        failPendingOn(channel);
        emit channelFailed(channel, channel->error());
        break;
    default:
        break;
    }
}

// Receives bound to a channel that ended can no longer match anything new;
// queued messages already went to them in receive().
void ChannelGroup::failPendingOn(Channel *channel)
{
    if (!channel)
        return;
    const Error error = channel->error().isError()
        ? channel->error()
        : Error(ErrorCode::LinkClosed, QStringLiteral("channel with %1 is closed").arg(channel->peerName()));
    for (qsizetype i = 0; i < m_pending.size();) {
        if (m_pending.at(i)->spec.channel == channel)
            m_pending.takeAt(i)->finish(error);
        else
            ++i;
    }
}

void ChannelGroup::forget(Channel *channel)
{
    failPendingOn(channel);
    m_channels.removeOne(channel);
}

void ChannelGroup::close()
{
    if (m_server)
        m_server->close();
    for (Channel *channel : std::as_const(m_channels))
        channel->close();
    for (const StatePtr &state : std::exchange(m_pending, {}))
        state->finish(Error(ErrorCode::Cancelled, QStringLiteral("channel group %1 closed").arg(m_id)));
}

} // namespace mmpi::mp
