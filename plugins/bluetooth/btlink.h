// BtLink: a StreamLink over a QBluetoothSocket (RFCOMM). Dialled links
// connect through a BtDialer (retries with backoff); accepted ones come from
// the QBluetoothServer already connected. Addresses as bt://AA:..:FF/<channel>.
#pragma once

#include "btdialer.h"

#include <mmpi/transport/streamlink.h>

#include <QBluetoothSocket>

namespace mmpi {

class BtLink : public StreamLink
{
    Q_OBJECT
public:
    // Starts on the next event-loop turn; takes ownership of `dialer`.
    static BtLink *dial(const BtEndpoint &peer, BtDialer *dialer, DecoderLimits limits, QObject *parent);
    static BtLink *accept(QBluetoothSocket *socket, DecoderLimits limits, QObject *parent);

    QString peerAddress() const override { return m_peerAddress; }
    quint64 peerDevice() const { return m_peerDevice; }

Q_SIGNALS:
    // The link is connected (dialled or accepted) to `device`.
    void peerReached(quint64 device);

protected:
    void closeDevice() override;
    // The socket writes from its own notifier; nothing to push here.
    void flushDevice() override {}
    qintptr nativeDescriptor() const override { return m_socket->socketDescriptor(); }
    KernelQueue kernelQueue() const override { return KernelQueue::Bluetooth; }

private:
    BtLink(QBluetoothSocket *socket, QString peerAddress, quint64 device, DecoderLimits limits, QObject *parent);
    void handleSocketError(QBluetoothSocket::SocketError error);

    QBluetoothSocket *m_socket;
    BtDialer *m_dialer = nullptr;
    QString m_peerAddress;
    quint64 m_peerDevice;
};

} // namespace mmpi
