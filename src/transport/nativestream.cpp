#include "nativestream.h"

#include "socketerror.h"

#include <mmpi/wire/bufferpool.h>

#include <QPointer>
#include <QTimer>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

namespace mmpi::detail {

namespace {

// Bytes read per readiness notification, so that one busy link cannot starve
// the others (the notifier fires again while data is left).
constexpr qint64 ReadBudget = 4 * 1024 * 1024;
constexpr int MaxIoVectors = 64;


} // namespace

NativeStream::NativeStream(int descriptor, DecoderLimits limits, QObject *parent)
    : QObject(parent), m_fd(descriptor), m_reader(std::make_shared<StreamReader>(descriptor, limits)),
      m_readNotifier(m_reader->pollDescriptor(), QSocketNotifier::Read, this),
      m_writeNotifier(descriptor, QSocketNotifier::Write, this)
{
    m_reader->setPaused(true); // until start()
    m_readNotifier.setEnabled(false);
    m_writeNotifier.setEnabled(false);
    connect(&m_readNotifier, &QSocketNotifier::activated, this, &NativeStream::handleReadable);
    connect(&m_writeNotifier, &QSocketNotifier::activated, this, &NativeStream::handleWritable);
    // A thread that claimed the reader met the end or an error (reported
    // from here, where the signals belong; the reader keeps the outcome), or
    // left a frame read but not handled.
    m_reader->setOwnerCall([this] {
        QMetaObject::invokeMethod(this, [this] {
            if (!m_stopped)
                handleReadable();
        }, Qt::QueuedConnection);
    });
}

NativeStream::~NativeStream()
{
    m_readNotifier.setEnabled(false);
    m_writeNotifier.setEnabled(false);
    m_reader->closeDescriptor();
}

void NativeStream::prependReceived(const QByteArray &bytes)
{
    m_reader->prependReceived(bytes);
}

void NativeStream::start()
{
    if (m_stopped)
        return;
    m_started = true;
    m_reader->setPaused(m_paused);
    m_readNotifier.setEnabled(!m_paused);
    decodeLater(); // queued: the owner connects its slots before the first frame
}

void NativeStream::setReading(bool enabled)
{
    m_paused = !enabled;
    if (m_stopped || !m_started)
        return;
    m_reader->setPaused(m_paused);
    m_readNotifier.setEnabled(enabled);
    if (enabled)
        decodeLater();
}

// Frames that arrived in one read with others and were held back by a pause.
void NativeStream::decodeLater()
{
    if (!m_reader->hasStagedFrame())
        return;
    QMetaObject::invokeMethod(this, [this] {
        if (!m_stopped && !m_paused)
            handleReadable();
    }, Qt::QueuedConnection);
}

// While another thread has claimed the reader the socket is out of the
// notifier's set, so this runs at most once for input that thread reads.
void NativeStream::handleReadable()
{
    const std::shared_ptr<StreamReader> reader = m_reader; // outlives a deleted this
    QPointer<NativeStream> self(this);
    const auto outcome = reader->readForOwner(ReadBudget, [&](Frame &&frame) {
        Q_EMIT frameReceived(frame);
        return self && !m_stopped && !m_paused;
    });
    if (!self || m_stopped)
        return;
    if (outcome.status == StreamReader::Status::Ended)
        Q_EMIT endOfStream();
    else if (outcome.status == StreamReader::Status::Failed)
        fail(outcome.error);
}

void NativeStream::write(const FrameHeader &header, const QByteArray &payload)
{
    qint64 written = 0;
    {
        QMutexLocker lock(&m_writeMutex);
        if (m_stopped)
            return;
        written = send(header, payload);
    }
    finishWrite(written);
}

bool NativeStream::tryWrite(const FrameHeader &header, const QByteArray &payload, qint64 limit)
{
    bool pending = false;
    {
        QMutexLocker lock(&m_writeMutex);
        if (m_stopped || m_queuedBytes >= limit)
            return false;
        send(header, payload);
        pending = !m_queue.empty();
    }
    // The notifier belongs to the stream's thread; bytesWritten is not
    // emitted for these bytes, which nobody on that thread was waiting for.
    if (pending)
        QMetaObject::invokeMethod(this, [this] { finishWrite(0); }, Qt::QueuedConnection);
    return true;
}

// With nothing queued ahead, the header goes out from the stack (a small
// frame costs no allocation) and only what the socket did not take is
// queued; behind a queue, the frame joins it. Returns the bytes written.
qint64 NativeStream::send(const FrameHeader &header, const QByteArray &payload)
{
    if (!m_queue.empty()) {
        enqueue(header, payload);
        return flushQueue();
    }
    FrameHeader h = header;
    h.payloadLength = quint32(payload.size());
    char head[FrameHeaderSize];
    encodeHeaderInto(h, head);
    iovec vectors[2] = {{head, size_t(FrameHeaderSize)},
                        {const_cast<char *>(payload.constData()), size_t(payload.size())}};
    ++m_framesSent;
    const qint64 n = sendVectors(vectors, payload.isEmpty() ? 1 : 2);
    if (n < 0)
        return 0;
    if (n < FrameHeaderSize) {
        m_queue.push_back({QByteArray(head + n, FrameHeaderSize - n)});
        m_queuedBytes += FrameHeaderSize - n;
    }
    const qsizetype payloadSent = qMax<qsizetype>(0, qsizetype(n) - FrameHeaderSize);
    if (payloadSent < payload.size()) {
        // A borrowed payload is gone when the sender returns: only what the
        // socket did not take is copied.
        if (isBorrowed(payload))
            m_queue.push_back({BufferPool::owned(QByteArray::fromRawData(payload.constData() + payloadSent,
                                                                         payload.size() - payloadSent))});
        else
            m_queue.push_back({payload, payloadSent});
        m_queuedBytes += payload.size() - payloadSent;
    }
    return qint64(n);
}

void NativeStream::enqueue(const FrameHeader &header, const QByteArray &payload)
{
    FrameHeader h = header;
    h.payloadLength = quint32(payload.size());
    m_queue.push_back({encodeHeader(h)});
    m_queuedBytes += FrameHeaderSize;
    if (!payload.isEmpty()) {
        m_queue.push_back({BufferPool::owned(payload)});
        m_queuedBytes += payload.size();
    }
    ++m_framesSent;
}

void NativeStream::handleWritable()
{
    qint64 written = 0;
    {
        QMutexLocker lock(&m_writeMutex);
        written = flushQueue();
    }
    finishWrite(written);
}

void NativeStream::finishWrite(qint64 written)
{
    bool empty = false;
    {
        QMutexLocker lock(&m_writeMutex);
        empty = m_queue.empty();
    }
    m_writeNotifier.setEnabled(!empty);
    if (written > 0)
        Q_EMIT bytesWritten(written);
    if (m_closing && empty)
        deleteLater();
}

// One sendmsg() (again if interrupted). Returns the bytes the socket took
// (0 when it is full), or -1 after a failure, which failWrite() reported.
qint64 NativeStream::sendVectors(iovec *vectors, int count)
{
    msghdr message{};
    message.msg_iov = vectors;
    message.msg_iovlen = size_t(count);
    ssize_t n = 0;
    do {
        n = ::sendmsg(m_fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        if (!wouldBlock(errno)) {
            failWrite(errno);
            return -1;
        }
        return 0;
    }
    m_bytesSent += quint64(n);
    return n;
}

qint64 NativeStream::flushQueue()
{
    qint64 total = 0;
    while (!m_queue.empty()) {
        iovec vectors[MaxIoVectors];
        int count = 0;
        for (auto it = m_queue.begin(); it != m_queue.end() && count < MaxIoVectors; ++it, ++count) {
            vectors[count].iov_base = const_cast<char *>(it->bytes.constData()) + it->offset;
            vectors[count].iov_len = size_t(it->bytes.size() - it->offset);
        }
        qint64 n = sendVectors(vectors, count);
        if (n <= 0)
            break;
        total += n;
        m_queuedBytes -= n;
        while (n > 0) {
            Chunk &front = m_queue.front();
            const qsizetype left = front.bytes.size() - front.offset;
            if (n < left) {
                front.offset += n;
                break;
            }
            n -= left;
            m_queue.pop_front();
        }
    }
    return total;
}

// Reported from the event loop: a write happens inside whoever sent the
// frame, which must not see the link close under it.
// Called with the write mutex held.
void NativeStream::failWrite(int error)
{
    m_queue.clear();
    m_queuedBytes = 0;
    if (m_closing)
        return; // finishWrite() deletes it
    const bool gone = peerGone(error);
    const Error problem = ioError("send", error);
    QMetaObject::invokeMethod(this, [this, gone, problem] {
        if (m_stopped)
            return;
        if (gone)
            Q_EMIT endOfStream();
        else
            fail(problem);
    }, Qt::QueuedConnection);
}

void NativeStream::closeAfterFlush(int lingerMs)
{
    stop();
    m_closing = true;
    setParent(nullptr);
    bool empty = false;
    {
        QMutexLocker lock(&m_writeMutex);
        empty = m_queue.empty();
    }
    if (empty)
        return deleteLater();
    m_writeNotifier.setEnabled(true);
    QTimer::singleShot(lingerMs, this, &QObject::deleteLater);
}

void NativeStream::stop()
{
    m_stopped = true;
    m_reader->stop();
    m_readNotifier.setEnabled(false);
}

void NativeStream::fail(const Error &error)
{
    if (m_stopped)
        return;
    stop();
    {
        QMutexLocker lock(&m_writeMutex);
        m_queue.clear();
        m_queuedBytes = 0;
    }
    m_writeNotifier.setEnabled(false);
    Q_EMIT failed(error);
}

} // namespace mmpi::detail
