#include <mmpi/mp/channel.h>

#include <mmpi/mp/channelgroup.h>
#include <mmpi/mp/logging.h>

#include "iorequeststate.h"

#include <QMetaEnum>
#include <QTcpSocket>
#include <QTimer>
#include <QtEndian>

namespace mmpi::mp {

namespace {
QByteArray idBytes(qint32 id)
{
    QByteArray bytes(IdSize, Qt::Uninitialized);
    qToBigEndian(id, bytes.data());
    return bytes;
}

// PJ stalls on codes it never sends itself; send those it uses instead.
quint8 pjCode(quint8 code)
{
    switch (ItemType(code)) {
    case ItemType::Byte: return quint8(ItemType::Boolean);
    case ItemType::UnsignedByte: return quint8(ItemType::SignedByte);
    case ItemType::UnsignedShort: return quint8(ItemType::SignedShort);
    default: return code;
    }
}
} // namespace

Channel::Channel(ChannelGroup *group, QTcpSocket *socket, bool incoming, const ChannelGroupOptions &options)
    : QObject(group),
      m_group(group),
      m_socket(socket),
      m_idTimer(new QTimer(this)),
      m_incoming(incoming),
      m_options(options),
      m_decoder(options.maxMessageSize),
      m_state(incoming ? State::ExchangingIds : State::Connecting)
{
    m_socket->setParent(this);
    m_socket->setReadBufferSize(m_options.readChunkSize);
    m_idTimer->setSingleShot(true);
    m_idTimer->setTimerType(Qt::PreciseTimer); // a coarse timer may fire 5% early
    connect(m_idTimer, &QTimer::timeout, this, &Channel::onIdTimeout);
    connect(m_socket, &QTcpSocket::connected, this, &Channel::onConnected);
    connect(m_socket, &QTcpSocket::readyRead, this, &Channel::onReadable);
    connect(m_socket, &QTcpSocket::bytesWritten, this, &Channel::writeWaiting);
    connect(m_socket, &QTcpSocket::disconnected, this, &Channel::onDisconnected);
    connect(m_socket, &QTcpSocket::errorOccurred, this, [this](QAbstractSocket::SocketError code) {
        if (code == QAbstractSocket::RemoteHostClosedError)
            return; // onDisconnected() decides whether that was clean
        const ErrorCode mmpiCode = code == QAbstractSocket::ConnectionRefusedError ? ErrorCode::ConnectionRefused
            : code == QAbstractSocket::HostNotFoundError                        ? ErrorCode::BadAddress
            : m_state == State::Connecting                                      ? ErrorCode::ConnectFailed
                                                                                : ErrorCode::LinkError;
        fail(Error(mmpiCode, QStringLiteral("%1: %2").arg(m_peerName, m_socket->errorString())));
    });
    if (incoming) {
        m_peerName = QStringLiteral("%1:%2").arg(m_socket->peerAddress().toString()).arg(m_socket->peerPort());
        m_idTimer->start(m_options.idTimeout);
        // Bytes may have come with the connection already.
        QTimer::singleShot(0, this, &Channel::onReadable);
    }
}

Channel::~Channel()
{
    m_socket->disconnect(this);
    m_socket->abort();
    endWaiting(Error(ErrorCode::LinkClosed, QStringLiteral("channel with %1 deleted before its message was written").arg(m_peerName)));
    m_group->forget(this);
}

qint32 Channel::nearId() const
{
    return m_group->id();
}

void Channel::connectToPeer(const QString &host, quint16 port)
{
    m_peerName = QStringLiteral("%1:%2").arg(host).arg(port);
    m_idTimer->start(m_options.idTimeout);
    m_socket->connectToHost(host, port);
}

void Channel::onConnected()
{
    setState(State::ExchangingIds);
    // PJ reads the ID with one read() and drops the connection if it comes
    // split, so the 4 bytes go out in one write.
    if (!writeAll(idBytes(nearId())))
        return;
    qCDebug(lcMp) << "connected to" << m_peerName << "sent id" << nearId();
    onReadable();
}

bool Channel::writeAll(const QByteArray &bytes)
{
    if (m_socket->write(bytes) != bytes.size()) {
        fail(Error(ErrorCode::LinkError, QStringLiteral("%1: write failed: %2").arg(m_peerName, m_socket->errorString())));
        return false;
    }
    m_socket->flush();
    return true;
}

void Channel::onReadable()
{
    if (m_state == State::ExchangingIds)
        readId();
    if (m_state == State::Open)
        readMessages();
}

void Channel::readId()
{
    m_idBytes.append(m_socket->read(IdSize - m_idBytes.size()));
    if (m_idBytes.size() < IdSize)
        return;
    m_idTimer->stop();
    m_farId = qFromBigEndian<qint32>(m_idBytes.constData());
    if (m_incoming && !writeAll(idBytes(nearId())))
        return;
    qCDebug(lcMp) << "channel with" << m_peerName << "open, far id" << m_farId;
    setState(State::Open);
    emit opened();
}

void Channel::readMessages()
{
    while (m_state == State::Open && !isReadingPaused() && m_socket->bytesAvailable() > 0) {
        const QByteArray chunk = m_socket->read(qMin(m_socket->bytesAvailable(), m_options.readChunkSize));
        const auto fed = m_decoder.feed(chunk);
        // Messages completed before any bad byte still count.
        while (auto message = m_decoder.next())
            m_group->deliver(this, std::move(*message));
        if (!fed) {
            fail(Error(fed.error().code, QStringLiteral("%1: %2").arg(m_peerName, fed.error().message)));
            return;
        }
    }
    maybeFinishAtEof();
}

void Channel::onDisconnected()
{
    m_eof = true;
    if (m_state == State::Connecting || m_state == State::ExchangingIds) {
        fail(Error(ErrorCode::ProtocolViolation,
                   QStringLiteral("%1 closed the connection after %2 of the 4 bytes of its channel group ID")
                       .arg(m_peerName).arg(m_idBytes.size())));
        return;
    }
    if (m_state == State::Open)
        readMessages();
}

// The stream ended: clean only at a message boundary, and only once the
// queue has let us read everything that came before the end.
void Channel::maybeFinishAtEof()
{
    if (!m_eof || m_state != State::Open || m_socket->bytesAvailable() > 0)
        return;
    if (auto ok = m_decoder.finish(); !ok) {
        fail(Error(ok.error().code, QStringLiteral("%1: %2").arg(m_peerName, ok.error().message)));
        return;
    }
    qCDebug(lcMp) << m_peerName << "closed the channel";
    setState(State::Closed);
    emit closed();
}

void Channel::onIdTimeout()
{
    const qint64 ms = m_options.idTimeout.count();
    if (m_state == State::Connecting)
        fail(Error(ErrorCode::ConnectFailed, QStringLiteral("could not connect to %1 within %2 ms").arg(m_peerName).arg(ms)));
    else if (m_state == State::ExchangingIds)
        fail(Error(ErrorCode::ProtocolViolation,
                   QStringLiteral("%1 sent %2 of the 4 bytes of its channel group ID within %3 ms")
                       .arg(m_peerName).arg(m_idBytes.size()).arg(ms)));
}

void Channel::fail(Error error)
{
    if (m_state == State::Closed || m_state == State::Failed)
        return;
    qCWarning(lcMp).noquote() << "channel failed:" << error.toString();
    m_error = error;
    m_idTimer->stop();
    // abort() emits disconnected(); that must not report the end a second time.
    m_socket->disconnect(this);
    m_socket->abort();
    setState(State::Failed);
    emit failed(m_error);
}

void Channel::setState(State state)
{
    if (m_state == state)
        return;
    m_state = state;
    // A send waiting for room can never be written once the channel ended.
    if (state == State::Closed || state == State::Failed)
        endWaiting(m_error.isError() ? m_error
                                     : Error(ErrorCode::LinkClosed,
                                             QStringLiteral("channel with %1 closed before the peer read enough for the message").arg(m_peerName)));
    emit stateChanged(state);
    m_group->channelStateChanged(this);
}

Send Channel::sendNoWait(const Message &message)
{
    if (message.isObject())
        return refused(Error(ErrorCode::TypeMismatch,
                             QStringLiteral("MMPI does not write object messages (code 9): it cannot produce Java "
                                            "serialization; only an object message received from a peer can be sent, "
                                            "verbatim, with its ObjectMessage")));
    Message out = message;
    out.typeCode = pjCode(message.typeCode);
    return post(out);
}

Send Channel::sendNoWait(qint32 tag, const ObjectMessage &object)
{
    return post(Message{tag, quint8(ItemType::Object), object.count(), object.bytes()});
}

Send Channel::refused(Error error)
{
    auto state = std::make_shared<detail::IoRequestState<void>>();
    state->finish(std::move(error));
    return Send(state);
}

Send Channel::post(const Message &message)
{
    if (m_state != State::Open)
        return refused(Error(ErrorCode::LinkClosed,
                             QStringLiteral("channel with %1 is %2, not open")
                                 .arg(m_peerName, QString::fromLatin1(QMetaEnum::fromType<State>().valueToKey(int(m_state))))));
    auto bytes = encodeMessage(message);
    if (!bytes)
        return refused(bytes.error());
    auto state = std::make_shared<detail::IoRequestState<void>>();
    m_waitingBytes += bytes->size();
    m_waiting.append({std::move(*bytes), state});
    state->withdraw = [this, raw = state.get()] { withdraw(raw); };
    writeWaiting();
    if (!state->isFinished())
        qCDebug(lcMp).noquote() << QStringLiteral("%1 has %2 bytes unwritten: a send of tag %3 waits (%4 waiting)")
                                       .arg(m_peerName).arg(bytesToWrite()).arg(message.tag).arg(m_waiting.size());
    return Send(state);
}

// Qt's buffer grows only once the kernel's is full, that is once the peer
// stops taking bytes, so the mark bounds what such a peer costs us.
bool Channel::hasRoomFor(qint64 bytes) const
{
    const qint64 unwritten = m_socket->bytesToWrite();
    return unwritten == 0 || unwritten + bytes <= m_options.highWaterMark;
}

// Also runs on bytesWritten(): the peer read, so waiting sends may fit now.
void Channel::writeWaiting()
{
    // flush() may emit bytesWritten() from inside this loop.
    if (m_writingWaiting)
        return;
    m_writingWaiting = true;
    while (m_state == State::Open && !m_waiting.isEmpty() && hasRoomFor(m_waiting.first().bytes.size())) {
        const Waiting next = m_waiting.takeFirst();
        m_waitingBytes -= next.bytes.size();
        if (!writeAll(next.bytes)) {
            next.state->finish(m_error); // fail() ended the others
            break;
        }
        next.state->finish(success());
    }
    m_writingWaiting = false;
}

void Channel::withdraw(const detail::IoRequestState<void> *state)
{
    for (qsizetype i = 0; i < m_waiting.size(); ++i) {
        if (m_waiting.at(i).state.get() == state) {
            m_waitingBytes -= m_waiting.takeAt(i).bytes.size();
            return;
        }
    }
}

void Channel::endWaiting(const Error &error)
{
    m_waitingBytes = 0;
    for (const Waiting &waiting : std::exchange(m_waiting, {}))
        waiting.state->finish(error);
}

qint64 Channel::bytesToWrite() const
{
    return m_socket->bytesToWrite();
}

bool Channel::isReadingPaused() const
{
    return m_pausedByApp || m_queue.size() >= m_options.maxQueuedMessages || m_queuedBytes >= m_options.maxQueuedBytes;
}

void Channel::pauseReading()
{
    m_pausedByApp = true;
}

void Channel::resumeReading()
{
    const bool wasPaused = isReadingPaused();
    m_pausedByApp = false;
    readAgainIf(wasPaused);
}

// From the event loop: not inside the receive or the call that made room.
void Channel::readAgainIf(bool wasPaused)
{
    if (wasPaused && !isReadingPaused())
        QTimer::singleShot(0, this, &Channel::readMessages);
}

void Channel::close()
{
    if (m_state == State::Closed || m_state == State::Failed)
        return;
    m_idTimer->stop();
    if (m_state == State::Open)
        m_socket->disconnectFromHost(); // writes what is queued first
    else
        m_socket->abort();
    setState(State::Closed);
    emit closed();
}

void Channel::enqueue(Message message, quint64 arrival)
{
    m_queuedBytes += HeaderSize + message.items.size();
    m_queue.append({std::move(message), arrival});
    emit messageQueued();
}

Message Channel::take(qsizetype index)
{
    const bool wasPaused = isReadingPaused();
    Message message = m_queue.takeAt(index).message;
    m_queuedBytes -= HeaderSize + message.items.size();
    readAgainIf(wasPaused);
    return message;
}

} // namespace mmpi::mp
