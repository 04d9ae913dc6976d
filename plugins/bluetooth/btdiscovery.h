// BtDiscovery: finds the mmpiNode services of one world. Remembered devices
// are asked first (no inquiry needed for a group seen before); otherwise an
// inquiry runs and every classic device it reports gets one SDP query, one
// query at a time. Records count whenever they arrive (QtBluetooth may queue
// them after the query's finished()); a device is taken for "no mmpiNode"
// only after a settle time. Inquiry stops once the expected number of peers
// is found (an inquiry otherwise always lasts ~10.24 s), and rounds repeat
// until then. An SDP query that hangs is abandoned after a timeout and
// retried once in the round. Progress (devices seen, services found, seconds left) is
// reported as it changes. Candidates are re-reported every repeat interval so
// a root that failed to reach one tries again.
#pragma once

#include "btscanner.h"

#include <mmpi/core/error.h>

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QSet>
#include <QTimer>

namespace mmpi {

class BtDiscovery : public QObject
{
    Q_OBJECT
public:
    struct Settings
    {
        int expectedPeers = 0;    // 0: never complete, inquire until stopped
        int settleMs = 500;       // wait for late records after a query finished
        int roundPauseMs = 500;   // between two inquiry rounds
        int repeatMs = 1000;      // re-report known candidates
        int inquiryMs = 10240;    // an inquiry's length, for "seconds left"
        int queryTimeoutMs = 8000; // an SDP query that hangs this long is abandoned
        int queryAttempts = 2;     // SDP queries of one device per round
    };
    struct Progress
    {
        int devicesSeen = 0;
        int servicesFound = 0; // candidates of this world
        int secondsLeft = 0;   // of the current inquiry round; 0 when complete
        bool complete = false;
        bool operator==(const Progress &) const = default;
    };

    // Does not take ownership of `scanner`.
    explicit BtDiscovery(BtScanner *scanner, QObject *parent = nullptr);

    void setSettings(const Settings &settings) { m_settings = settings; }
    // Devices to ask before (or instead of) an inquiry.
    void setRemembered(const QList<quint64> &devices) { m_remembered = devices; }

    void start(const QString &worldName);
    void stop();
    bool isRunning() const { return m_running; }
    bool inquiryActive() const { return m_inquiring; }
    Progress progress() const;
    // Candidates in node-id order: the order a root assigns ranks in.
    QList<BtServiceRecord> candidates() const;
    // Devices whose query ended (and settled) without a record of this world.
    QSet<quint64> devicesWithoutService() const { return m_without; }
    // Milliseconds from start() until the expected peers were found, or -1.
    qint64 completedAfterMs() const { return m_completedAfter; }

Q_SIGNALS:
    void candidateFound(const mmpi::BtServiceRecord &record);
    void progressChanged(const mmpi::BtDiscovery::Progress &progress);
    void completed();
    void failed(const mmpi::Error &error);

private:
    void handleDeviceFound(quint64 device);
    void handleInquiryFinished();
    void handleServiceFound(const BtServiceRecord &record);
    void handleQueryFinished(quint64 device);
    void handleScanError(const QString &message, bool fatal);
    void handleQueryTimeout();
    void enqueue(quint64 device);
    void queryNext();
    void settle(quint64 device);
    void startInquiry();
    void maybeNextRound();
    void checkComplete();
    void reportProgress();
    void repeatCandidates();

    BtScanner *m_scanner;
    Settings m_settings;
    QList<quint64> m_remembered;
    QString m_world;
    bool m_running = false;
    bool m_inquiring = false;
    bool m_complete = false;
    bool m_roundPending = false;
    qint64 m_querying = -1;              // device being asked, or -1
    QList<quint64> m_queue;
    QSet<quint64> m_queriedThisRound;
    QHash<quint64, int> m_attemptsThisRound;
    QSet<quint64> m_seen;
    QSet<quint64> m_without;
    QSet<quint64> m_settling;
    QHash<QString, BtServiceRecord> m_candidates; // by node id
    QElapsedTimer m_started;
    QElapsedTimer m_roundStarted;
    qint64 m_completedAfter = -1;
    Progress m_lastProgress;
    QTimer m_repeat;
    QTimer m_countdown;
    QTimer m_queryTimer;
    int m_generation = 0;                // drops timers of an earlier start()
};

} // namespace mmpi

Q_DECLARE_METATYPE(mmpi::BtDiscovery::Progress)
