// The bluetooth transport without a radio: addresses, the connect retry
// policy and dialer, the discovery state machine (inquiry, SDP, late records,
// early stop, remembered devices, progress), the peer cache, error mapping,
// and the plugin's options and failures through the registry.
#include "btaddress.h"
#include "btconnectpolicy.h"
#include "btdialer.h"
#include "btdiscovery.h"
#include "btpeercache.h"
#include "fakebluetooth.h"
#include "qtsocketopener.h"
#include "why.h"

#include <mmpi/transport/transportregistry.h>

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <cerrno>

using namespace mmpi;
using mmpi::test::why;
using mmpi::test::FakeOpener;
using mmpi::test::FakeScanner;
using Failure = BtConnectPolicy::Failure;

namespace {
constexpr quint64 DevA = 0x0000AA000001, DevB = 0x0000BB000002, DevC = 0x0000CC000003;

BtServiceRecord record(quint64 device, const QString &node, quint8 channel = 3, const QString &world = u"w"_qs)
{
    return {device, channel, world, node};
}
} // namespace

class TstBluetooth : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { qRegisterMetaType<BtServiceRecord>(); qRegisterMetaType<BtDiscovery::Progress>(); }

    void addresses()
    {
        auto parsed = parseBtAddress(u"bt://0a:1B:2c:3D:4e:5F/12"_qs);
        QVERIFY(parsed);
        QCOMPARE(parsed->device, 0x0A1B2C3D4E5FULL);
        QCOMPARE(parsed->channel, 12);
        QCOMPARE(formatBtAddress(*parsed), u"bt://0A:1B:2C:3D:4E:5F/12"_qs);
        for (const QString &bad : {u"tcp://1.2.3.4:5"_qs, u"bt://0A:1B:2C:3D:4E/3"_qs, u"bt://0A:1B:2C:3D:4E:5F"_qs,
                                   u"bt://0A:1B:2C:3D:4E:5F/31"_qs, u"bt://0A:1B:2C:3D:4E:5F/0"_qs,
                                   u"bt://0A:1B:2C:3D:4E:5G/1"_qs, u"bt://0A:1B:2C:3D:4E:5F/+1"_qs}) {
            auto result = parseBtAddress(bad);
            QVERIFY2(!result, qPrintable(bad));
            QCOMPARE(result.error().code, ErrorCode::BadAddress);
        }
        QVERIFY(parseBtAddress(u"bt://0A:1B:2C:3D:4E:5F/0"_qs, true));
    }

    void policyBacksOff()
    {
        BtConnectPolicy policy; // 4 retries, 300 ms doubling up to 2400 ms
        QCOMPARE(policy.retryDelay(Failure::Refused, 1, false).value_or(-1), 300);
        QCOMPARE(policy.retryDelay(Failure::Refused, 2, false).value_or(-1), 600);
        QCOMPARE(policy.retryDelay(Failure::Unreachable, 4, false).value_or(-1), 2400);
        QVERIFY(!policy.retryDelay(Failure::Refused, 5, false));
        // A refusal from a peer reached before: three retries (two bonded
        // devices paging each other are refused for a while), not four.
        QVERIFY(policy.retryDelay(Failure::Refused, 3, true));
        QVERIFY(!policy.retryDelay(Failure::Refused, 4, true));
        QVERIFY(policy.retryDelay(Failure::Unreachable, 3, true));
        QVERIFY(!policy.retryDelay(Failure::Fatal, 1, false));
        // So is a pairing refused by a peer paired with before (its policy);
        // a first pairing is retried as often as a refusal.
        QVERIFY(policy.retryDelay(Failure::AuthRejected, 1, true));
        QVERIFY(!policy.retryDelay(Failure::AuthRejected, 2, true));
        QVERIFY(policy.retryDelay(Failure::AuthRejected, 4, false));
        policy.maxBackoffMs = 500;
        QCOMPARE(policy.retryDelay(Failure::Transient, 4, false).value_or(-1), 500);
        // Spread by a quarter either way, so two dialers drift apart.
        QCOMPARE(policy.jittered(1000, 0.0), 750);
        QCOMPARE(policy.jittered(1000, 0.5), 1000);
        QCOMPARE(policy.jittered(1000, 0.999), 1249);
        policy.jitter = 0;
        QCOMPARE(policy.jittered(1000, 0.9), 1000);
    }

    void errorMapping()
    {
        QCOMPARE(BtConnectPolicy::classifyErrno(ECONNREFUSED), Failure::Refused);
        QCOMPARE(BtConnectPolicy::classifyErrno(EHOSTDOWN), Failure::Unreachable);
        QCOMPARE(BtConnectPolicy::classifyErrno(ETIMEDOUT), Failure::Unreachable);
        QCOMPARE(BtConnectPolicy::classifyErrno(ENETDOWN), Failure::Unreachable); // our controller is off
        QCOMPARE(BtConnectPolicy::classifyErrno(ECONNRESET), Failure::Transient);
        QCOMPARE(BtConnectPolicy::classifyErrno(EACCES), Failure::AuthRejected); // pairing refused
        QCOMPARE(BtConnectPolicy::classifyErrno(EPERM), Failure::AuthRejected);
        QCOMPARE(BtConnectPolicy::classifyErrno(EAFNOSUPPORT), Failure::Fatal); // no Bluetooth in this kernel
        QCOMPARE(BtConnectPolicy::errorCodeFor(Failure::Refused, false), ErrorCode::ConnectionRefused); // -> NODETERM
        QCOMPARE(BtConnectPolicy::errorCodeFor(Failure::Unreachable, true), ErrorCode::ConnectFailed); // -> RANGE
        QCOMPARE(BtConnectPolicy::errorCodeFor(Failure::Transient, true), ErrorCode::ConnectFailed);
        // A device that paired before and now refuses will not pair again;
        // a first pairing that failed may still be a race.
        QCOMPARE(BtConnectPolicy::errorCodeFor(Failure::AuthRejected, true), ErrorCode::PairingRefused);
        QCOMPARE(BtConnectPolicy::errorCodeFor(Failure::AuthRejected, false), ErrorCode::ConnectFailed);
        using E = QBluetoothSocket::SocketError;
        QCOMPARE(QtSocketOpener::classify(E::ServiceNotFoundError), Failure::Refused);
        QCOMPARE(QtSocketOpener::classify(E::HostNotFoundError), Failure::Unreachable);
        QCOMPARE(QtSocketOpener::classify(E::NetworkError), Failure::Transient);
        QCOMPARE(QtSocketOpener::classify(E::MissingPermissionsError), Failure::Fatal);
    }

    void dialerRetriesSecurityBlock()
    {
        auto *opener = new FakeOpener;
        opener->script = {Failure::Refused, Failure::Refused, std::nullopt};
        BtConnectPolicy policy;
        policy.firstBackoffMs = 20;
        policy.jitter = 0;
        BtDialer dialer(opener, policy, false);
        QSignalSpy connected(&dialer, &BtDialer::connected);
        QSignalSpy retrying(&dialer, &BtDialer::retrying);
        QSignalSpy failed(&dialer, &BtDialer::failed);
        QElapsedTimer clock;
        clock.start();
        dialer.start(nullptr, {DevA, 5});
        QVERIFY(connected.wait(5000));
        QVERIFY(clock.elapsed() >= 55); // both backoffs (20 + 40 ms; coarse timers may fire 5% early)
        QCOMPARE(opener->started, 3);
        QCOMPARE(retrying.size(), 2);
        QCOMPARE(retrying.at(0).at(2).toInt(), 20);
        QCOMPARE(retrying.at(1).at(2).toInt(), 40);
        QCOMPARE(failed.size(), 0);
    }

    void dialerGivesUp_data()
    {
        QTest::addColumn<int>("failure");
        QTest::addColumn<bool>("known");
        QTest::addColumn<int>("attempts");
        QTest::addColumn<int>("code");
        QTest::newRow("refused, new peer") << int(Failure::Refused) << false << 3 << int(ErrorCode::ConnectionRefused);
        QTest::newRow("refused, known peer") << int(Failure::Refused) << true << 3 << int(ErrorCode::ConnectionRefused);
        QTest::newRow("unreachable") << int(Failure::Unreachable) << true << 3 << int(ErrorCode::ConnectFailed);
        QTest::newRow("fatal") << int(Failure::Fatal) << false << 1 << int(ErrorCode::ConnectFailed);
        QTest::newRow("pairing refused again") << int(Failure::AuthRejected) << true << 2
                                               << int(ErrorCode::PairingRefused);
    }

    void dialerGivesUp()
    {
        QFETCH(int, failure);
        QFETCH(bool, known);
        QFETCH(int, attempts);
        QFETCH(int, code);
        auto *opener = new FakeOpener;
        for (int i = 0; i < 10; ++i)
            opener->script << Failure(failure);
        BtConnectPolicy policy;
        policy.retries = 2;
        policy.firstBackoffMs = 10;
        BtDialer dialer(opener, policy, known);
        QSignalSpy failed(&dialer, &BtDialer::failed);
        dialer.start(nullptr, {DevB, 7});
        QVERIFY(failed.wait(5000));
        QCOMPARE(opener->started, attempts);
        const auto error = failed.at(0).at(0).value<Error>();
        QCOMPARE(int(error.code), code);
        QVERIFY2(error.message.contains(u"bt://00:00:BB:00:00:02/7"_qs), qPrintable(error.message));
        QVERIFY2(error.message.contains(u"scripted failure"_qs), qPrintable(error.message));
    }

    void dialerCancel()
    {
        auto *opener = new FakeOpener;
        opener->script = {Failure::Refused, std::nullopt};
        BtConnectPolicy policy;
        policy.firstBackoffMs = 50;
        BtDialer dialer(opener, policy, false);
        QSignalSpy connected(&dialer, &BtDialer::connected);
        QSignalSpy retrying(&dialer, &BtDialer::retrying);
        dialer.start(nullptr, {DevA, 1});
        QVERIFY(retrying.wait(2000));
        dialer.cancel();
        QTest::qWait(150);
        QCOMPARE(opener->started, 1); // the backoff's attempt never ran
        QCOMPARE(connected.size(), 0);
    }

    void discoveryStopsInquiryOnceExpectedFound()
    {
        FakeScanner scanner;
        BtDiscovery discovery(&scanner);
        discovery.setSettings({.expectedPeers = 2, .settleMs = 20, .roundPauseMs = 10, .repeatMs = 60000});
        QSignalSpy found(&discovery, &BtDiscovery::candidateFound);
        QSignalSpy completed(&discovery, &BtDiscovery::completed);
        QSignalSpy progress(&discovery, &BtDiscovery::progressChanged);
        discovery.start(u"w"_qs);
        QCOMPARE(scanner.inquiriesStarted, 1); // nothing remembered: inquiry at once
        Q_EMIT scanner.deviceFound(DevC, u"printer"_qs);
        Q_EMIT scanner.deviceFound(DevA, u"phone a"_qs);
        Q_EMIT scanner.deviceFound(DevA, u"phone a"_qs); // reported twice: asked once
        // One SDP query at a time.
        QCOMPARE(scanner.queries, QList<quint64>{DevC});
        Q_EMIT scanner.serviceQueryFinished(DevC);
        QCOMPARE(scanner.queries, (QList<quint64>{DevC, DevA}));
        Q_EMIT scanner.serviceFound(record(DevA, u"node-b"_qs, 4));
        Q_EMIT scanner.serviceQueryFinished(DevA);
        QCOMPARE(found.size(), 1);
        QVERIFY(!completed.size());
        Q_EMIT scanner.deviceFound(DevB, u"phone b"_qs);
        QCOMPARE(scanner.queries.last(), DevB);
        Q_EMIT scanner.serviceFound(record(DevB, u"node-a"_qs, 9));
        QCOMPARE(completed.size(), 1);
        QCOMPARE(scanner.inquiriesStopped, 1); // not the full 10.24 s
        QVERIFY(!discovery.inquiryActive());
        const auto list = discovery.candidates();
        QCOMPARE(list.size(), 2);
        QCOMPARE(list.at(0).nodeId, u"node-a"_qs); // rank order: by node id
        QCOMPARE(list.at(0).channel, 9);
        QCOMPARE(list.at(1).device, DevA);
        QVERIFY(discovery.completedAfterMs() >= 0);
        const auto last = progress.last().at(0).value<BtDiscovery::Progress>();
        QCOMPARE(last.devicesSeen, 3);
        QCOMPARE(last.servicesFound, 2);
        QCOMPARE(last.secondsLeft, 0);
        QVERIFY(last.complete);
        QTest::qWait(100);
        QCOMPARE(scanner.inquiriesStarted, 1); // complete: no further round
        QVERIFY(discovery.devicesWithoutService().contains(DevC));
    }

    void discoveryAcceptsRecordsAfterFinished()
    {
        FakeScanner scanner;
        BtDiscovery discovery(&scanner);
        discovery.setSettings({.expectedPeers = 0, .settleMs = 80, .roundPauseMs = 10, .repeatMs = 60000});
        QSignalSpy found(&discovery, &BtDiscovery::candidateFound);
        discovery.start(u"w"_qs);
        Q_EMIT scanner.deviceFound(DevA, {});
        Q_EMIT scanner.serviceQueryFinished(DevA); // finished() first ...
        QTest::qWait(20);
        Q_EMIT scanner.serviceFound(record(DevA, u"late"_qs)); // ... the record after it
        QCOMPARE(found.size(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(!discovery.devicesWithoutService().contains(DevA) && found.size() == 1, 500);
        QTest::qWait(120);
        QVERIFY(!discovery.devicesWithoutService().contains(DevA));
        // A record of another world, and a record arriving long after, both
        // are judged by what they say, not by when they come.
        Q_EMIT scanner.serviceFound(record(DevB, u"other"_qs, 3, u"elsewhere"_qs));
        QCOMPARE(found.size(), 1);
        Q_EMIT scanner.serviceFound(record(DevB, u"b"_qs));
        QCOMPARE(found.size(), 2);
    }

    void discoveryRunsRoundsUntilFound()
    {
        FakeScanner scanner;
        BtDiscovery discovery(&scanner);
        discovery.setSettings({.expectedPeers = 1, .settleMs = 10, .roundPauseMs = 10, .repeatMs = 60000});
        discovery.start(u"w"_qs);
        Q_EMIT scanner.deviceFound(DevA, {});
        Q_EMIT scanner.serviceQueryFinished(DevA); // no mmpiNode there (yet)
        Q_EMIT scanner.inquiryFinished();
        QTRY_COMPARE_WITH_TIMEOUT(scanner.inquiriesStarted, 2, 1000);
        // The new round asks DevA again: its app may have started since.
        Q_EMIT scanner.deviceFound(DevA, {});
        QCOMPARE(scanner.queries, (QList<quint64>{DevA, DevA}));
        Q_EMIT scanner.serviceFound(record(DevA, u"a"_qs));
        QVERIFY(!discovery.progress().secondsLeft);
        QVERIFY(discovery.progress().complete);
    }

    // A query that never ends is given up, asked once more after the other
    // devices, and then the round goes on without it.
    void discoveryAbandonsHungQuery()
    {
        FakeScanner scanner;
        BtDiscovery discovery(&scanner);
        discovery.setSettings({.expectedPeers = 2, .settleMs = 10, .roundPauseMs = 10, .repeatMs = 60000,
                               .queryTimeoutMs = 50, .queryAttempts = 2});
        QSignalSpy completed(&discovery, &BtDiscovery::completed);
        discovery.start(u"w"_qs);
        Q_EMIT scanner.deviceFound(DevA, {});
        Q_EMIT scanner.deviceFound(DevB, {});
        QCOMPARE(scanner.queries, QList<quint64>{DevA}); // DevA's query hangs
        QTRY_COMPARE_WITH_TIMEOUT(scanner.queries, (QList<quint64>{DevA, DevB}), 1000);
        QCOMPARE(scanner.aborted, QList<quint64>{DevA});
        Q_EMIT scanner.serviceFound(record(DevB, u"b"_qs));
        Q_EMIT scanner.serviceQueryFinished(DevB);
        QCOMPARE(scanner.queries, (QList<quint64>{DevA, DevB, DevA})); // second attempt
        Q_EMIT scanner.serviceQueryFinished(DevB); // stale: changes nothing
        QCOMPARE(scanner.queries.size(), 3);
        // The second attempt hangs too: given up for this round.
        QTRY_COMPARE_WITH_TIMEOUT(scanner.aborted, (QList<quint64>{DevA, DevA}), 1000);
        QTest::qWait(100);
        QCOMPARE(scanner.queries.size(), 3);
        QVERIFY(discovery.devicesWithoutService().contains(DevA));
        QVERIFY(!completed.size());
        // Next round (after the inquiry ends) asks it again, and it answers.
        Q_EMIT scanner.inquiryFinished();
        QTRY_COMPARE_WITH_TIMEOUT(scanner.inquiriesStarted, 2, 1000);
        Q_EMIT scanner.deviceFound(DevA, {});
        QCOMPARE(scanner.queries.size(), 4);
        Q_EMIT scanner.serviceFound(record(DevA, u"a"_qs));
        QCOMPARE(completed.size(), 1);
        QCOMPARE(scanner.aborted.size(), 3); // the answered query is no longer needed
    }

    void discoveryAsksRememberedDevicesFirst()
    {
        FakeScanner scanner;
        BtDiscovery discovery(&scanner);
        discovery.setSettings({.expectedPeers = 2, .settleMs = 10, .roundPauseMs = 10, .repeatMs = 30});
        discovery.setRemembered({DevB, DevC});
        QSignalSpy found(&discovery, &BtDiscovery::candidateFound);
        discovery.start(u"w"_qs);
        QCOMPARE(scanner.inquiriesStarted, 0);
        QCOMPARE(scanner.queries, QList<quint64>{DevB});
        Q_EMIT scanner.serviceFound(record(DevB, u"b"_qs));
        Q_EMIT scanner.serviceQueryFinished(DevB);
        Q_EMIT scanner.serviceFound(record(DevC, u"c"_qs));
        Q_EMIT scanner.serviceQueryFinished(DevC);
        QVERIFY(discovery.progress().complete);
        QCOMPARE(scanner.inquiriesStarted, 0); // no inquiry at all
        // Candidates are reported again, so a root that failed to reach one retries.
        QTRY_VERIFY_WITH_TIMEOUT(found.size() >= 4, 1000);
        discovery.stop();
        const auto count = found.size();
        QTest::qWait(100);
        QCOMPARE(found.size(), count);
    }

    void discoveryFallsBackToInquiry()
    {
        FakeScanner scanner;
        BtDiscovery discovery(&scanner);
        discovery.setSettings({.expectedPeers = 1, .settleMs = 10, .roundPauseMs = 10, .repeatMs = 60000});
        discovery.setRemembered({DevB});
        discovery.start(u"w"_qs);
        Q_EMIT scanner.serviceQueryFinished(DevB); // gone or switched off
        QTRY_COMPARE_WITH_TIMEOUT(scanner.inquiriesStarted, 1, 1000);
    }

    void discoveryNewNodeIdReplacesOld()
    {
        FakeScanner scanner;
        BtDiscovery discovery(&scanner);
        discovery.setSettings({.expectedPeers = 0, .settleMs = 10, .roundPauseMs = 10, .repeatMs = 60000});
        discovery.start(u"w"_qs);
        Q_EMIT scanner.serviceFound(record(DevA, u"old"_qs));
        Q_EMIT scanner.serviceFound(record(DevA, u"new"_qs, 5)); // the app restarted
        QCOMPARE(discovery.candidates().size(), 1);
        QCOMPARE(discovery.candidates().at(0).nodeId, u"new"_qs);
    }

    void discoveryFatalError()
    {
        FakeScanner scanner;
        BtDiscovery discovery(&scanner);
        QSignalSpy failed(&discovery, &BtDiscovery::failed);
        discovery.start(u"w"_qs);
        Q_EMIT scanner.scanError(u"a passing hiccup"_qs, false);
        QVERIFY(discovery.isRunning());
        Q_EMIT scanner.scanError(u"device discovery: powered off"_qs, true);
        QCOMPARE(failed.size(), 1);
        QCOMPARE(failed.at(0).at(0).value<Error>().code, ErrorCode::DiscoveryFailed);
        QVERIFY(!discovery.isRunning());
    }

    void peerCache()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"sub/peers.json"_qs);
        BtPeerCache cache(path);
        QVERIFY(cache.devices(u"w"_qs).isEmpty());
        QVERIFY(cache.remember(u"w"_qs, DevA));
        QVERIFY(cache.remember(u"w"_qs, DevB));
        QVERIFY(cache.remember(u"w"_qs, DevA));
        QCOMPARE(BtPeerCache(path).devices(u"w"_qs), (QList<quint64>{DevA, DevB}));
        QVERIFY(BtPeerCache(path).devices(u"other"_qs).isEmpty());
        for (int i = 0; i < 40; ++i)
            cache.remember(u"w"_qs, 0x100 + i);
        QCOMPARE(cache.devices(u"w"_qs).size(), BtPeerCache::MaxPerWorld);
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write("{\"worlds\":{\"w\":[\"zz\",42,\"00:00:00:00:00:07\"]}}");
        file.close();
        QCOMPARE(cache.devices(u"w"_qs), QList<quint64>{7}); // junk entries skipped
        QVERIFY(BtPeerCache(QString()).devices(u"w"_qs).isEmpty());
        QVERIFY(!BtPeerCache(QString()).remember(u"w"_qs, DevA));
    }

    void transportOptions()
    {
        auto transport = TransportRegistry::create(u"bluetooth"_qs, this);
        QVERIFY2(transport, transport ? "" : qPrintable(transport.error().toString()));
        std::unique_ptr<Transport> owner(*transport);
        QCOMPARE(owner->name(), u"bluetooth"_qs);
        QVERIFY(owner->supportsDiscovery());
        QCOMPARE(qgetenv("BLUETOOTH_FORCE_DBUS_LE_VERSION"), QByteArray("5.45"));
        QVERIFY(owner->configure({{u"adapter"_qs, u"00:1A:7D:DA:71:13"_qs}, {u"expectedPeers"_qs, 3},
                                  {u"knownPeers"_qs, u"00:00:00:00:00:01, 00:00:00:00:00:02"_qs},
                                  {u"peerCache"_qs, u"none"_qs}, {u"security"_qs, u"none"_qs},
                                  {u"connector"_qs, u"qt"_qs}, {u"maxLinks"_qs, 3},
                                  {u"visibility"_qs, u"keep"_qs}}));
        const QList<std::pair<QVariantMap, QString>> bad = {
            {{{u"adapter"_qs, u"hci0"_qs}}, u"adapter"_qs},
            {{{u"security"_qs, u"high"_qs}}, u"security"_qs},
            {{{u"knownPeers"_qs, u"00:00:00:00:00:01,nope"_qs}}, u"knownPeers"_qs},
            {{{u"maxLinks"_qs, 0}}, u"maxLinks"_qs},
            {{{u"connector"_qs, u"dbus"_qs}}, u"connector"_qs},
            {{{u"visibility"_qs, u"hidden"_qs}}, u"visibility"_qs},
            {{{u"beaconPort"_qs, 4}}, u"beaconPort"_qs},
        };
        for (const auto &[options, key] : bad) {
            auto result = owner->configure(options);
            QVERIFY2(!result, qPrintable(key));
            QCOMPARE(result.error().code, ErrorCode::BadConfiguration);
            QVERIFY2(result.error().message.contains(key), qPrintable(result.error().message));
        }
        auto badAddress = owner->connectTo(u"bt://00:11:22:33:44/1"_qs);
        QVERIFY(!badAddress);
        QCOMPARE(badAddress.error().code, ErrorCode::BadAddress);
        auto notListening = owner->advertise({u"w"_qs, u"n"_qs, {}});
        QCOMPARE(notListening.error().code, ErrorCode::DiscoveryFailed);
    }

    // On a machine without Bluetooth (this CI's kernel has none) a connect
    // fails cleanly; with Bluetooth it times out on the unanswered page. The
    // link limit is checked before any radio work.
    void transportConnectFailsCleanly()
    {
        auto transport = TransportRegistry::create(u"bluetooth"_qs, this);
        QVERIFY(transport);
        std::unique_ptr<Transport> owner(*transport);
        QVERIFY(owner->configure({{u"connectTimeout"_qs, 300}, {u"connectRetries"_qs, 0}, {u"maxLinks"_qs, 1},
                                  {u"peerCache"_qs, u"none"_qs}, {u"connector"_qs, u"kernel"_qs}}));
        auto link = owner->connectTo(u"bt://00:00:00:00:00:01/1"_qs);
        QVERIFY(link);
        QCOMPARE((*link)->state(), Link::State::Connecting);
        auto second = owner->connectTo(u"bt://00:00:00:00:00:02/1"_qs);
        QVERIFY(!second);
        QVERIFY2(second.error().message.contains(u"piconet"_qs), qPrintable(second.error().message));
        QSignalSpy closed(*link, &Link::stateChanged);
        QTRY_COMPARE_WITH_TIMEOUT((*link)->state(), Link::State::Closed, 5000);
        QCOMPARE((*link)->error().code, ErrorCode::ConnectFailed);
        QVERIFY2((*link)->errorString().contains(u"bt://00:00:00:00:00:01/1"_qs), qPrintable((*link)->errorString()));
        // The closed link no longer counts against the limit.
        auto third = owner->connectTo(u"bt://00:00:00:00:00:03/1"_qs);
        QVERIFY2(third, qPrintable(why(third)));
    }
};

QTEST_GUILESS_MAIN(TstBluetooth)
#include "tst_bluetooth.moc"
