// mmpi::mp::Channel: one TCP connection of a ChannelGroup with an edu.rit.mp peer:
// the ID exchange, sends with PJ's codes (held at a high-water mark while the peer
// does not read), and what arrives, decoded, for the group's receives or its queue.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/mp/channelgroupoptions.h>
#include <mmpi/mp/codec.h>
#include <mmpi/mp/decoder.h>
#include <mmpi/mp/objectmessage.h>
#include <mmpi/mp/send.h>

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
    // as Byte goes out as code 1, quint8 as 10, quint16 as 11). Blocks, with
    // a local event loop, while flow control holds the message (see
    // sendNoWait()), as PJ's send blocks until written. Errors: LinkClosed
    // (not Open, or it ended while the message waited), TypeMismatch (see
    // canSendAs()), the channel's error if it failed meanwhile.
    template<Primitive T>
    Result<void> send(qint32 tag, std::span<const T> values, ItemType as = ItemTraits<T>::type)
    {
        return sendNoWait<T>(tag, values, as).wait();
    }
    template<Primitive T>
    Result<void> send(qint32 tag, const QList<T> &values, ItemType as = ItemTraits<T>::type)
    {
        return send<T>(tag, std::span<const T>(values.constData(), values.size()), as);
    }
    // A message as built by the caller. Codes 2, 12 and 13 are sent as PJ
    // sends them (1, 10, 11: PJ stalls on the others); code 9 is refused with
    // TypeMismatch because MMPI cannot produce Java serialization: send an
    // object message with the ObjectMessage it came with instead.
    Result<void> send(const Message &message) { return sendNoWait(message).wait(); }
    // An object message received from a peer (Received::objectMessage), sent
    // back or on verbatim: code 9, the same N, the same bytes, any tag.
    Result<void> send(qint32 tag, const ObjectMessage &object) { return sendNoWait(tag, object).wait(); }

    // The same sends without blocking. A message is handed to the socket at
    // once unless that would leave more than ChannelGroupOptions::highWaterMark
    // bytes unwritten; then it waits, after the ones already waiting, until
    // the peer has read enough. The Send finishes when the message is handed
    // to the socket (or with the error), and messages go out in the order
    // they were posted. Cancelling a waiting Send takes its message back.
    template<Primitive T>
    Send sendNoWait(qint32 tag, std::span<const T> values, ItemType as = ItemTraits<T>::type)
    {
        auto message = makeMessage<T>(tag, values, as);
        return message ? sendNoWait(*message) : refused(message.error());
    }
    template<Primitive T>
    Send sendNoWait(qint32 tag, const QList<T> &values, ItemType as = ItemTraits<T>::type)
    {
        return sendNoWait<T>(tag, std::span<const T>(values.constData(), values.size()), as);
    }
    Send sendNoWait(const Message &message);
    Send sendNoWait(qint32 tag, const ObjectMessage &object);

    // Bytes handed to the socket that have not been written yet.
    qint64 bytesToWrite() const;
    // Sends waiting for the peer to read (flow control), and their bytes.
    int waitingSends() const { return int(m_waiting.size()); }
    qint64 waitingBytes() const { return m_waitingBytes; }
    // Unmatched messages held for later receives.
    int queuedMessages() const { return int(m_queue.size()); }
    qint64 queuedBytes() const { return m_queuedBytes; }
    // Stop taking bytes from the peer until resumeReading(): the socket
    // buffers fill and TCP holds the sender. What was already read still
    // completes messages. For an app that must not read faster than it can
    // answer (mmpi-mp-echo, while the peer leaves its echoes unread).
    void pauseReading();
    void resumeReading();
    // True while the queue is full or pauseReading() holds the channel, and
    // the socket is left unread.
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
    struct Waiting
    {
        QByteArray bytes;
        std::shared_ptr<detail::IoRequestState<void>> state;
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
    static Send refused(Error error);
    Send post(const Message &message);
    bool hasRoomFor(qint64 bytes) const;
    void writeWaiting();
    void withdraw(const detail::IoRequestState<void> *state);
    void endWaiting(const Error &error);
    void readAgainIf(bool wasPaused);
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
    QList<Waiting> m_waiting;
    qint64 m_waitingBytes = 0;
    bool m_writingWaiting = false;
    bool m_pausedByApp = false;
};

} // namespace mmpi::mp
