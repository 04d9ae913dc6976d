// mmpi::mp::Channel: one TCP connection with an edu.rit.mp peer (PJ or MMPI).
// It exchanges the 4-byte channel group IDs, sends messages with the codes PJ
// sends, and decodes what arrives into its group's receives or its own bounded
// queue. Channels belong to a ChannelGroup and live on its thread.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/mp/channelgroupoptions.h>
#include <mmpi/mp/codec.h>
#include <mmpi/mp/decoder.h>

#include <QHostAddress>
#include <QList>
#include <QObject>

class QTcpSocket;
class QTimer;

namespace mmpi::mp {

class ChannelGroup;

class Channel : public QObject
{
    Q_OBJECT
    Q_PROPERTY(State state READ state NOTIFY stateChanged)
public:
    enum class State {
        Connecting,    // outgoing TCP connect in progress
        ExchangingIds, // waiting for the peer's 4-byte channel group ID
        Open,          // messages flow
        Closed,        // closed by us or by the peer at a message boundary
        Failed,        // error(): refused, timed out, bad bytes, cut mid-message
    };
    Q_ENUM(State)

    ~Channel() override;

    ChannelGroup *group() const { return m_group; }
    qint32 nearId() const;
    // The peer's channel group ID (PJ's cluster layer: its rank); -1 before Open.
    qint32 farId() const { return m_farId; }
    bool isIncoming() const { return m_incoming; }
    State state() const { return m_state; }
    bool isOpen() const { return m_state == State::Open; }
    // Why the channel failed (NoError otherwise).
    const Error &error() const { return m_error; }
    QString peerName() const { return m_peerName; }

    // Send `values` as `as` items, with the code PJ sends for `as` (so qint8
    // as Byte goes out as code 1, quint8 as 10, quint16 as 11). Queued on the
    // socket; errors: LinkClosed if not Open, TypeMismatch (see canSendAs()).
    template<Primitive T>
    Result<void> send(qint32 tag, std::span<const T> values, ItemType as = ItemTraits<T>::type)
    {
        auto message = makeMessage<T>(tag, values, as);
        if (!message)
            return message.error();
        return send(*message);
    }
    template<Primitive T>
    Result<void> send(qint32 tag, const QList<T> &values, ItemType as = ItemTraits<T>::type)
    {
        return send<T>(tag, std::span<const T>(values.constData(), values.size()), as);
    }
    // A message as built by the caller. Codes 2, 12 and 13 are sent as PJ
    // sends them (1, 10, 11: PJ stalls on the others); code 9 is refused with
    // TypeMismatch because MMPI cannot produce Java serialization.
    Result<void> send(const Message &message);

    // Bytes handed to the socket that have not been written yet.
    qint64 bytesToWrite() const;
    // Unmatched messages held for later receives.
    int queuedMessages() const { return int(m_queue.size()); }
    qint64 queuedBytes() const { return m_queuedBytes; }
    // True while the queue is full and the socket is left unread.
    bool isReadingPaused() const;

    // Flush what is queued for sending and close our end. There is no goodbye
    // message and we do not wait for the peer's FIN (PJ never sends one).
    void close();

Q_SIGNALS:
    void stateChanged(mmpi::mp::Channel::State state);
    void opened();
    // Closed without error: by close(), or the peer closed between messages.
    void closed();
    void failed(const mmpi::Error &error);
    // A message no receive wanted was queued.
    void messageQueued();

private:
    friend class ChannelGroup;
    struct Queued
    {
        Message message;
        quint64 arrival = 0;
    };

    Channel(ChannelGroup *group, QTcpSocket *socket, bool incoming, const ChannelGroupOptions &options);
    void connectToPeer(const QString &host, quint16 port);
    void onConnected();
    void onReadable();
    void readId();
    void readMessages();
    void onDisconnected();
    void maybeFinishAtEof();
    void onIdTimeout();
    void fail(Error error);
    void setState(State state);
    bool writeAll(const QByteArray &bytes);
    // Called by the group.
    void enqueue(Message message, quint64 arrival);
    Message take(qsizetype index);

    ChannelGroup *m_group;
    QTcpSocket *m_socket;
    QTimer *m_idTimer;
    bool m_incoming;
    ChannelGroupOptions m_options;
    Decoder m_decoder;
    State m_state;
    qint32 m_farId = -1;
    QByteArray m_idBytes;
    Error m_error;
    QString m_peerName;
    bool m_eof = false;
    QList<Queued> m_queue;
    qint64 m_queuedBytes = 0;
};

} // namespace mmpi::mp
