#include "btlink.h"

#include <QBluetoothAddress>

namespace mmpi {

BtLink::BtLink(QBluetoothSocket *socket, QString peerAddress, quint64 device, DecoderLimits limits, QObject *parent)
    : StreamLink(socket, limits, parent), m_socket(socket), m_peerAddress(std::move(peerAddress)), m_peerDevice(device)
{
}

BtLink *BtLink::dial(const BtEndpoint &peer, BtDialer *dialer, DecoderLimits limits, QObject *parent)
{
    auto *socket = new QBluetoothSocket(QBluetoothServiceInfo::RfcommProtocol);
    auto *link = new BtLink(socket, formatBtAddress(peer), peer.device, limits, parent);
    link->m_dialer = dialer;
    dialer->setParent(link);
    connect(dialer, &BtDialer::connected, link, [link] {
        connect(link->m_socket, &QBluetoothSocket::disconnected, link, &BtLink::handleDisconnected);
        connect(link->m_socket, &QBluetoothSocket::errorOccurred, link, &BtLink::handleSocketError);
        link->handleConnected();
        Q_EMIT link->peerReached(link->m_peerDevice);
    });
    connect(dialer, &BtDialer::failed, link, [link](const Error &error) {
        link->handleDeviceError(error.code, error.message);
    });
    QMetaObject::invokeMethod(link, [link, peer] {
        if (link->state() == State::Connecting)
            link->m_dialer->start(link->m_socket, peer);
    }, Qt::QueuedConnection);
    return link;
}

BtLink *BtLink::accept(QBluetoothSocket *socket, DecoderLimits limits, QObject *parent)
{
    const quint64 device = socket->peerAddress().toUInt64();
    auto *link = new BtLink(socket, formatBtAddress({device, quint8(socket->peerPort())}), device, limits, parent);
    connect(socket, &QBluetoothSocket::disconnected, link, &BtLink::handleDisconnected);
    connect(socket, &QBluetoothSocket::errorOccurred, link, &BtLink::handleSocketError);
    link->handleConnected();
    return link;
}

void BtLink::closeDevice()
{
    if (m_dialer)
        m_dialer->cancel();
    // Not abort(): frames already queued (a Goodbye) are still sent.
    if (m_socket->state() != QBluetoothSocket::SocketState::UnconnectedState)
        m_socket->disconnectFromService();
}

void BtLink::handleSocketError(QBluetoothSocket::SocketError error)
{
    // An orderly close is not an error; disconnected() follows and decides.
    if (error == QBluetoothSocket::SocketError::RemoteHostClosedError)
        return;
    handleDeviceError(ErrorCode::LinkError, QStringLiteral("bluetooth link to %1: %2")
                                                .arg(m_peerAddress, m_socket->errorString()));
}

} // namespace mmpi
