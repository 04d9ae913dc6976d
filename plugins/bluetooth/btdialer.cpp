#include "btdialer.h"

#include <mmpi/core/logging.h>

#include <QMetaEnum>
#include <QRandomGenerator>

namespace mmpi {

BtDialer::BtDialer(BtSocketOpener *opener, BtConnectPolicy policy, bool peerKnown, QObject *parent)
    : QObject(parent), m_opener(opener), m_policy(policy), m_peerKnown(peerKnown), m_backoff(this)
{
    opener->setParent(this);
    m_backoff.setSingleShot(true);
    connect(&m_backoff, &QTimer::timeout, this, &BtDialer::attempt);
    connect(opener, &BtSocketOpener::opened, this, [this] {
        m_active = false;
        Q_EMIT connected();
    });
    connect(opener, &BtSocketOpener::failed, this, &BtDialer::handleFailure);
}

void BtDialer::start(QBluetoothSocket *socket, const BtEndpoint &peer)
{
    m_socket = socket;
    m_peer = peer;
    m_attempt = 0;
    m_active = true;
    attempt();
}

void BtDialer::cancel()
{
    m_active = false;
    m_backoff.stop();
    m_opener->cancel();
}

void BtDialer::attempt()
{
    if (!m_active)
        return;
    ++m_attempt;
    m_opener->start(m_socket, m_peer);
}

void BtDialer::handleFailure(BtConnectPolicy::Failure failure, const QString &reason)
{
    if (!m_active)
        return;
    if (auto delay = m_policy.retryDelay(failure, m_attempt, m_peerKnown)) {
        *delay = m_policy.jittered(*delay, QRandomGenerator::global()->generateDouble());
        qCDebug(lcTransport).noquote() << "bluetooth: connect to" << formatBtAddress(m_peer) << "attempt"
                                       << m_attempt << "failed (" << reason << "); retrying in" << *delay << "ms";
        Q_EMIT retrying(m_attempt, failure, *delay, reason);
        m_backoff.start(*delay);
        return;
    }
    m_active = false;
    const QString attempts = m_attempt == 1 ? QStringLiteral("1 attempt") : QStringLiteral("%1 attempts").arg(m_attempt);
    const ErrorCode code = BtConnectPolicy::errorCodeFor(failure, m_peerKnown);
    const QString advice = code != ErrorCode::PairingRefused
        ? QString()
        : QStringLiteral("; the device paired with this one before and refuses to pair again (BlueZ: "
                         "JustWorksRepairing = never); bond the devices (docs/guide/bluetooth.md, \"Bonding\")");
    Q_EMIT failed({code, QStringLiteral("cannot connect to %1 (%2, %3): %4%5")
                             .arg(formatBtAddress(m_peer), attempts,
                                  QString::fromLatin1(
                                      QMetaEnum::fromType<BtConnectPolicy::Failure>().valueToKey(int(failure))),
                                  reason, advice)});
}

} // namespace mmpi
