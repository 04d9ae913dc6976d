#include "tcplink.h"

namespace mmpi {

TcpLink::TcpLink(QTcpSocket *socket, QString peerAddress, DecoderLimits limits, QObject *parent)
    : StreamLink(socket, limits, parent), m_socket(socket), m_peerAddress(std::move(peerAddress)),
      m_connectTimer(this)
{
    m_connectTimer.setSingleShot(true);
    connect(&m_connectTimer, &QTimer::timeout, this, &TcpLink::handleConnectTimeout);
    connect(socket, &QTcpSocket::connected, this, &TcpLink::handleSocketConnected);
    connect(socket, &QTcpSocket::disconnected, this, &TcpLink::handleDisconnected);
    connect(socket, &QTcpSocket::errorOccurred, this, &TcpLink::handleSocketError);
}

TcpLink *TcpLink::connectTo(const TcpEndpoint &endpoint, int timeoutMs, DecoderLimits limits,
                            int socketBuffer, QObject *parent)
{
    auto *link = new TcpLink(new QTcpSocket, formatTcpAddress(endpoint.host, endpoint.port), limits, parent);
    link->setSocketBufferSize(socketBuffer);
    QMetaObject::invokeMethod(link, [link, endpoint, timeoutMs] { link->startConnecting(endpoint, timeoutMs); },
                              Qt::QueuedConnection);
    return link;
}

TcpLink *TcpLink::accept(QTcpSocket *socket, DecoderLimits limits, int socketBuffer, QObject *parent)
{
    auto *link = new TcpLink(socket, formatTcpAddress(socket->peerAddress(), socket->peerPort()),
                             limits, parent);
    link->setSocketBufferSize(socketBuffer);
    link->applySocketOptions();
    link->handleConnected();
    return link;
}

void TcpLink::startConnecting(const TcpEndpoint &endpoint, int timeoutMs)
{
    if (state() != State::Connecting)
        return; // closed before it started
    m_connectTimer.start(timeoutMs);
    m_socket->connectToHost(endpoint.host, endpoint.port);
}

void TcpLink::closeDevice()
{
    m_connectTimer.stop();
    // Not abort(): frames already queued (a Goodbye) are still sent.
    m_socket->disconnectFromHost();
}

void TcpLink::handleSocketConnected()
{
    m_connectTimer.stop();
    applySocketOptions();
    handleConnected();
}

void TcpLink::handleSocketError(QAbstractSocket::SocketError error)
{
    if (state() == State::Connecting)
        return handleDeviceError(error == QAbstractSocket::ConnectionRefusedError ? ErrorCode::ConnectionRefused
                                                                                 : ErrorCode::ConnectFailed, QStringLiteral("cannot connect to %1: %2")
                                                               .arg(m_peerAddress, m_socket->errorString()));
    // An orderly close is not an error; disconnected() follows and decides.
    if (error == QAbstractSocket::RemoteHostClosedError)
        return;
    handleDeviceError(ErrorCode::LinkError, m_socket->errorString());
}

void TcpLink::handleConnectTimeout()
{
    handleDeviceError(ErrorCode::ConnectFailed, QStringLiteral("cannot connect to %1: no answer within %2 ms")
                                                    .arg(m_peerAddress).arg(m_connectTimer.interval()));
}

void TcpLink::applySocketOptions()
{
    // Frames are small and latency-bound (heartbeats, acks); keep-alive
    // notices a peer that vanished without a FIN.
    m_socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    m_socket->setSocketOption(QAbstractSocket::KeepAliveOption, 1);
}

} // namespace mmpi

namespace mmpi {

void TcpLink::flushDevice()
{
    m_socket->flush();
}

} // namespace mmpi
