// Scripted stand-ins for the radio side of the bluetooth transport's seams:
// a BtScanner whose inquiry and SDP answers the test injects, and a
// BtSocketOpener that fails or succeeds as scripted.
#pragma once

#include "btscanner.h"
#include "btsocketopener.h"

#include <QList>
#include <QTimer>

namespace mmpi::test {

class FakeScanner : public BtScanner
{
    Q_OBJECT
public:
    using BtScanner::BtScanner;
    void startInquiry() override { ++inquiriesStarted; inquiring = true; }
    void stopInquiry() override
    {
        ++inquiriesStopped;
        inquiring = false;
        // QtBluetooth reports canceled() later, not from inside stop().
        QTimer::singleShot(0, this, &BtScanner::inquiryFinished);
    }
    void queryServices(quint64 device) override { queries << device; }
    void abortQuery(quint64 device) override { aborted << device; }

    int inquiriesStarted = 0;
    int inquiriesStopped = 0;
    bool inquiring = false;
    QList<quint64> queries;
    QList<quint64> aborted;
};

class FakeOpener : public BtSocketOpener
{
    Q_OBJECT
public:
    using BtSocketOpener::BtSocketOpener;
    // Outcomes in order; an empty optional means "connected".
    QList<std::optional<BtConnectPolicy::Failure>> script;
    int started = 0;
    int cancelled = 0;

    void start(QBluetoothSocket *, const BtEndpoint &) override
    {
        const auto outcome = script.value(started++, BtConnectPolicy::Failure::Fatal);
        QTimer::singleShot(0, this, [this, outcome] {
            if (outcome)
                Q_EMIT failed(*outcome, QStringLiteral("scripted failure %1").arg(started));
            else
                Q_EMIT opened();
        });
    }
    void cancel() override { ++cancelled; }
};

} // namespace mmpi::test
