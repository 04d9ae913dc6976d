// mmpi::mp::ChannelGroup: the MMPI side of PJ's ChannelGroup. It has its own
// channel group ID, listens and/or connects, keeps its channels by far ID, and
// matches receives (one channel or any, tag range, exact type code) against
// what arrives. Single-threaded: use it from the thread it lives on.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/mp/channel.h>
#include <mmpi/mp/channelgroupoptions.h>
#include <mmpi/mp/receive.h>
#include <mmpi/mp/receivespec.h>

#include <QHostAddress>
#include <QList>
#include <QObject>

#include <memory>

class QTcpServer;

namespace mmpi::mp {

namespace detail {
class ReceiveState;
}

class ChannelGroup : public QObject
{
    Q_OBJECT
public:
    explicit ChannelGroup(qint32 id = 0, ChannelGroupOptions options = {}, QObject *parent = nullptr);
    ~ChannelGroup() override;

    // Sent to every peer when a channel opens (PJ's cluster layer: the rank).
    qint32 id() const { return m_id; }
    const ChannelGroupOptions &options() const { return m_options; }

    // Accept PJ (or MMPI) peers. Port 0 picks a free one (serverPort()).
    // Errors: ListenFailed.
    Result<void> listen(const QHostAddress &address, quint16 port = 0);
    bool isListening() const;
    quint16 serverPort() const;

    // Open a channel to a peer that listens; the channel reports opened() or
    // failed(), and so does the group (channelOpened / channelFailed).
    Channel *connectTo(const QString &host, quint16 port);

    // The most recently opened channel whose peer has `farId` and is still
    // open, or null. Several peers may use the same ID (PJ's default is 0).
    Channel *channel(qint32 farId) const;
    // Every channel the group still holds, in any state. A closed or failed
    // channel stays until deleted, so queued messages can still be received.
    QList<Channel *> channels() const { return m_channels; }

    // Post a receive. It takes the oldest queued message that matches (any
    // channel: the oldest by arrival); else the first message to arrive that
    // matches. A receive on a given channel fails once that channel is closed
    // or failed with nothing matching queued; a receive on any channel waits
    // until cancelled or the group closes. Errors: BadConfiguration (negative
    // capacity, a channel of another group).
    Receive receive(const ReceiveSpec &spec);

    // Stop listening, close every channel, cancel every pending receive.
    void close();

Q_SIGNALS:
    void channelOpened(mmpi::mp::Channel *channel);
    void channelClosed(mmpi::mp::Channel *channel);
    void channelFailed(mmpi::mp::Channel *channel, const mmpi::Error &error);

private:
    friend class Channel;
    using StatePtr = std::shared_ptr<detail::ReceiveState>;

    void onNewConnection();
    Channel *addChannel(Channel *channel);
    // From Channel.
    void deliver(Channel *channel, Message message);
    void channelStateChanged(Channel *channel);
    void forget(Channel *channel);

    bool matches(const ReceiveSpec &spec, const Channel *channel, const Message &message) const;
    bool takeQueued(const StatePtr &state);
    void complete(const StatePtr &state, Channel *channel, Message message);
    void failPendingOn(Channel *channel);

    qint32 m_id;
    ChannelGroupOptions m_options;
    QTcpServer *m_server = nullptr;
    QList<Channel *> m_channels;
    QList<StatePtr> m_pending;
    quint64 m_arrivals = 0;
};

} // namespace mmpi::mp
