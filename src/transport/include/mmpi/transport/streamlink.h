// StreamLink: a Link over any QIODevice byte stream (QTcpSocket, QLocalSocket,
// later RFCOMM). It runs the real wire codec both ways, reads no more than the
// decoder can take, and closes the link on the first malformed byte.
#pragma once

#include <mmpi/transport/arrivaltiming.h>
#include <mmpi/transport/link.h>
#include <mmpi/wire/framedecoder.h>

#include <QElapsedTimer>
#include <QIODevice>
#include <QPointer>

namespace mmpi {

class StreamLink : public Link
{
    Q_OBJECT
public:
    // Takes ownership of `device` (reparents it). Subclasses call
    // handleConnected()/handleDisconnected()/handleDeviceError() from the
    // device's own signals.
    StreamLink(QIODevice *device, DecoderLimits limits = {}, QObject *parent = nullptr);
    ~StreamLink() override;

    void sendFrame(const Frame &frame) override;
    void setReading(bool enabled) override;
    qint64 bytesToWrite() const override;
    qint64 unsentBytes() const override;
    void close() override;
    // The kernel's send and receive buffer for the socket, set when the link
    // connects (so call it before); 0 leaves the system's own sizing. The
    // kernel may cap it (Linux: net.core.wmem_max / rmem_max).
    void setSocketBufferSize(int bytes) { m_socketBuffer = bytes; }

protected:
    QIODevice *device() const { return m_device; }
    void handleConnected();
    void handleDisconnected();
    void handleDeviceError(ErrorCode code, const QString &message);
    // Close the underlying device (socket-specific: abort or disconnect).
    virtual void closeDevice() = 0;
    // Hand queued bytes to the operating system now, without blocking, rather
    // than on the next pass of the event loop (a whole wake-up of latency).
    virtual void flushDevice() = 0;
    // The connected socket's descriptor, or -1: where the kernel's buffer
    // sizes are set (setSocketBufferSize()).
    virtual qintptr nativeDescriptor() const { return -1; }
    // How the socket's kernel tells the bytes it has not sent (Linux; on other
    // systems every kind reads as None): TCP's SIOCOUTQNSD, a Unix socket's
    // SIOCOUTQ (bytes the peer has not read), RFCOMM's TIOCOUTQ (free room,
    // subtracted from SO_SNDBUF).
    enum class KernelQueue { None, Tcp, Unix, Bluetooth };
    virtual KernelQueue kernelQueue() const { return KernelQueue::None; }

private:
    void applySocketBufferSize();
    qint64 kernelUnsentBytes() const;
    void noticePeerClosed();
    void handleReadyRead();
    void deliverAvailable(const QPointer<StreamLink> &self);
    void timeArrival(qint64 bytes);
    void handleBytesWritten(qint64 bytes);
    void failWith(const Error &error);

    QPointer<QIODevice> m_device;
    FrameDecoder m_decoder;
    bool m_reading = true;
    // In handleReadyRead() or sendFrame(): what the device reports meanwhile
    // is handled after it.
    bool m_delivering = false;
    bool m_writing = false;
    bool m_peerClosedWhilePaused = false; // handleDisconnected() waits for setReading(true)
    int m_socketBuffer = 0;
    ArrivalTiming m_arrivals;
    QElapsedTimer m_clock;
};

} // namespace mmpi
