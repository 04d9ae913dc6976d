// NativeStream: the frames of a connected stream socket (TCP or Unix-domain),
// read and written through its descriptor. QAbstractSocket hands the kernel
// 16 KiB per event-loop turn and copies every byte through its ring buffers;
// this writes a whole frame with one sendmsg() and reads each payload straight
// into the frame's own buffer (StreamReader, which another thread may claim).
// Lives in the link's thread; only tryWrite(), reader() and the counters may
// be used from other threads.
#pragma once

#include "streamreader.h"

#include <mmpi/core/result.h>
#include <mmpi/wire/frame.h>

#include <QMutex>
#include <QObject>
#include <QSocketNotifier>

#include <atomic>
#include <deque>
#include <memory>

struct iovec; // <sys/uio.h>

namespace mmpi::detail {

class NativeStream : public QObject
{
    Q_OBJECT
public:
    // Takes ownership of `descriptor` and makes it non-blocking. Nothing is
    // read before start().
    NativeStream(int descriptor, DecoderLimits limits, QObject *parent = nullptr);
    // Closes the descriptor; queued bytes are dropped (see closeAfterFlush()).
    ~NativeStream() override;

    // Bytes a previous owner of the descriptor had already read: they are
    // decoded before anything else, on start().
    void prependReceived(const QByteArray &bytes);
    void start();
    // Pause or resume reading; frames already received wait while paused.
    void setReading(bool enabled);

    // Queue a frame and hand the kernel as much of it as it takes now.
    void write(const FrameHeader &header, const QByteArray &payload);
    // The same from any thread, unless the stream has stopped or has `limit`
    // bytes or more queued (false: nothing was written or queued).
    bool tryWrite(const FrameHeader &header, const QByteArray &payload, qint64 limit);
    qint64 bytesToWrite() const { return m_queuedBytes; }
    quint64 bytesSent() const { return m_bytesSent; }
    quint64 framesSent() const { return m_framesSent; }
    // Bytes of a frame that has not fully arrived.
    qint64 bufferedBytes() const { return m_reader->bufferedBytes(); }
    quint64 bytesReceived() const { return m_reader->bytesReceived(); }
    quint64 framesReceived() const { return m_reader->framesReceived(); }
    // For a thread that reads the stream itself for a while.
    std::shared_ptr<LinkReader> reader() const { return m_reader; }

    // Stop reading and detach from the parent; the descriptor closes and the
    // object deletes itself once queued bytes are written, or after lingerMs.
    void closeAfterFlush(int lingerMs);

Q_SIGNALS:
    void frameReceived(const mmpi::Frame &frame);
    void bytesWritten(qint64 bytes);
    // The peer closed its end (or reset the connection).
    void endOfStream();
    // Malformed input or an I/O error; the stream reads and writes no more.
    void failed(const mmpi::Error &error);

private:
    struct Chunk
    {
        QByteArray bytes;
        qsizetype offset = 0;
    };

    void handleReadable();
    void decodeLater();
    void handleWritable();
    qint64 send(const FrameHeader &header, const QByteArray &payload);
    qint64 sendVectors(::iovec *vectors, int count);
    void enqueue(const FrameHeader &header, const QByteArray &payload);
    qint64 flushQueue();
    void finishWrite(qint64 written);
    void failWrite(int error);
    void stop();
    void fail(const Error &error);

    int m_fd;
    std::shared_ptr<StreamReader> m_reader;
    QSocketNotifier m_readNotifier;
    QSocketNotifier m_writeNotifier;
    std::atomic<bool> m_stopped = false;
    bool m_closing = false;
    bool m_paused = false;
    bool m_started = false;

    // Guards the write queue: tryWrite() may come from any thread.
    QMutex m_writeMutex;
    std::deque<Chunk> m_queue;
    std::atomic<qint64> m_queuedBytes = 0;
    std::atomic<quint64> m_bytesSent = 0;
    std::atomic<quint64> m_framesSent = 0;
};

} // namespace mmpi::detail
