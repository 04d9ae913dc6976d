// Formation under bad conditions: a node with the wrong key, a root with the
// wrong key, a node that never starts, garbage and half frames on listening
// ports, a node that vanishes.
#include "worldharness.h"

#include <mmpi/wire/frame.h>

#include <QLocalSocket>
#include <QSignalSpy>
#include <QTcpSocket>
#include <QTest>
#include <QUrl>

using namespace mmpi;
using namespace mmpi::test;

namespace {

bool formedOrFailed(const std::vector<World *> &worlds)
{
    return std::all_of(worlds.begin(), worlds.end(), [](World *w) {
        return w->state() == World::State::Formed || w->state() == World::State::Failed;
    });
}

// A raw connection to an MMPI address, bypassing the transport.
std::unique_ptr<QIODevice> rawConnect(const QString &address)
{
    const QUrl url(address);
    if (url.scheme() == QLatin1String("tcp")) {
        auto socket = std::make_unique<QTcpSocket>();
        for (int i = 0; i < 100; ++i) {
            socket->connectToHost(url.host(), quint16(url.port()));
            if (socket->waitForConnected(1000))
                return socket;
            socket->abort();
            QTest::qWait(50);
        }
        return nullptr;
    }
    auto socket = std::make_unique<QLocalSocket>();
    for (int i = 0; i < 100; ++i) {
        socket->connectToServer(url.host().isEmpty() ? url.path() : url.host());
        if (socket->waitForConnected(1000))
            return socket;
        socket->abort();
        QTest::qWait(50);
    }
    return nullptr;
}

QByteArray halfFrame()
{
    Frame f = makeFrame(FrameKind::Data, ItemType::UnsignedByte, 100, QByteArray(100, 'x'));
    return encodeFrame(f).left(FrameHeaderSize + 10);
}

QByteArray hugeHeader()
{
    FrameHeader h;
    h.kind = FrameKind::Data;
    h.itemType = ItemType::UnsignedByte;
    h.count = 1u << 30;
    h.payloadLength = 1u << 30;
    return encodeHeader(h);
}

} // namespace

class TestFormationFaults : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void transports_data();
    void wrongKeyRefusedLaunched_data() { transports_data(); }
    void wrongKeyRefusedLaunched();
    void wrongKeyRefusedDiscovered_data() { transports_data(); }
    void wrongKeyRefusedDiscovered();
    void rootWithAnotherKeyFailsEverywhere_data();
    void rootWithAnotherKeyFailsEverywhere();
    void missingNodeNamedAtDeadline_data() { transports_data(); }
    void missingNodeNamedAtDeadline();
    void discoveredFormsWithMinimumSize_data() { transports_data(); }
    void discoveredFormsWithMinimumSize();
    void garbageLeavesNodesWorking_data() { transports_data(); }
    void garbageLeavesNodesWorking();
    void vanishedNodeIsLost_data() { transports_data(); }
    void vanishedNodeIsLost();
};

void TestFormationFaults::transports_data()
{
    QTest::addColumn<QString>("transport");
    QTest::newRow("local") << QStringLiteral("local");
    QTest::newRow("tcp") << QStringLiteral("tcp");
}

void TestFormationFaults::wrongKeyRefusedLaunched()
{
    QFETCH(QString, transport);
    // Given a root of a 2-node world and an intruder claiming rank 1 with the wrong key
    WorldHarness harness(transport, WorldConfig::Mode::Launched);
    World *root = harness.start(harness.config(0, 2));
    QSignalSpy refused(root, &World::peerRefused);
    WorldConfig bad = harness.config(1, 2);
    bad.worldKey = "not the key";
    World *intruder = harness.start(bad);
    QTRY_COMPARE_WITH_TIMEOUT(intruder->state(), World::State::Failed, 20000);

    // Then both ends say the keys differ, and the real rank 1 still joins
    QCOMPARE(intruder->error().code, ErrorCode::WorldKeyMismatch);
    QVERIFY2(intruder->errorString().contains(QLatin1String("the world keys differ")),
             qPrintable(intruder->errorString()));
    QVERIFY(refused.size() >= 1);
    const Error reason = refused.at(0).at(1).value<Error>();
    QCOMPARE(reason.code, ErrorCode::WorldKeyMismatch);
    QVERIFY2(reason.message.contains(QLatin1String("the world keys differ")), qPrintable(reason.message));
    World *good = harness.start(harness.config(1, 2));
    QTRY_VERIFY_WITH_TIMEOUT(formedOrFailed({root, good}), 20000);
    QCOMPARE(root->state(), World::State::Formed);
    QCOMPARE(good->state(), World::State::Formed);
    QString problem;
    QVERIFY2(harness.allToAllWorks({root, good}, &problem), qPrintable(problem));
}

