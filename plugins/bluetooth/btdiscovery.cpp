#include "btdiscovery.h"

#include "btaddress.h"

#include <mmpi/core/logging.h>

#include <algorithm>

namespace mmpi {

BtDiscovery::BtDiscovery(BtScanner *scanner, QObject *parent)
    : QObject(parent), m_scanner(scanner), m_repeat(this), m_countdown(this), m_queryTimer(this)
{
    m_queryTimer.setSingleShot(true);
    connect(&m_queryTimer, &QTimer::timeout, this, &BtDiscovery::handleQueryTimeout);
    connect(scanner, &BtScanner::deviceFound, this, [this](quint64 device) { handleDeviceFound(device); });
    connect(scanner, &BtScanner::inquiryFinished, this, &BtDiscovery::handleInquiryFinished);
    connect(scanner, &BtScanner::serviceFound, this, &BtDiscovery::handleServiceFound);
    connect(scanner, &BtScanner::serviceQueryFinished, this, &BtDiscovery::handleQueryFinished);
    connect(scanner, &BtScanner::scanError, this, &BtDiscovery::handleScanError);
    connect(&m_repeat, &QTimer::timeout, this, &BtDiscovery::repeatCandidates);
    // "Seconds left" changes with time alone.
    m_countdown.setInterval(1000);
    connect(&m_countdown, &QTimer::timeout, this, &BtDiscovery::reportProgress);
}

void BtDiscovery::start(const QString &worldName)
{
    stop();
    ++m_generation;
    m_world = worldName;
    m_running = true;
    m_complete = false;
    m_completedAfter = -1;
    m_queue.clear();
    m_queriedThisRound.clear();
    m_attemptsThisRound.clear();
    m_querying = -1;
    m_seen.clear();
    m_without.clear();
    m_settling.clear();
    m_candidates.clear();
    m_lastProgress = {};
    m_started.start();
    m_repeat.start(m_settings.repeatMs);
    m_countdown.start();
    for (quint64 device : std::as_const(m_remembered))
        enqueue(device);
    if (m_queue.isEmpty())
        startInquiry();
    reportProgress();
}

void BtDiscovery::stop()
{
    if (!m_running)
        return;
    m_running = false;
    ++m_generation;
    m_repeat.stop();
    m_countdown.stop();
    m_queryTimer.stop();
    if (m_querying >= 0)
        m_scanner->abortQuery(quint64(m_querying));
    m_querying = -1;
    if (m_inquiring)
        m_scanner->stopInquiry();
    m_inquiring = false;
    m_roundPending = false;
}

BtDiscovery::Progress BtDiscovery::progress() const
{
    Progress p;
    p.devicesSeen = int(m_seen.size());
    p.servicesFound = int(m_candidates.size());
    p.complete = m_complete;
    if (m_inquiring && !m_complete)
        p.secondsLeft = int(std::max<qint64>(0, m_settings.inquiryMs - m_roundStarted.elapsed()) + 999) / 1000;
    return p;
}

QList<BtServiceRecord> BtDiscovery::candidates() const
{
    QList<BtServiceRecord> list = m_candidates.values();
    std::sort(list.begin(), list.end(), [](const auto &a, const auto &b) { return a.nodeId < b.nodeId; });
    return list;
}

void BtDiscovery::handleDeviceFound(quint64 device)
{
    if (!m_running)
        return;
    m_seen.insert(device);
    enqueue(device);
    reportProgress();
}

void BtDiscovery::enqueue(quint64 device)
{
    const bool known = std::any_of(m_candidates.cbegin(), m_candidates.cend(),
                                   [device](const BtServiceRecord &r) { return r.device == device; });
    if (known || m_queriedThisRound.contains(device) || qint64(device) == m_querying || m_queue.contains(device))
        return;
    m_queue.append(device);
    queryNext();
}

void BtDiscovery::queryNext()
{
    if (!m_running || m_complete || m_querying >= 0 || m_queue.isEmpty())
        return;
    const quint64 device = m_queue.takeFirst();
    m_querying = qint64(device);
    m_queriedThisRound.insert(device);
    ++m_attemptsThisRound[device];
    qCDebug(lcTransport).noquote() << "bluetooth: asking" << formatBtDevice(device) << "for mmpiNode";
    m_queryTimer.start(m_settings.queryTimeoutMs);
    m_scanner->queryServices(device);
}

void BtDiscovery::handleServiceFound(const BtServiceRecord &record)
{
    if (!m_running || record.worldName != m_world)
        return;
    m_seen.insert(record.device);
    m_without.remove(record.device);
    // A device runs one node: a new node id there replaces the old one (app restarted).
    for (auto it = m_candidates.begin(); it != m_candidates.end();) {
        if (it->device == record.device && it.key() != record.nodeId)
            it = m_candidates.erase(it);
        else
            ++it;
    }
    const auto existing = m_candidates.constFind(record.nodeId);
    const bool changed = existing == m_candidates.cend() || *existing != record;
    m_candidates.insert(record.nodeId, record);
    if (changed) {
        qCInfo(lcTransport).noquote() << "bluetooth: found node" << record.nodeId << "of world" << m_world << "at"
                                      << formatBtAddress({record.device, record.channel}) << "after"
                                      << m_started.elapsed() << "ms";
        Q_EMIT candidateFound(record);
    }
    checkComplete();
    reportProgress();
}

void BtDiscovery::handleQueryFinished(quint64 device)
{
    if (!m_running || qint64(device) != m_querying)
        return;
    m_querying = -1;
    m_queryTimer.stop();
    settle(device);
    queryNext();
    if (m_queue.isEmpty() && !m_inquiring && !m_complete && !m_roundPending && m_settling.isEmpty())
        maybeNextRound();
}

// Records for `device` may still come; only after settleMs is it "without".
void BtDiscovery::settle(quint64 device)
{
    m_settling.insert(device);
    QTimer::singleShot(m_settings.settleMs, this, [this, device, generation = m_generation] {
        if (generation != m_generation)
            return;
        m_settling.remove(device);
        const bool found = std::any_of(m_candidates.cbegin(), m_candidates.cend(),
                                       [device](const BtServiceRecord &r) { return r.device == device; });
        if (!found)
            m_without.insert(device);
        maybeNextRound();
    });
}

// A hung query (seen with BlueZ's sdpscanner helper) would block every
// later one: give it up and ask the device once more after the others.
void BtDiscovery::handleQueryTimeout()
{
    if (!m_running || m_querying < 0)
        return;
    const quint64 device = quint64(m_querying);
    m_querying = -1;
    m_scanner->abortQuery(device);
    const bool again = m_attemptsThisRound.value(device) < m_settings.queryAttempts && !m_complete;
    qCWarning(lcTransport).noquote() << "bluetooth: SDP query of" << formatBtDevice(device) << "got no answer in"
                                     << m_settings.queryTimeoutMs << "ms;" << (again ? "asking again" : "giving up this round");
    if (again)
        m_queue.append(device);
    else
        settle(device);
    queryNext();
    if (m_queue.isEmpty() && m_querying < 0)
        maybeNextRound();
}

void BtDiscovery::startInquiry()
{
    if (!m_running || m_complete || m_inquiring)
        return;
    m_inquiring = true;
    m_roundStarted.start();
    m_queriedThisRound.clear();
    m_attemptsThisRound.clear();
    qCDebug(lcTransport) << "bluetooth: inquiry started";
    m_scanner->startInquiry();
}

void BtDiscovery::handleInquiryFinished()
{
    if (!m_running || !m_inquiring)
        return;
    m_inquiring = false;
    reportProgress();
    maybeNextRound();
}

// A round is over when nothing is inquiring, queued, asked or settling; the
// next one starts (after a pause) unless the expected peers are all found.
void BtDiscovery::maybeNextRound()
{
    if (!m_running || m_complete || m_inquiring || m_roundPending || m_querying >= 0 || !m_queue.isEmpty()
        || !m_settling.isEmpty())
        return;
    m_roundPending = true;
    QTimer::singleShot(m_settings.roundPauseMs, this, [this, generation = m_generation] {
        if (generation != m_generation)
            return;
        m_roundPending = false;
        startInquiry();
    });
}

void BtDiscovery::checkComplete()
{
    if (m_complete || m_settings.expectedPeers <= 0 || m_candidates.size() < m_settings.expectedPeers)
        return;
    m_complete = true;
    m_completedAfter = m_started.elapsed();
    m_queue.clear();
    if (m_querying >= 0) {
        // The last record came; its query's end no longer matters.
        m_queryTimer.stop();
        m_scanner->abortQuery(quint64(m_querying));
        m_querying = -1;
    }
    if (m_inquiring) {
        m_inquiring = false;
        m_scanner->stopInquiry();
    }
    qCInfo(lcTransport).noquote() << "bluetooth: discovery complete:" << m_candidates.size() << "node(s) of world"
                                  << m_world << "after" << m_completedAfter << "ms";
    Q_EMIT completed();
}

void BtDiscovery::reportProgress()
{
    const Progress now = progress();
    if (now == m_lastProgress)
        return;
    m_lastProgress = now;
    Q_EMIT progressChanged(now);
}

void BtDiscovery::repeatCandidates()
{
    const auto list = candidates();
    for (const BtServiceRecord &record : list)
        Q_EMIT candidateFound(record);
}

void BtDiscovery::handleScanError(const QString &message, bool fatal)
{
    if (!m_running)
        return;
    if (!fatal) {
        qCDebug(lcTransport).noquote() << "bluetooth:" << message;
        return;
    }
    qCWarning(lcTransport).noquote() << "bluetooth: discovery failed:" << message;
    stop();
    Q_EMIT failed({ErrorCode::DiscoveryFailed, QStringLiteral("bluetooth discovery failed: %1").arg(message)});
}

} // namespace mmpi
