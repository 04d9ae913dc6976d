// The link model collectives decide with: what the transport says its medium
// is (Transport::expectedLink()) until the world has measured its own traffic:
// then half the heartbeats' round trip, and the rate large messages left at;
// an app's fixed model over both.
#include "commworld.h"

#include <mmpi/comm/communicator.h>
#include <mmpi/comm/tuning.h>
#include <mmpi/transport/transport.h>
#include <mmpi/transport/transportregistry.h>
#include <mmpi/world/world.h>

#include <QTest>

#include <algorithm>
#include <functional>

#include <memory>

using namespace mmpi;
using namespace mmpi::test;

namespace {

LinkModel modelOf(const LinkMedium &medium)
{
    return {medium.latencyUs, medium.bytesPerUs, medium.overheadUs};
}

// `size` ranks over the sim transport, rank r's options from `options(r)`.
std::unique_ptr<CommWorld> simWorld(int size, std::chrono::milliseconds heartbeat,
                                    const std::function<QVariantMap(int)> &options)
{
    // By value: CommWorld keeps the tweak for nodes it starts later.
    return std::make_unique<CommWorld>(QStringLiteral("local"), size, [options, heartbeat](WorldConfig &config) {
        config.transport = QStringLiteral("sim");
        config.rootAddress.replace(QStringLiteral("local://"), QStringLiteral("sim://"));
        const QVariantMap mine = options(config.rank);
        for (auto it = mine.cbegin(); it != mine.cend(); ++it)
            config.transportOptions.insert(it.key(), it.value());
        config.heartbeatInterval = heartbeat;
        config.heartbeatTimeout = std::max(std::chrono::milliseconds(10000), 3 * heartbeat);
    });
}

Result<LinkMedium> configuredMedium(const QString &transport, const QVariantMap &options)
{
    auto created = TransportRegistry::create(transport);
    if (!created)
        return created.error();
    std::unique_ptr<Transport> owned(*created);
    if (auto configured = owned->configure(options); !configured)
        return configured.error();
    return owned->expectedLink();
}

} // namespace

class TestLinkModel : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void transportsNameTheirMedium();
    void modelIsTheMediumBeforeAnyHeartbeat();
    void latencyFollowsTheHeartbeatRoundTrips();
    void rateFollowsLargeMessages();
    void fixedModelWins();
};

void TestLinkModel::transportsNameTheirMedium()
{
    // Given each transport as configured, its medium is what it runs over
    QCOMPARE(*configuredMedium(QStringLiteral("local"), {}), LinkMedium::loopback());
    QCOMPARE(*configuredMedium(QStringLiteral("tcp"), {}), LinkMedium::loopback());
    QCOMPARE(*configuredMedium(QStringLiteral("tcp"), {{QStringLiteral("listenHost"), QStringLiteral("any")}}),
             LinkMedium::wifi());
    // The sim: its profile's numbers, its options over them
    QCOMPARE(*configuredMedium(QStringLiteral("sim"), {}), LinkMedium::classicBluetooth());
    const LinkMedium wifi40 = *configuredMedium(
        QStringLiteral("sim"), {{QStringLiteral("link"), QStringLiteral("wifi")}, {QStringLiteral("latencyMs"), 40}});
    QCOMPARE(wifi40.name, QStringLiteral("wifi"));
    QCOMPARE(wifi40.latencyUs, 40000.0);
    QCOMPARE(wifi40.bytesPerUs, 5.0);
    const LinkMedium slow = *configuredMedium(QStringLiteral("sim"), {{QStringLiteral("bandwidth"), 10000}});
    QCOMPARE(slow.latencyUs, 30000.0);
    QCOMPARE(slow.bytesPerUs, 0.01);
    // ideal shapes nothing: the local transport's loopback underneath
    const LinkMedium ideal = *configuredMedium(QStringLiteral("sim"), {{QStringLiteral("link"), QStringLiteral("ideal")}});
    QCOMPARE(ideal.name, QStringLiteral("ideal"));
    QCOMPARE(ideal.latencyUs, LinkMedium::loopback().latencyUs);
    QCOMPARE(ideal.bytesPerUs, LinkMedium::loopback().bytesPerUs);
}

void TestLinkModel::modelIsTheMediumBeforeAnyHeartbeat()
{
    // Given a sim world on the bluetooth profile with heartbeats off
    const auto w = simWorld(3, std::chrono::milliseconds(0), [](int) { return QVariantMap{}; });
    QVERIFY(w->formed());
    // Then every rank's world names the medium, and the model is exactly its
    for (int r = 0; r < 3; ++r) {
        QCOMPARE(w->world(r)->expectedLink(), LinkMedium::classicBluetooth());
        QCOMPARE(linkModel((*w)[r]), modelOf(LinkMedium::classicBluetooth()));
    }
    // And after a broadcast too: it sends nothing of its own to measure with
    const QString sent = QStringLiteral("hello");
    std::vector<Operation<QString>> ops;
    for (int r = 0; r < 3; ++r)
        ops.push_back((*w)[r].bcast(r == 0 ? sent : QString(), 0));
    for (auto &op : ops) {
        // A bcast that has not finished in 20 s has hung.
        QTRY_VERIFY_WITH_TIMEOUT(op.request().isFinished(), 20000);
        const auto got = op.wait();
        QVERIFY(got);
        QCOMPARE(*got, sent);
    }
    QCOMPARE(linkModel((*w)[0]), modelOf(LinkMedium::classicBluetooth()));
    QVERIFY(lastBcastPlan((*w)[0]).has_value());
}

