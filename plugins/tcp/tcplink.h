// TcpLink: a StreamLink over a QTcpSocket (Nagle off, keep-alive on; over
// loopback, the congestion control it is given). Made either by connecting,
// with a deadline, or from a socket a server accepted.
#pragma once

#include "tcpaddress.h"

#include <mmpi/transport/streamlink.h>

#include <QTcpSocket>
#include <QTimer>

namespace mmpi {

// Sets a socket's TCP congestion control (Linux; elsewhere nothing); a
// failure is logged, not fatal. `what` names the socket in the log.
void setTcpCongestionControl(qintptr descriptor, const QByteArray &name, const QString &what);

class TcpLink : public StreamLink
{
    Q_OBJECT
public:
    // Starts connecting on the next event-loop turn, so that every outcome,
    // even an immediate refusal, arrives after the caller connected its slots.
    // `socketBuffer`: see StreamLink::setSocketBufferSize(). `loopbackCongestion`:
    // the congestion control (a Linux TCP_CONGESTION name) when the peer is on
    // this machine; empty: the system's.
    static TcpLink *connectTo(const TcpEndpoint &endpoint, int timeoutMs, DecoderLimits limits,
                              int socketBuffer, const QByteArray &loopbackCongestion, QObject *parent);
    // A link over a socket that is already connected (Connected at once).
    static TcpLink *accept(QTcpSocket *socket, DecoderLimits limits, int socketBuffer,
                           const QByteArray &loopbackCongestion, QObject *parent);

    QString peerAddress() const override { return m_peerAddress; }

protected:
    void closeDevice() override;
    void flushDevice() override;
    qintptr nativeDescriptor() const override { return m_socket->socketDescriptor(); }
    KernelQueue kernelQueue() const override { return KernelQueue::Tcp; }

private:
    TcpLink(QTcpSocket *socket, QString peerAddress, DecoderLimits limits, QObject *parent);
    void startConnecting(const TcpEndpoint &endpoint, int timeoutMs);
    void handleSocketConnected();
    void handleSocketError(QAbstractSocket::SocketError error);
    void handleConnectTimeout();
    void applySocketOptions();
    void applyLoopbackCongestionControl();

    QTcpSocket *m_socket;
    QByteArray m_loopbackCongestion;
    QString m_peerAddress;
    QTimer m_connectTimer;
};

} // namespace mmpi
