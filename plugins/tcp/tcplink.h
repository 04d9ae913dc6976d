// TcpLink: a StreamLink over a QTcpSocket (Nagle off, keep-alive on). Made
// either by connecting, with a deadline, or from a socket a server accepted.
#pragma once

#include "tcpaddress.h"

#include <mmpi/transport/streamlink.h>

#include <QTcpSocket>
#include <QTimer>

namespace mmpi {

class TcpLink : public StreamLink
{
    Q_OBJECT
public:
    // Starts connecting on the next event-loop turn, so that every outcome,
    // even an immediate refusal, arrives after the caller connected its slots.
    // `socketBuffer`: see StreamLink::setSocketBufferSize().
    static TcpLink *connectTo(const TcpEndpoint &endpoint, int timeoutMs, DecoderLimits limits,
                              int socketBuffer, QObject *parent);
    // A link over a socket that is already connected (Connected at once).
    static TcpLink *accept(QTcpSocket *socket, DecoderLimits limits, int socketBuffer, QObject *parent);

    QString peerAddress() const override { return m_peerAddress; }

protected:
    void closeDevice() override;
    void flushDevice() override;
    qintptr nativeDescriptor() const override { return m_socket->socketDescriptor(); }

private:
    TcpLink(QTcpSocket *socket, QString peerAddress, DecoderLimits limits, QObject *parent);
    void startConnecting(const TcpEndpoint &endpoint, int timeoutMs);
    void handleSocketConnected();
    void handleSocketError(QAbstractSocket::SocketError error);
    void handleConnectTimeout();
    void applySocketOptions();

    QTcpSocket *m_socket;
    QString m_peerAddress;
    QTimer m_connectTimer;
};

} // namespace mmpi
