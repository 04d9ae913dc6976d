// BtScanner: the seam between BtDiscovery's state machine and the radio:
// inquiry (device discovery) and one SDP query at a time for the mmpiNode
// UUID. QtBtScanner drives QtBluetooth's agents; tests script a fake one.
#pragma once

#include "btservice.h"

#include <QObject>

namespace mmpi {

class BtScanner : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;
    virtual void startInquiry() = 0;
    virtual void stopInquiry() = 0;
    // Ask `device` for mmpiNode records. Records may arrive after
    // serviceQueryFinished() for that device (QtBluetooth queues them).
    virtual void queryServices(quint64 device) = 0;
    // Give up the query of `device` (it hung): no serviceQueryFinished() for
    // it follows; records it still delivers count as usual.
    virtual void abortQuery(quint64 device) = 0;

Q_SIGNALS:
    void deviceFound(quint64 device, const QString &name);
    void inquiryFinished();
    void serviceFound(const mmpi::BtServiceRecord &record);
    void serviceQueryFinished(quint64 device);
    // `fatal`: discovery cannot go on (no adapter, powered off, no permission).
    void scanError(const QString &message, bool fatal);
};

} // namespace mmpi
