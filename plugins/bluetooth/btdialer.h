// BtDialer: one outgoing link's connect state machine. It runs attempts
// through a BtSocketOpener and, on failure, asks BtConnectPolicy whether and
// when to try again (security blocks and flaky phone stacks), so the link
// reports one outcome: connected, or the error of the last attempt.
#pragma once

#include "btconnectpolicy.h"
#include "btsocketopener.h"

#include <mmpi/core/error.h>

#include <QTimer>

namespace mmpi {

class BtDialer : public QObject
{
    Q_OBJECT
public:
    // Takes ownership of `opener`.
    BtDialer(BtSocketOpener *opener, BtConnectPolicy policy, bool peerKnown, QObject *parent = nullptr);

    void start(QBluetoothSocket *socket, const BtEndpoint &peer);
    void cancel();
    int attempts() const { return m_attempt; }

Q_SIGNALS:
    void connected();
    // After the last attempt: ConnectionRefused or ConnectFailed, naming the
    // peer, the attempts made and the last reason.
    void failed(const mmpi::Error &error);
    // Each failed attempt that will be retried after `delayMs`.
    void retrying(int attempt, mmpi::BtConnectPolicy::Failure failure, int delayMs, const QString &reason);

private:
    void attempt();
    void handleFailure(BtConnectPolicy::Failure failure, const QString &reason);

    BtSocketOpener *m_opener;
    BtConnectPolicy m_policy;
    bool m_peerKnown;
    QBluetoothSocket *m_socket = nullptr;
    BtEndpoint m_peer;
    int m_attempt = 0;
    bool m_active = false;
    QTimer m_backoff;
};

} // namespace mmpi