void TestLinkModel::latencyFollowsTheHeartbeatRoundTrips()
{
    // Given rank 0 whose radio sends after 1 ms and rank 1 whose radio sends
    // after 79 ms, both Wi-Fi, with a heartbeat every 50 ms
    const auto w = simWorld(2, std::chrono::milliseconds(50), [](int rank) {
        return QVariantMap{{QStringLiteral("link"), QStringLiteral("wifi")},
                           {QStringLiteral("latencyMs"), rank == 0 ? 1 : 79}};
    });
    QVERIFY(w->formed());
    // Then rank 0 starts from what its own transport says, 1 ms one way
    QCOMPARE(w->world(0)->expectedLink().latencyUs, 1000.0);
    // When heartbeats have come back, its latency is half their round trip:
    // at least (1 + 79) / 2 ms, since the sim never delivers early; the
    // upper bound only says that it is that round trip and not another
    QTRY_VERIFY_WITH_TIMEOUT(linkModel((*w)[0]).latencyUs >= 40000.0, 10000);
    const LinkModel model = linkModel((*w)[0]);
    QVERIFY2(model.latencyUs < 200000.0, qPrintable(QString::number(model.latencyUs)));
    const auto quality = w->world(0)->linkQuality(1);
    QVERIFY(quality && quality->roundTripSamples > 0);
    // And the rate and per-frame cost stay the medium's: heartbeats cannot tell them
    QCOMPARE(model.bytesPerUs, LinkMedium::wifi().bytesPerUs);
    QCOMPARE(model.overheadUs, LinkMedium::wifi().overheadUs);
}

void TestLinkModel::rateFollowsLargeMessages()
{
    // Given two ranks whose transport names a 5 MB/s Wi-Fi, while rank 0's
    // radio really sends 1 MB/s, heartbeats off
    const auto w = simWorld(2, std::chrono::milliseconds(0), [](int rank) {
        return rank == 0 ? QVariantMap{{QStringLiteral("link"), QStringLiteral("wifi")},
                                       {QStringLiteral("bandwidth"), 1000000}}
                         : QVariantMap{{QStringLiteral("link"), QStringLiteral("wifi")}};
    });
    QVERIFY(w->formed());
    QCOMPARE(w->world(0)->linkQuality(1)->sendRateSamples, quint64(0));
    // When rank 0 sends rank 1 half a megabyte
    const QByteArray bytes(512 * 1024, 'r');
    auto receive = (*w)[1].recv<QByteArray>(0, 7);
    auto send = (*w)[0].send(1, 7, bytes);
    QTRY_VERIFY_WITH_TIMEOUT(receive.request().isFinished(), 20000);
    QVERIFY(receive.wait());
    // Then rank 0 has measured the rate it left at: the radio's, never more
    // (the sim sends no byte early), not much less (a poll's lateness)
    QTRY_VERIFY_WITH_TIMEOUT(w->world(0)->linkQuality(1)->sendRateSamples > 0, 5000);
    const double rate = w->world(0)->linkQuality(1)->sendRate;
    QVERIFY2(rate > 0.6e6 && rate < 1.1e6, qPrintable(QString::number(rate)));
    // And its model plans with it, to two significant digits
    const LinkModel model = linkModel((*w)[0]);
    QVERIFY2(std::abs(model.bytesPerUs - rate / 1e6) <= 0.05 * rate / 1e6, qPrintable(QString::number(model.bytesPerUs)));
    QCOMPARE(model.latencyUs, w->world(0)->expectedLink().latencyUs);
}

void TestLinkModel::fixedModelWins()
{
    // Given a world whose heartbeats measure about 40 ms one way
    const auto w = simWorld(2, std::chrono::milliseconds(50), [](int) {
        return QVariantMap{{QStringLiteral("link"), QStringLiteral("wifi")}, {QStringLiteral("latencyMs"), 40}};
    });
    QVERIFY(w->formed());
    QTRY_VERIFY_WITH_TIMEOUT(w->world(0)->linkQuality(1) && w->world(0)->linkQuality(1)->roundTripSamples > 0, 10000);
    // When the app fixes a model, it is the model, heartbeats or not
    const LinkModel fixed{123.0, 7.0, 1.0};
    setLinkModel((*w)[0], fixed);
    QCOMPARE(linkModel((*w)[0]), fixed);
    QTest::qWait(200); // more heartbeats come back meanwhile
    QCOMPARE(linkModel((*w)[0]), fixed);
    // And without it the measured latency is back
    setLinkModel((*w)[0], std::nullopt);
    QVERIFY(linkModel((*w)[0]).latencyUs >= 40000.0);
    // And a null communicator has the defaults and no plan
    QCOMPARE(linkModel(Communicator()), LinkModel{});
    QVERIFY(!lastBcastPlan(Communicator()).has_value());
}

QTEST_MAIN(TestLinkModel)
#include "tst_linkmodel.moc"
