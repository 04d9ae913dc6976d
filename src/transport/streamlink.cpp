#include <mmpi/transport/streamlink.h>

#include <mmpi/core/logging.h>

#include <QAbstractSocket>
#include <QScopedValueRollback>
#include <QLocalSocket>
#include <QTimer>

#ifdef Q_OS_UNIX
#include <cerrno>
#include <cstring>
#include <sys/ioctl.h>
#include <sys/socket.h>
#endif
#ifdef Q_OS_LINUX
#include <linux/sockios.h>
#endif

namespace mmpi {

namespace {

// How long a closed link's device may keep flushing queued bytes (a Goodbye,
// say) after the link itself is gone.
constexpr int LingerTimeoutMs = 10000;

// What a socket object reads ahead of the decoder. Bounded, so that a paused
// link (setReading(false)) holds at most this much in memory while the rest
// waits in the kernel and TCP's own flow control slows the sender; 1 MiB
// keeps a Wi-Fi link's bandwidth-delay product (tens of MB/s x 10 ms) in
// flight.
constexpr qint64 ReadAheadLimit = 1024 * 1024;

// The peer's end came (or the socket object gave up on it) before the link
// heard: a write then fails, and it is the peer closing, not an I/O error.
bool peerHasClosed(const QIODevice *device)
{
    if (!device->isOpen())
        return true;
    if (const auto *socket = qobject_cast<const QAbstractSocket *>(device))
        return socket->error() == QAbstractSocket::RemoteHostClosedError
               || socket->state() == QAbstractSocket::UnconnectedState;
    if (const auto *local = qobject_cast<const QLocalSocket *>(device))
        return local->error() == QLocalSocket::PeerClosedError || local->state() == QLocalSocket::UnconnectedState;
    return false;
}

void limitReadAhead(QIODevice *device)
{
    if (auto *socket = qobject_cast<QAbstractSocket *>(device))
        socket->setReadBufferSize(ReadAheadLimit);
    else if (auto *local = qobject_cast<QLocalSocket *>(device))
        local->setReadBufferSize(ReadAheadLimit);
}

// close() must not drop what sendFrame() already queued, and links are usually
// deleted right after closing. A device that still has bytes to write is
// therefore detached from the link and deletes itself once they are handed to
// the operating system (or the linger timeout passes).
void lingerUntilFlushed(QIODevice *device)
{
    if (!device->isOpen() || device->bytesToWrite() == 0)
        return;
    device->setParent(nullptr);
    QObject::connect(device, &QIODevice::bytesWritten, device, [device] {
        if (device->bytesToWrite() == 0)
            device->deleteLater();
    });
    QTimer::singleShot(LingerTimeoutMs, device, &QObject::deleteLater);
}

} // namespace

StreamLink::StreamLink(QIODevice *device, DecoderLimits limits, QObject *parent)
    : Link(parent), m_device(device), m_decoder(limits)
{
    Q_ASSERT(device);
    device->setParent(this);
    limitReadAhead(device);
    m_clock.start();
    connect(device, &QIODevice::readyRead, this, &StreamLink::handleReadyRead);
    connect(device, &QIODevice::bytesWritten, this, &StreamLink::handleBytesWritten);
}

// The device is a child and goes with the link. Nothing is emitted from here:
// call close() first to tell receivers and to flush queued frames.
StreamLink::~StreamLink() = default;

void StreamLink::sendFrame(const Frame &frame)
{
    if (state() != State::Connected || !m_device) {
        qCDebug(lcTransport).noquote() << "not sending a frame to" << peerAddress()
                                       << ": the link is" << state();
        return;
    }
    if (peerHasClosed(m_device))
        return noticePeerClosed();
    // Whatever the write meets is reported after it (see handleDeviceError()).
    const QScopedValueRollback writing(m_writing, true);
    // Header and payload go separately: the device copies bytes into its own
    // buffer anyway, and concatenating them first would copy a payload twice.
    FrameHeader header = frame.header;
    header.payloadLength = quint32(frame.payload.size());
    const QByteArray head = encodeHeader(header);
    const qint64 size = head.size() + frame.payload.size();
    const qint64 written = m_device->write(head)
                           + (frame.payload.isEmpty() ? 0 : m_device->write(frame.payload));
    if (written != size && peerHasClosed(m_device))
        return noticePeerClosed();
    if (written != size)
        return handleDeviceError(ErrorCode::LinkError, QStringLiteral("cannot queue a frame of %1 bytes: %2")
                                                           .arg(size).arg(m_device->errorString()));
    ++mutableCounters().framesSent;
    mutableCounters().bytesQueued += quint64(size);
    flushDevice();
}

// A paused link stops decoding, but the socket object still reads from the
// operating system into its own buffer.
void StreamLink::setReading(bool enabled)
{
    if (m_reading == enabled)
        return;
    m_reading = enabled;
    if (!enabled)
        m_arrivals.interrupt();
    if (!enabled)
        return;
    QMetaObject::invokeMethod(this, &StreamLink::handleReadyRead, Qt::QueuedConnection);
    if (m_peerClosedWhilePaused)
        noticePeerClosed();
}

qint64 StreamLink::bytesToWrite() const
{
    return m_device ? m_device->bytesToWrite() : 0;
}

qint64 StreamLink::unsentBytes() const
{
    return bytesToWrite() + kernelUnsentBytes();
}

qint64 StreamLink::kernelUnsentBytes() const
{
#ifdef Q_OS_LINUX
    const qintptr descriptor = nativeDescriptor();
    if (descriptor < 0 || state() != State::Connected)
        return 0;
    const int fd = int(descriptor);
    int value = 0;
    switch (kernelQueue()) {
    case KernelQueue::None:
        return 0;
    case KernelQueue::Tcp:
        return ::ioctl(fd, SIOCOUTQNSD, &value) == 0 ? value : 0;
    case KernelQueue::Unix:
        return ::ioctl(fd, SIOCOUTQ, &value) == 0 ? value : 0;
    case KernelQueue::Bluetooth: {
        int buffer = 0;
        socklen_t length = sizeof buffer;
        if (::ioctl(fd, TIOCOUTQ, &value) != 0 || ::getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, &length) != 0)
            return 0;
        return qMax(0, buffer - value);
    }
    }
#endif
    return 0;
}

