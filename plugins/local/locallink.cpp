#include "locallink.h"

#include "localaddress.h"

namespace mmpi {

LocalLink::LocalLink(QLocalSocket *socket, QString peerAddress, DecoderLimits limits, QObject *parent)
    : StreamLink(socket, limits, parent), m_socket(socket), m_peerAddress(std::move(peerAddress))
{
    // Queued: handleConnected() may take over the descriptor and abort the
    // socket, and QLocalSocket closes its connecting descriptor a second time
    // if aborted from inside connected() (another thread may own that number
    // by then).
    connect(socket, &QLocalSocket::connected, this, &LocalLink::handleConnected, Qt::QueuedConnection);
    connect(socket, &QLocalSocket::disconnected, this, &LocalLink::handleDisconnected);
    connect(socket, &QLocalSocket::errorOccurred, this, &LocalLink::handleSocketError);
}

LocalLink *LocalLink::connectTo(const QString &serverName, DecoderLimits limits, int socketBuffer,
                                QObject *parent)
{
    auto *link = new LocalLink(new QLocalSocket, formatLocalAddress(serverName), limits, parent);
    link->setSocketBufferSize(socketBuffer);
    QMetaObject::invokeMethod(link, [link, serverName] { link->startConnecting(serverName); },
                              Qt::QueuedConnection);
    return link;
}

LocalLink *LocalLink::accept(QLocalSocket *socket, QString peerAddress, DecoderLimits limits,
                             int socketBuffer, QObject *parent)
{
    auto *link = new LocalLink(socket, std::move(peerAddress), limits, parent);
    link->setSocketBufferSize(socketBuffer);
    link->handleConnected();
    return link;
}

void LocalLink::startConnecting(const QString &serverName)
{
    if (state() == State::Connecting) // not closed before it started
        m_socket->connectToServer(serverName);
}

void LocalLink::closeDevice()
{
    // Not abort(): frames already queued (a Goodbye) are still sent.
    if (m_socket->state() != QLocalSocket::UnconnectedState)
        m_socket->disconnectFromServer();
}

void LocalLink::handleSocketError(QLocalSocket::LocalSocketError error)
{
    if (state() == State::Connecting) {
        // Qt calls a name nobody listens on "Invalid name".
        const QString reason = error == QLocalSocket::ServerNotFoundError
                                   ? QStringLiteral("no server is listening there")
                                   : m_socket->errorString();
        const bool refused = error == QLocalSocket::ServerNotFoundError
                             || error == QLocalSocket::ConnectionRefusedError;
        return handleDeviceError(refused ? ErrorCode::ConnectionRefused : ErrorCode::ConnectFailed,
                                 QStringLiteral("cannot connect to %1: %2").arg(m_peerAddress, reason));
    }
    // An orderly close is not an error; disconnected() follows and decides.
    if (error == QLocalSocket::PeerClosedError)
        return;
    handleDeviceError(ErrorCode::LinkError, m_socket->errorString());
}

} // namespace mmpi

namespace mmpi {

void LocalLink::flushDevice()
{
    m_socket->flush();
}

} // namespace mmpi
