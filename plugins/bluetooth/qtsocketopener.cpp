#include "qtsocketopener.h"

#include "btservice.h"

#include <QBluetoothAddress>

namespace mmpi {

QtSocketOpener::QtSocketOpener(int timeoutMs, QObject *parent)
    : BtSocketOpener(parent), m_timeoutMs(timeoutMs), m_timer(this)
{
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, [this] {
        QBluetoothSocket *socket = m_socket;
        finish();
        if (socket)
            socket->abort();
        Q_EMIT failed(BtConnectPolicy::Failure::Unreachable, QStringLiteral("no answer within %1 ms").arg(m_timeoutMs));
    });
}

void QtSocketOpener::start(QBluetoothSocket *socket, const BtEndpoint &peer)
{
    finish();
    m_socket = socket;
    connect(socket, &QBluetoothSocket::connected, this, [this] {
        finish();
        Q_EMIT opened();
    });
    connect(socket, &QBluetoothSocket::errorOccurred, this, [this](QBluetoothSocket::SocketError error) {
        const QString message = m_socket ? m_socket->errorString() : QString();
        finish();
        Q_EMIT failed(classify(error), message);
    });
    m_timer.start(m_timeoutMs);
    // By UUID: Android resolves the channel itself and refuses raw channels.
    socket->connectToService(QBluetoothAddress(peer.device), btServiceUuid());
}

void QtSocketOpener::cancel()
{
    QBluetoothSocket *socket = m_socket;
    finish();
    if (socket)
        socket->abort();
}

void QtSocketOpener::finish()
{
    m_timer.stop();
    if (m_socket)
        m_socket->disconnect(this);
    m_socket = nullptr;
}

BtConnectPolicy::Failure QtSocketOpener::classify(QBluetoothSocket::SocketError error)
{
    using E = QBluetoothSocket::SocketError;
    switch (error) {
    case E::ServiceNotFoundError:
        return BtConnectPolicy::Failure::Refused;
    case E::HostNotFoundError:
        return BtConnectPolicy::Failure::Unreachable;
    case E::NetworkError:
    case E::RemoteHostClosedError:
    case E::UnknownSocketError:
        return BtConnectPolicy::Failure::Transient;
    default: // OperationError, UnsupportedProtocolError, MissingPermissionsError, NoSocketError
        return BtConnectPolicy::Failure::Fatal;
    }
}

} // namespace mmpi
