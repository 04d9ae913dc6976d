#include "nativestream.h"

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

// Small frames are decoded from here; one recv() often brings several.
constexpr qsizetype StagingSize = 64 * 1024;
// Bytes read per readiness notification, so that one busy link cannot starve
// the others (the notifier fires again while data is left).
constexpr qint64 ReadBudget = 4 * 1024 * 1024;
// A payload buffer starts at most this big and doubles as bytes arrive: a
// header that announces a huge frame reserves memory only as it is sent.
constexpr qsizetype InitialPayloadLimit = 1024 * 1024;
constexpr int MaxIoVectors = 64;

bool wouldBlock(int error) { return error == EAGAIN || error == EWOULDBLOCK; }
bool peerGone(int error) { return error == ECONNRESET || error == EPIPE; }

Error ioError(const char *what, int error)
{
    return Error(ErrorCode::LinkError, QStringLiteral("%1 failed: %2")
                                           .arg(QLatin1StringView(what), QString::fromLocal8Bit(strerror(error))));
}

} // namespace

NativeStream::NativeStream(int descriptor, DecoderLimits limits, QObject *parent)
    : QObject(parent), m_fd(descriptor), m_limits(limits),
      m_readNotifier(descriptor, QSocketNotifier::Read, this),
      m_writeNotifier(descriptor, QSocketNotifier::Write, this),
      m_staging(StagingSize, Qt::Uninitialized)
{
    ::fcntl(m_fd, F_SETFL, ::fcntl(m_fd, F_GETFL) | O_NONBLOCK);
    m_readNotifier.setEnabled(false);
    m_writeNotifier.setEnabled(false);
    connect(&m_readNotifier, &QSocketNotifier::activated, this, &NativeStream::handleReadable);
    connect(&m_writeNotifier, &QSocketNotifier::activated, this, &NativeStream::handleWritable);
}

NativeStream::~NativeStream()
{
    m_readNotifier.setEnabled(false);
    m_writeNotifier.setEnabled(false);
    ::close(m_fd);
}

void NativeStream::prependReceived(const QByteArray &bytes)
{
    if (m_end + bytes.size() > m_staging.size())
        m_staging.resize(m_end + bytes.size());
    std::memcpy(m_staging.data() + m_end, bytes.constData(), size_t(bytes.size()));
    m_bytesReceived += quint64(bytes.size());
    m_end += bytes.size();
}

void NativeStream::start()
{
    if (m_stopped)
        return;
    m_started = true;
    m_readNotifier.setEnabled(!m_paused);
    decodeLater(); // queued: the owner connects its slots before the first frame
}

void NativeStream::setReading(bool enabled)
{
    m_paused = !enabled;
    if (m_stopped || !m_started)
        return;
    m_readNotifier.setEnabled(enabled);
    if (enabled)
        decodeLater();
}

// Frames that arrived in one read with others and were held back by a pause.
void NativeStream::decodeLater()
{
    if (m_end - m_begin == 0)
        return;
    QMetaObject::invokeMethod(this, [this] {
        if (!m_stopped && !m_paused && !m_header)
            decodeStaged();
    }, Qt::QueuedConnection);
}

qint64 NativeStream::bufferedBytes() const
{
    return (m_end - m_begin) + (m_header ? FrameHeaderSize + m_filled : 0);
}

void NativeStream::handleReadable()
{
    QPointer<NativeStream> self(this);
    qint64 budget = ReadBudget;
    while (self && !m_stopped && !m_paused && budget > 0 && readOnce(budget)) {
    }
}

// A short read means the socket is drained for now: stopping there saves the
// recv() that would only say EAGAIN (the notifier fires again for more).
bool NativeStream::readOnce(qint64 &budget)
{
    return m_header ? readIntoPayload(budget) : readIntoStaging(budget);
}

// One recv(): the bytes read, 0 to try again (interrupted), or -1 when
// reading must stop (nothing more now, the end of the stream, or an error,
// which is reported).
qsizetype NativeStream::receive(char *into, qsizetype wanted, qint64 &budget)
{
    const ssize_t n = ::recv(m_fd, into, size_t(wanted), 0);
    if (n > 0) {
        budget -= n;
        m_bytesReceived += quint64(n);
        return qsizetype(n);
    }
    if (n < 0 && errno == EINTR)
        return 0;
    if (n < 0 && wouldBlock(errno))
        return -1;
    if (n == 0 || peerGone(errno))
        Q_EMIT endOfStream();
    else
        fail(ioError("recv", errno));
    return -1;
}

