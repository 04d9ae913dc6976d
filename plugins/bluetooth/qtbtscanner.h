// QtBtScanner: BtScanner on QBluetoothDeviceDiscoveryAgent (classic inquiry)
// and a QBluetoothServiceDiscoveryAgent per SDP query, filtered by the
// mmpiNode UUID. A query's agent outlives its finished() for a while, since
// QtBluetooth may deliver serviceDiscovered() after it.
#pragma once

#include "btaddress.h"
#include "btscanner.h"

#include <QBluetoothAddress>
#include <QBluetoothDeviceDiscoveryAgent>
#include <QBluetoothServiceDiscoveryAgent>
#include <QHash>
#include <QPointer>

#include <memory>

namespace mmpi {

class QtBtScanner : public BtScanner
{
    Q_OBJECT
public:
    // `adapter` 0: the default adapter.
    explicit QtBtScanner(quint64 adapter, QObject *parent = nullptr);

    void startInquiry() override;
    void stopInquiry() override;
    void queryServices(quint64 device) override;
    void abortQuery(quint64 device) override;

private:
    void handleInquiryError(QBluetoothDeviceDiscoveryAgent::Error error);

    QBluetoothAddress m_adapter;
    QBluetoothDeviceDiscoveryAgent *m_inquiry = nullptr;
    // The running query per device, and its "already reported" flag.
    struct Query
    {
        QPointer<QBluetoothServiceDiscoveryAgent> agent;
        std::shared_ptr<bool> reported;
    };
    QHash<quint64, Query> m_queries;
};

} // namespace mmpi