void TestFormationFaults::wrongKeyRefusedDiscovered()
{
    QFETCH(QString, transport);
    // Given a discovering root expecting 3, an advertiser with the wrong key, and two good ones
    WorldHarness harness(transport, WorldConfig::Mode::Discovered);
    WorldConfig bad = harness.config(1, 3);
    bad.worldKey = "not the key";
    bad.formationTimeout = std::chrono::seconds(4);
    World *intruder = harness.start(bad);
    World *root = harness.start(harness.config(0, 3));
    QSignalSpy refused(root, &World::peerRefused);
    QTRY_VERIFY_WITH_TIMEOUT(refused.size() >= 1, 20000);
    World *a = harness.start(harness.config(1, 3));
    World *b = harness.start(harness.config(2, 3));

    // Then the good three form, the intruder is refused with the reason and never forms
    QTRY_VERIFY_WITH_TIMEOUT(formedOrFailed({root, a, b}), 20000);
    for (World *w : {root, a, b})
        QVERIFY2(w->state() == World::State::Formed, qPrintable(w->errorString()));
    QCOMPARE(root->size(), 3);
    const Error reason = refused.at(0).at(1).value<Error>();
    QCOMPARE(reason.code, ErrorCode::WorldKeyMismatch);
    QVERIFY2(reason.message.contains(QLatin1String("the world keys differ")), qPrintable(reason.message));
    QTRY_COMPARE_WITH_TIMEOUT(intruder->state(), World::State::Failed, 10000);
    QCOMPARE(intruder->error().code, ErrorCode::WorldKeyMismatch);
    QVERIFY(!root->nodes().contains(NodeInfo{}));
    for (const NodeInfo &node : root->nodes())
        QVERIFY(node.nodeId != intruder->nodeId());
}

void TestFormationFaults::rootWithAnotherKeyFailsEverywhere_data()
{
    QTest::addColumn<QString>("transport");
    QTest::addColumn<bool>("discovered");
    for (const char *transport : {"local", "tcp"}) {
        QTest::addRow("%s-launched", transport) << QString::fromLatin1(transport) << false;
        QTest::addRow("%s-discovered", transport) << QString::fromLatin1(transport) << true;
    }
}

void TestFormationFaults::rootWithAnotherKeyFailsEverywhere()
{
    QFETCH(QString, transport);
    QFETCH(bool, discovered);
    // Given two nodes that share one key and a root that was given another
    WorldHarness harness(transport, discovered ? WorldConfig::Mode::Discovered : WorldConfig::Mode::Launched);
    const QByteArray rootKey = "the root's key";
    const QByteArray nodesKey = "the nodes' key";
    std::vector<World *> worlds;
    std::vector<std::unique_ptr<QSignalSpy>> refused;
    for (int index : {1, 2, 0}) {
        WorldConfig config = harness.config(index, 3);
        config.worldKey = index == 0 ? rootKey : nodesKey;
        // Refusals take milliseconds; the deadline is what ends the root's wait.
        config.formationTimeout = std::chrono::seconds(6);
        config.discoveryTimeout = std::chrono::seconds(3);
        worlds.push_back(harness.start(config));
        refused.push_back(std::make_unique<QSignalSpy>(worlds.back(), &World::peerRefused));
    }
    World *root = worlds.back();
    QTRY_VERIFY_WITH_TIMEOUT(formedOrFailed(worlds), 30000);

    // Then every node, the root too, fails saying the keys differ, with the typed code
    for (World *w : worlds) {
        QVERIFY2(w->state() == World::State::Failed, qPrintable(w->errorString()));
        QVERIFY2(w->error().code == ErrorCode::WorldKeyMismatch, qPrintable(w->error().toString()));
        QVERIFY2(w->errorString().contains(QLatin1String("the world keys differ")), qPrintable(w->errorString()));
    }
    // And the root reported each node as it refused it, with that code
    QCOMPARE(refused.back()->size(), 2);
    for (const QList<QVariant> &refusal : std::as_const(*refused.back()))
        QCOMPARE(refusal.at(1).value<Error>().code, ErrorCode::WorldKeyMismatch);
    // (a discovered node refuses the root that contacts it; a launched one
    // hears the root refuse it and fails at once)
    for (size_t i = 0; i + 1 < worlds.size(); ++i)
        QCOMPARE(refused.at(i)->size(), discovered ? 1 : 0);
    QVERIFY2(root->errorString().contains(QLatin1String("2 link(s) refused so")), qPrintable(root->errorString()));
    // And no message gives either key away
    for (World *w : worlds) {
        for (const QByteArray &key : {rootKey, nodesKey}) {
            QVERIFY(!w->errorString().contains(QString::fromLatin1(key)));
            QVERIFY(!w->errorString().contains(QString::fromLatin1(key.toHex())));
        }
    }
}

