#include "tcplink.h"

#include <mmpi/core/logging.h>

#include <cerrno>
#include <cstring>

#ifdef Q_OS_LINUX
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#endif

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
                            int socketBuffer, const QByteArray &loopbackCongestion, QObject *parent)
{
    auto *link = new TcpLink(new QTcpSocket, formatTcpAddress(endpoint.host, endpoint.port), limits, parent);
    link->setSocketBufferSize(socketBuffer);
    link->m_loopbackCongestion = loopbackCongestion;
    QMetaObject::invokeMethod(link, [link, endpoint, timeoutMs] { link->startConnecting(endpoint, timeoutMs); },
                              Qt::QueuedConnection);
    return link;
}

TcpLink *TcpLink::accept(QTcpSocket *socket, DecoderLimits limits, int socketBuffer,
                         const QByteArray &loopbackCongestion, QObject *parent)
{
    auto *link = new TcpLink(socket, formatTcpAddress(socket->peerAddress(), socket->peerPort()),
                             limits, parent);
    link->setSocketBufferSize(socketBuffer);
    link->m_loopbackCongestion = loopbackCongestion;
    link->applySocketOptions();
    link->handleConnected();
    return link;
}

void TcpLink::startConnecting(const TcpEndpoint &endpoint, int timeoutMs)
{
    if (state() != State::Connecting)
        return; // closed before it started
    m_connectTimer.start(timeoutMs);
    // Bound first, so that the socket exists and gets its congestion control
    // before it connects.
    const QHostAddress host(endpoint.host);
    if (!m_loopbackCongestion.isEmpty() && host.isLoopback()) {
        const bool v6 = host.protocol() == QAbstractSocket::IPv6Protocol;
        if (m_socket->bind(QHostAddress(v6 ? QHostAddress::LocalHostIPv6 : QHostAddress::LocalHost), 0))
            setTcpCongestionControl(m_socket->socketDescriptor(), m_loopbackCongestion, m_peerAddress);
    }
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
    applyLoopbackCongestionControl();
}

// A socket accepted by a listener that is not on loopback only (listenHost
// any) gets the algorithm once connected, which is later than it should
// (setTcpCongestionControl()).
void TcpLink::applyLoopbackCongestionControl()
{
    if (!m_loopbackCongestion.isEmpty() && m_socket->peerAddress().isLoopback())
        setTcpCongestionControl(m_socket->socketDescriptor(), m_loopbackCongestion, peerAddress());
}

// Over loopback no link is congested, but BBR (the default on some systems)
// still paces by the bandwidth it estimates, and bursty ping-pong traffic led
// it to a low estimate in about half the runs of 4 MiB round trips: 2.0-2.6 ms
// against 1.65-1.71 ms with cubic in every run (docs/guide/transports.md). It must
// be chosen before the connection is made: once BBR has started on a socket,
// the socket stays paced whatever algorithm replaces it.
void setTcpCongestionControl(qintptr descriptor, const QByteArray &name, const QString &what)
{
#ifdef TCP_CONGESTION
    if (descriptor < 0 || name.isEmpty())
        return;
    if (::setsockopt(int(descriptor), IPPROTO_TCP, TCP_CONGESTION, name.constData(), socklen_t(name.size())) != 0)
        qCDebug(lcTransport).noquote() << "cannot use congestion control" << name << "for" << what << ":"
                                       << strerror(errno);
#else
    Q_UNUSED(descriptor);
    Q_UNUSED(name);
    Q_UNUSED(what);
#endif
}

} // namespace mmpi

namespace mmpi {

void TcpLink::flushDevice()
{
    m_socket->flush();
}

} // namespace mmpi