void StreamLink::close()
{
    if (state() == State::Closed)
        return;
    if (QIODevice *device = m_device) {
        // Whatever the device says while it closes is no news to us.
        device->disconnect(this);
        closeDevice();
        lingerUntilFlushed(device);
    }
    setState(State::Closed);
}

void StreamLink::handleConnected()
{
    if (state() != State::Connecting)
        return;
    setState(State::Connected);
    applySocketBufferSize();
    // Bytes that arrived before anyone could listen for readyRead would
    // otherwise wait for the next packet. Queued, so that the creator of an
    // accepted link connects its slots first.
    if (m_device && m_device->bytesAvailable() > 0)
        QMetaObject::invokeMethod(this, &StreamLink::handleReadyRead, Qt::QueuedConnection);
}

// Linux sizes a socket's buffers by itself, starting small (16 KiB to send)
// and growing them only as a connection proves busy: a large message then
// waits on the buffer many times. Sized ahead, it goes in a few sendmsg()
// calls (docs/guide/benchmarks.md, "Socket buffers").
void StreamLink::applySocketBufferSize()
{
#ifdef Q_OS_UNIX
    const qintptr descriptor = nativeDescriptor();
    if (m_socketBuffer <= 0 || descriptor < 0)
        return;
    for (const int option : {SO_SNDBUF, SO_RCVBUF}) {
        if (::setsockopt(int(descriptor), SOL_SOCKET, option, &m_socketBuffer, sizeof m_socketBuffer) != 0)
            qCDebug(lcTransport) << "cannot size the socket buffers of" << peerAddress() << ":" << strerror(errno);
    }
#endif
}

// Later, not from inside sendFrame() or a delivery: the sender may be in the
// middle of its own queue, or of handling a received frame that the frames
// still to deliver must not overtake.
void StreamLink::noticePeerClosed()
{
    QMetaObject::invokeMethod(this, &StreamLink::handleDisconnected, Qt::QueuedConnection);
}