void TestFormationFaults::missingNodeNamedAtDeadline()
{
    QFETCH(QString, transport);
    // Given a 3-node world whose rank 2 never starts
    WorldHarness harness(transport, WorldConfig::Mode::Launched);
    WorldConfig c0 = harness.config(0, 3);
    WorldConfig c1 = harness.config(1, 3);
    c0.formationTimeout = c1.formationTimeout = std::chrono::milliseconds(1500);
    World *root = harness.start(c0);
    World *one = harness.start(c1);

    // Then formation fails by its deadline, naming rank 2, on every started node
    QTRY_VERIFY_WITH_TIMEOUT(formedOrFailed({root, one}), 10000);
    QCOMPARE(root->state(), World::State::Failed);
    QCOMPARE(root->error().code, ErrorCode::FormationTimeout);
    QVERIFY2(root->errorString().contains(QLatin1String("rank(s) 2 never joined")), qPrintable(root->errorString()));
    QCOMPARE(one->state(), World::State::Failed);
    QVERIFY2(one->errorString().contains(QLatin1String("2")), qPrintable(one->errorString()));
}

void TestFormationFaults::discoveredFormsWithMinimumSize()
{
    QFETCH(QString, transport);
    // Given a root that wants 3 nodes but accepts 2, and only one advertiser
    WorldHarness harness(transport, WorldConfig::Mode::Discovered);
    WorldConfig rootConfig = harness.config(0, 3);
    rootConfig.minimumSize = 2;
    rootConfig.discoveryTimeout = std::chrono::milliseconds(1500);
    World *root = harness.start(rootConfig);
    World *node = harness.start(harness.config(1, 3));
    QSignalSpy progress(root, &World::formationProgress);

    // Then the world forms with 2 once the discovery window is over
    QTRY_VERIFY_WITH_TIMEOUT(formedOrFailed({root, node}), 20000);
    QVERIFY2(root->state() == World::State::Formed, qPrintable(root->errorString()));
    QCOMPARE(root->size(), 2);
    QCOMPARE(node->rank(), 1);
    QVERIFY(!progress.isEmpty());

    // And a root that needs all 3 fails by its deadline, saying how many came
    WorldHarness strict(transport, WorldConfig::Mode::Discovered);
    WorldConfig strictConfig = strict.config(0, 3);
    strictConfig.formationTimeout = std::chrono::milliseconds(1500);
    World *lonely = strict.start(strictConfig);
    strict.start(strict.config(1, 3));
    QTRY_COMPARE_WITH_TIMEOUT(lonely->state(), World::State::Failed, 10000);
    QVERIFY2(lonely->errorString().contains(QLatin1String("only 2 of 3 nodes joined")),
             qPrintable(lonely->errorString()));
}

void TestFormationFaults::garbageLeavesNodesWorking()
{
    QFETCH(QString, transport);
    // Given a root that receives garbage, a half frame and an oversized header
    WorldHarness harness(transport, WorldConfig::Mode::Launched);
    const WorldConfig rootConfig = harness.config(0, 3);
    World *root = harness.start(rootConfig);
    auto garbage = rawConnect(rootConfig.rootAddress);
    auto half = rawConnect(rootConfig.rootAddress);
    auto huge = rawConnect(rootConfig.rootAddress);
    QVERIFY(garbage && half && huge);
    garbage->write(QByteArray("GET / HTTP/1.0\r\n\r\n") + QByteArray(5000, '\xff'));
    half->write(halfFrame());
    huge->write(hugeHeader());
    QTest::qWait(200);

    // When the real nodes start
    World *one = harness.start(harness.config(1, 3));
    World *two = harness.start(harness.config(2, 3));
    QTRY_VERIFY_WITH_TIMEOUT(formedOrFailed({root, one, two}), 20000);
    for (World *w : {root, one, two})
        QVERIFY2(w->state() == World::State::Formed, qPrintable(w->errorString()));

    // Then the world works, also after garbage hits a formed node's port
    auto late = rawConnect(one->nodes().at(1).address);
    QVERIFY(late);
    late->write(QByteArray(3000, '\x00'));
    late->write(halfFrame());
    QTest::qWait(200);
    QString problem;
    QVERIFY2(harness.allToAllWorks({root, one, two}, &problem), qPrintable(problem));
}

void TestFormationFaults::vanishedNodeIsLost()
{
    QFETCH(QString, transport);
    WorldHarness harness(transport, WorldConfig::Mode::Launched);
    std::vector<World *> worlds;
    for (int i = 0; i < 3; ++i)
        worlds.push_back(harness.start(harness.config(i, 3)));
    QTRY_VERIFY_WITH_TIMEOUT(formedOrFailed(worlds), 20000);
    QSignalSpy lost(worlds[0], &World::nodeLost);
    QSignalSpy left(worlds[0], &World::nodeLeft);

    // When rank 1 closes cleanly and rank 2 vanishes without a goodbye
    worlds[1]->close();
    QTRY_COMPARE_WITH_TIMEOUT(left.size(), 1, 10000);
    QCOMPARE(left.at(0).at(0).toInt(), 1);
    const int gone = worlds[2]->rank();
    harness.destroy(worlds[2]);

    // Then rank 0 reports rank 2 lost, with a reason
    QTRY_COMPARE_WITH_TIMEOUT(lost.size(), 1, 10000);
    QCOMPARE(lost.at(0).at(0).toInt(), gone);
}

QTEST_GUILESS_MAIN(TestFormationFaults)
#include "tst_formationfaults.moc"
