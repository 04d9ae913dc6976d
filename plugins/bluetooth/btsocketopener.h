// BtSocketOpener: the seam between the link's connect state machine (BtDialer)
// and the radio. One attempt at a time: start() connects the given socket to
// the peer and reports opened() or failed() later, never from inside start().
// KernelRfcommOpener and QtSocketOpener are the real ones; tests script one.
#pragma once

#include "btaddress.h"
#include "btconnectpolicy.h"

#include <QObject>

class QBluetoothSocket;

namespace mmpi {

class BtSocketOpener : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;
    virtual void start(QBluetoothSocket *socket, const BtEndpoint &peer) = 0;
    // Abandons the attempt in progress; nothing is reported for it.
    virtual void cancel() = 0;

Q_SIGNALS:
    void opened();
    void failed(mmpi::BtConnectPolicy::Failure failure, const QString &message);
};

} // namespace mmpi
