// QtSocketOpener: connects through QBluetoothSocket::connectToService() by the
// mmpiNode service UUID. The path for platforms without kernel RFCOMM sockets
// (Android: Qt's Java backend); on Linux it is chosen with connector=qt.
#pragma once

#include "btsocketopener.h"

#include <QBluetoothSocket>
#include <QPointer>
#include <QTimer>

namespace mmpi {

class QtSocketOpener : public BtSocketOpener
{
    Q_OBJECT
public:
    explicit QtSocketOpener(int timeoutMs, QObject *parent = nullptr);

    void start(QBluetoothSocket *socket, const BtEndpoint &peer) override;
    void cancel() override;

    static BtConnectPolicy::Failure classify(QBluetoothSocket::SocketError error);

private:
    void finish();

    int m_timeoutMs;
    QPointer<QBluetoothSocket> m_socket;
    QTimer m_timer;
};

} // namespace mmpi