void StreamLink::handleDisconnected()
{
    if (state() == State::Closed)
        return;
    if (m_delivering || m_writing)
        return noticePeerClosed();
    // What the peer sent before its end waits in the socket object's buffer
    // until this end reads again: closing now would drop it (a node that
    // said goodbye after messages its peer had not taken yet).
    if (!m_reading && m_device && m_device->bytesAvailable() > 0) {
        m_peerClosedWhilePaused = true;
        return;
    }
    m_peerClosedWhilePaused = false;
    QPointer<StreamLink> self(this);
    // Frames that arrived just before the end are still delivered.
    handleReadyRead();
    if (!self || state() == State::Closed)
        return;
    if (const qint64 buffered = m_decoder.bufferedBytes(); buffered > 0)
        return failWith(Error(ErrorCode::LinkClosed,
                              QStringLiteral("peer closed the link in the middle of a frame "
                                             "(%1 bytes buffered)")
                                  .arg(buffered)));
    qCDebug(lcTransport).noquote() << "peer" << peerAddress() << "closed the link";
    close();
}

// A socket reports trouble from inside a write or a flush: the link's owner
// then hears of it once that call has returned, never in the middle of it.
void StreamLink::handleDeviceError(ErrorCode code, const QString &message)
{
    if (state() == State::Closed)
        return;
    if (m_delivering || m_writing) {
        QMetaObject::invokeMethod(this, [this, error = Error(code, message)] {
            if (state() != State::Closed)
                failWith(error);
        }, Qt::QueuedConnection);
        return;
    }
    failWith(Error(code, message));
}

// Reads each frame's bytes straight into the decoder's room for them, and
// delivers each frame as soon as it is complete. Any slot may close the link
// (delivery stops) and delete it with deleteLater(); the guard also keeps a
// plain delete from making this loop touch freed memory, though Qt itself
// does not promise to survive that. Not re-entered: a slot that writes may
// meet the peer's end (handleDisconnected() then waits), and the delivery
// under way reads on by itself. Nothing is read before the link is
// Connected (a local socket's connected() comes queued, and the peer may
// speak first): a frame delivered then could not be answered, and
// handleConnected() reads what waits.
void StreamLink::handleReadyRead()
{
    if (m_delivering)
        return;
    m_delivering = true;
    QPointer<StreamLink> self(this);
    deliverAvailable(self);
    if (self)
        m_delivering = false;
}

void StreamLink::deliverAvailable(const QPointer<StreamLink> &self)
{
    qint64 arrived = 0;
    while (self && m_reading && state() == State::Connected && m_device) {
        const std::span<char> room = m_decoder.space();
        const qint64 got = room.empty() ? 0 : m_device->read(room.data(), qint64(room.size()));
        if (got <= 0)
            break;
        arrived += got;
        mutableCounters().bytesReceived += quint64(got);
        auto frame = m_decoder.commit(got);
        if (!frame)
            return failWith(frame.error());
        if (frame->has_value()) {
            ++mutableCounters().framesReceived;
            Q_EMIT frameReceived(**frame);
        }
    }
    if (self && arrived > 0 && state() == State::Connected)
        timeArrival(arrived);
}

void StreamLink::timeArrival(qint64 bytes)
{
    if (!m_reading)
        return m_arrivals.interrupt();
    const auto rate = m_arrivals.noteRead(bytes, m_decoder.bufferedBytes() > 0, m_clock.nsecsElapsed() / 1000);
    if (rate)
        Q_EMIT arrivalRateMeasured(*rate);
}

void StreamLink::handleBytesWritten(qint64 bytes)
{
    mutableCounters().bytesSent += quint64(bytes);
    Q_EMIT bytesWritten(bytes);
}

void StreamLink::failWith(const Error &error)
{
    // A refused connect is routine (callers retry while peers start up) and
    // reported to the owner; only trouble on an established link is a warning.
    if (error.code == ErrorCode::ConnectFailed || error.code == ErrorCode::ConnectionRefused)
        qCDebug(lcTransport).noquote() << "link" << peerAddress() << "failed:" << error.toString();
    else
        qCWarning(lcTransport).noquote() << "link" << peerAddress() << "failed:" << error.toString();
    QPointer<StreamLink> self(this);
    setError(error);
    if (self)
        close();
}

} // namespace mmpi
