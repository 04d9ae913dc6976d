#include "qtbtscanner.h"

#include <mmpi/core/logging.h>

#include <QBluetoothDeviceInfo>
#include <QBluetoothServiceDiscoveryAgent>
#include <QTimer>

#include <memory>
#include <utility>

namespace mmpi {

namespace {
// How long a finished query's agent lives on for late serviceDiscovered().
constexpr int AgentLingerMs = 5000;
}

QtBtScanner::QtBtScanner(quint64 adapter, QObject *parent)
    : BtScanner(parent), m_adapter(adapter)
{
}

void QtBtScanner::startInquiry()
{
    if (!m_inquiry) {
        m_inquiry = m_adapter.isNull() ? new QBluetoothDeviceDiscoveryAgent(this)
                                       : new QBluetoothDeviceDiscoveryAgent(m_adapter, this);
        connect(m_inquiry, &QBluetoothDeviceDiscoveryAgent::deviceDiscovered, this,
                [this](const QBluetoothDeviceInfo &info) {
                    // Every device is asked, whatever its core configuration:
                    // Qt's BlueZ backend calls a device whose class of device
                    // is 0 "LowEnergy" although the ClassicMethod inquiry found
                    // it over BR/EDR (seen on the bt-vm rig; also real devices
                    // with no class set). An LE-only device merely fails its
                    // SDP query.
                    Q_EMIT deviceFound(info.address().toUInt64(), info.name());
                });
        connect(m_inquiry, &QBluetoothDeviceDiscoveryAgent::finished, this, &BtScanner::inquiryFinished);
        connect(m_inquiry, &QBluetoothDeviceDiscoveryAgent::canceled, this, &BtScanner::inquiryFinished);
        connect(m_inquiry, &QBluetoothDeviceDiscoveryAgent::errorOccurred, this, &QtBtScanner::handleInquiryError);
    }
    m_inquiry->start(QBluetoothDeviceDiscoveryAgent::ClassicMethod);
}

void QtBtScanner::stopInquiry()
{
    if (m_inquiry && m_inquiry->isActive())
        m_inquiry->stop();
}

void QtBtScanner::handleInquiryError(QBluetoothDeviceDiscoveryAgent::Error error)
{
    using E = QBluetoothDeviceDiscoveryAgent::Error;
    const bool fatal = error == E::PoweredOffError || error == E::InvalidBluetoothAdapterError
        || error == E::UnsupportedPlatformError || error == E::UnsupportedDiscoveryMethod
        || error == E::MissingPermissionsError;
    Q_EMIT scanError(QStringLiteral("device discovery: %1").arg(m_inquiry->errorString()), fatal);
    if (!fatal)
        Q_EMIT inquiryFinished();
}

void QtBtScanner::queryServices(quint64 device)
{
    auto *agent = m_adapter.isNull() ? new QBluetoothServiceDiscoveryAgent(this)
                                     : new QBluetoothServiceDiscoveryAgent(m_adapter, this);
    agent->setRemoteAddress(QBluetoothAddress(device));
    agent->setUuidFilter(btServiceUuid());
    connect(agent, &QBluetoothServiceDiscoveryAgent::serviceDiscovered, this, [this](const QBluetoothServiceInfo &info) {
        BtServiceRecord record;
        if (btRecordFromServiceInfo(info, &record))
            Q_EMIT serviceFound(record);
        else
            qCDebug(lcTransport) << "bluetooth: skipping a malformed mmpiNode record from"
                                 << info.device().address().toString();
    });
    // finished() may follow errorOccurred(): report the query once. The agent
    // stays a while for records QtBluetooth delivers after finished().
    auto reported = std::make_shared<bool>(false);
    m_queries.insert(device, {agent, reported});
    auto done = [this, agent, device, reported] {
        if (std::exchange(*reported, true))
            return;
        if (m_queries.value(device).agent == agent)
            m_queries.remove(device);
        QTimer::singleShot(AgentLingerMs, agent, &QObject::deleteLater);
        Q_EMIT serviceQueryFinished(device);
    };
    connect(agent, &QBluetoothServiceDiscoveryAgent::finished, this, done);
    connect(agent, &QBluetoothServiceDiscoveryAgent::canceled, this, done);
    connect(agent, &QBluetoothServiceDiscoveryAgent::errorOccurred, this,
            [agent, device, done](QBluetoothServiceDiscoveryAgent::Error) {
                qCDebug(lcTransport).noquote() << "bluetooth: service discovery on" << formatBtDevice(device)
                                               << "failed:" << agent->errorString();
                done();
            });
    agent->start(QBluetoothServiceDiscoveryAgent::FullDiscovery);
}

void QtBtScanner::abortQuery(quint64 device)
{
    const Query query = m_queries.take(device);
    if (!query.agent)
        return;
    *query.reported = true; // no serviceQueryFinished() for an aborted query
    // Kills BlueZ's sdpscanner helper if it still runs.
    query.agent->stop();
    QTimer::singleShot(AgentLingerMs, query.agent.data(), &QObject::deleteLater);
}

} // namespace mmpi