bool NativeStream::readIntoPayload(qint64 &budget)
{
    const qsizetype length = qsizetype(m_header->payloadLength);
    if (m_filled == m_payload.size())
        m_payload.resize(qMin(length, qMax(2 * m_payload.size(), InitialPayloadLimit)));
    const qsizetype wanted = m_payload.size() - m_filled;
    const qsizetype n = receive(m_payload.data() + m_filled, wanted, budget);
    if (n <= 0)
        return n == 0;
    m_filled += n;
    if (m_filled < length)
        return n == wanted;
    const FrameHeader header = *std::exchange(m_header, std::nullopt);
    m_filled = 0;
    return deliver(header, std::exchange(m_payload, {})) && n == wanted;
}

bool NativeStream::readIntoStaging(qint64 &budget)
{
    if (m_end - m_begin >= FrameHeaderSize) // frames held back by a pause
        return decodeStaged();
    if (m_begin > 0) { // less than a header is left: move it to the front
        std::memmove(m_staging.data(), m_staging.constData() + m_begin, size_t(m_end - m_begin));
        m_end -= m_begin;
        m_begin = 0;
    }
    const qsizetype wanted = m_staging.size() - m_end;
    const qsizetype n = receive(m_staging.data() + m_end, wanted, budget);
    if (n <= 0)
        return n == 0;
    m_end += n;
    return decodeStaged() && n == wanted;
}

bool NativeStream::decodeStaged()
{
    while (!m_stopped && !m_paused) {
        const char *head = m_staging.constData() + m_begin;
        const qsizetype available = m_end - m_begin;
        if (available < FrameHeaderSize) {
            if (auto ok = FrameDecoder::checkHeaderPrefix(QByteArrayView(head, available)); !ok)
                {
                fail(ok.error());
                return false;
            }
            return true;
        }
        auto header = FrameDecoder::decodeHeader(QByteArrayView(head, FrameHeaderSize), m_limits);
        if (!header) {
            fail(header.error());
            return false;
        }
        const qsizetype length = qsizetype(header->payloadLength);
        if (available - FrameHeaderSize < length) {
            beginPayload(*header, head + FrameHeaderSize, available - FrameHeaderSize);
            return true;
        }
        m_begin += FrameHeaderSize + length;
        if (!deliver(*header, QByteArray(head + FrameHeaderSize, length)))
            return false;
    }
    return false;
}

void NativeStream::beginPayload(const FrameHeader &header, const char *bytes, qsizetype available)
{
    const qsizetype length = qsizetype(header.payloadLength);
    m_header = header;
    m_payload = QByteArray(qMin(length, qMax(available, InitialPayloadLimit)), Qt::Uninitialized);
    std::memcpy(m_payload.data(), bytes, size_t(available));
    m_filled = available;
    m_begin = m_end = 0;
}

bool NativeStream::deliver(const FrameHeader &header, QByteArray payload)
{
    if (auto ok = FrameDecoder::checkPayload(header, payload); !ok)
        {
                fail(ok.error());
                return false;
            }
    QPointer<NativeStream> self(this);
    Q_EMIT frameReceived(Frame{header, std::move(payload)});
    return self && !m_stopped && !m_paused;
}

void NativeStream::write(const FrameHeader &header, const QByteArray &payload)
{
    qint64 written = 0;
    {
        QMutexLocker lock(&m_writeMutex);
        if (m_stopped)
            return;
        enqueue(header, payload);
        written = flushQueue();
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
        enqueue(header, payload);
        flushQueue();
        pending = !m_queue.empty();
    }
    // The notifier belongs to the stream's thread; bytesWritten is not
    // emitted for these bytes, which nobody on that thread was waiting for.
    if (pending)
        QMetaObject::invokeMethod(this, [this] { finishWrite(0); }, Qt::QueuedConnection);
    return true;
}

void NativeStream::enqueue(const FrameHeader &header, const QByteArray &payload)
{
    FrameHeader h = header;
    h.payloadLength = quint32(payload.size());
    m_queue.push_back({encodeHeader(h)});
    m_queuedBytes += FrameHeaderSize;
    if (!payload.isEmpty()) {
        m_queue.push_back({payload});
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
        msghdr message{};
        message.msg_iov = vectors;
        message.msg_iovlen = size_t(count);
        ssize_t n = ::sendmsg(m_fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (!wouldBlock(errno))
                failWrite(errno);
            break;
        }
        total += n;
        m_bytesSent += quint64(n);
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
