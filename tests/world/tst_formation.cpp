// Formation of worlds of 1, 2, 3 and 7 nodes over local and tcp, launched and
// discovered; each formed world must carry frames between every pair of ranks
// and close cleanly. A discovered tcp node finds its root by a typed host
// name alone, one without the world key is told that the address carried
// none, and one whose typed name resolves nowhere fails at once.
#include "worldharness.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>

using namespace mmpi;
using namespace mmpi::test;

class TestFormation : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void formAndTalk_data();
    void formAndTalk();
    void typedHostNameFindsTheRoot();
    void typedAddressCarriesNoKey();
    void typedNameThatResolvesNowhereEndsFormation();
};

void TestFormation::formAndTalk_data()
{
    QTest::addColumn<QString>("transport");
    QTest::addColumn<bool>("discovered");
    QTest::addColumn<int>("size");
    for (const char *transport : {"local", "tcp"}) {
        for (auto mode : {WorldConfig::Mode::Launched, WorldConfig::Mode::Discovered}) {
            for (int size : {1, 2, 3, 7}) {
                const char *modeName = mode == WorldConfig::Mode::Launched ? "launched" : "discovered";
                QTest::addRow("%s-%s-%d", transport, modeName, size)
                    << QString::fromLatin1(transport) << (mode == WorldConfig::Mode::Discovered) << size;
            }
        }
    }
}

void TestFormation::formAndTalk()
{
    QFETCH(QString, transport);
    QFETCH(bool, discovered);
    const auto mode = discovered ? WorldConfig::Mode::Discovered : WorldConfig::Mode::Launched;
    QFETCH(int, size);

    // Given a world of `size` nodes in this process
    WorldHarness harness(transport, mode);
    std::vector<World *> worlds;
    std::vector<std::unique_ptr<QSignalSpy>> lost;
    QElapsedTimer clock;
    clock.start();
    for (int i = 0; i < size; ++i) {
        worlds.push_back(harness.start(harness.config(i, size)));
        lost.push_back(std::make_unique<QSignalSpy>(worlds.back(), &World::nodeLost));
    }
    QSignalSpy discovering(worlds.front(), &World::discoveryProgress);

    // When it forms
    const auto allFormed = [&] {
        return std::all_of(worlds.begin(), worlds.end(),
                           [](World *w) { return w->state() == World::State::Formed; });
    };
    QTRY_VERIFY_WITH_TIMEOUT(allFormed() || std::any_of(worlds.begin(), worlds.end(), [](World *w) {
                                 return w->state() == World::State::Failed;
                             }), 30000);
    for (World *w : worlds)
        QVERIFY2(w->state() == World::State::Formed, qPrintable(w->errorString()));
    qInfo("formation of %d nodes over %s took %lld ms", size, qPrintable(transport), clock.elapsed());

    // Then ranks are 0..size-1, everybody agrees on the table, frames flow
    QSet<int> ranks;
    for (World *w : worlds) {
        QCOMPARE(w->size(), size);
        ranks.insert(w->rank());
        QCOMPARE(w->nodes(), worlds.front()->nodes());
        QCOMPARE(w->nodes().at(w->rank()).nodeId, w->nodeId());
    }
    QCOMPARE(ranks.size(), size);
    QVERIFY(ranks.contains(0));
    QCOMPARE(worlds.front()->rank(), 0);
    if (mode == WorldConfig::Mode::Discovered) {
        const auto nodes = worlds.front()->nodes();
        for (int r = 2; r < size; ++r)
            QVERIFY2(nodes.at(r - 1).nodeId < nodes.at(r).nodeId, "ranks follow node ids");
    }
    // The root said how its search went (the local transport counts the
    // adverts in its rendezvous directory; it has no time limit to tell).
    if (mode == WorldConfig::Mode::Discovered && transport == QLatin1String("local") && size > 1) {
        QVERIFY(!discovering.isEmpty());
        int mostFound = 0;
        for (const auto &progress : std::as_const(discovering)) {
            QVERIFY(progress.at(0).toInt() >= progress.at(1).toInt());
            QVERIFY(progress.at(1).toInt() <= size - 1);
            QCOMPARE(progress.at(2).toInt(), -1);
            mostFound = std::max(mostFound, progress.at(1).toInt());
        }
        QVERIFY(mostFound >= 1);
    }
    QString problem;
    QVERIFY2(harness.allToAllWorks(worlds, &problem), qPrintable(problem));

    // And closing says goodbye rather than losing anyone
    for (World *w : worlds)
        w->close();
    QTRY_VERIFY_WITH_TIMEOUT(std::all_of(worlds.begin(), worlds.end(),
                                         [](World *w) { return w->state() == World::State::Closed; }),
                             10000);
    for (auto &spy : lost)
        QCOMPARE(spy->size(), 0);
}

namespace {

// A root and a node of a discovered tcp world on loopback that search by
// typed address alone: the node's adverts go only where `typed` says.
std::pair<WorldConfig, WorldConfig> typedAddressPair(const WorldHarness &harness, const QString &typed)
{
    WorldConfig root = harness.config(0, 2);
    WorldConfig node = harness.config(1, 2);
    for (WorldConfig *c : {&root, &node})
        c->discoverySteps = {WorldConfig::DiscoveryStep::Address};
    node.rootAddresses = {typed};
    return {root, node};
}

} // namespace

void TestFormation::typedHostNameFindsTheRoot()
{
    // Given a node that knows the root only by a host name, without a port
    // (the root's beacon port is this node's beaconPort option) ...
    WorldHarness harness(QStringLiteral("tcp"), WorldConfig::Mode::Discovered);
    const auto [rootConfig, nodeConfig] = typedAddressPair(harness, QStringLiteral("localhost"));
    World *root = harness.start(rootConfig);
    World node;
    QSignalSpy started(&node, &World::discoveryStepStarted);
    QSignalSpy gaveUp(&node, &World::discoveryStepGaveUp);
    node.form(nodeConfig);
    // ... the name is looked up and the world forms through it.
    QTRY_VERIFY_WITH_TIMEOUT(node.state() != World::State::Forming && root->state() != World::State::Forming, 20000);
    QVERIFY2(node.state() == World::State::Formed, qPrintable(node.errorString()));
    QVERIFY2(root->state() == World::State::Formed, qPrintable(root->errorString()));
    QCOMPARE(node.size(), 2);
    QCOMPARE(started.size(), 1);
    QCOMPARE(started.first().first().value<World::DiscoveryStep>(), WorldConfig::DiscoveryStep::Address);
    QVERIFY(gaveUp.isEmpty());
    node.close();
    root->close();
    QTRY_VERIFY_WITH_TIMEOUT(node.state() == World::State::Closed && root->state() == World::State::Closed, 10000);
}

void TestFormation::typedAddressCarriesNoKey()
{
    // Given a closed world and a node that was given its root's address but not its key ...
    WorldHarness harness(QStringLiteral("tcp"), WorldConfig::Mode::Discovered);
    auto [rootConfig, nodeConfig] = typedAddressPair(harness, QStringLiteral("127.0.0.1"));
    nodeConfig.worldKey.clear();
    for (WorldConfig *c : {&rootConfig, &nodeConfig})
        c->formationTimeout = std::chrono::milliseconds(3000);
    World *root = harness.start(rootConfig);
    World node;
    node.form(nodeConfig);
    // ... the root is reached, refuses it, and the node says what it lacked.
    QTRY_COMPARE_WITH_TIMEOUT(node.state(), World::State::Failed, 10000);
    QCOMPARE(node.error().code, ErrorCode::WorldKeyMismatch);
    QVERIFY2(node.error().message.contains(QStringLiteral("this node holds no world key")), qPrintable(node.errorString()));
    QVERIFY2(node.error().message.contains(QStringLiteral("a typed root address carries none")),
             qPrintable(node.errorString()));
    QTRY_COMPARE_WITH_TIMEOUT(root->state(), World::State::Failed, 10000);
    QCOMPARE(root->error().code, ErrorCode::WorldKeyMismatch);
    QVERIFY2(!root->error().message.contains(QStringLiteral("no world key")), qPrintable(root->errorString()));
}

void TestFormation::typedNameThatResolvesNowhereEndsFormation()
{
    // Given a node whose only way to its root is a typed name that cannot
    // resolve (RFC 6761 reserves .invalid), and a formation timeout far off ...
    WorldHarness harness(QStringLiteral("tcp"), WorldConfig::Mode::Discovered);
    WorldConfig nodeConfig = typedAddressPair(harness, QStringLiteral("no-such-root.invalid")).second;
    nodeConfig.formationTimeout = std::chrono::minutes(10);
    World node;
    QSignalSpy gaveUp(&node, &World::discoveryStepGaveUp);
    QElapsedTimer clock;
    clock.start();
    node.form(nodeConfig);
    // ... formation ends once the lookup fails (a resolver's own retries
    // take seconds at most), saying which name failed, rather than waiting
    // ten minutes for a root it can never reach.
    QTRY_COMPARE_WITH_TIMEOUT(node.state(), World::State::Failed, 60000);
    QVERIFY(clock.elapsed() < 60000);
    QCOMPARE(node.error().code, ErrorCode::DiscoveryFailed);
    QVERIFY2(node.errorString().contains(QStringLiteral("no-such-root.invalid")), qPrintable(node.errorString()));
    QCOMPARE(gaveUp.size(), 1);
    QCOMPARE(gaveUp.first().first().value<World::DiscoveryStep>(), WorldConfig::DiscoveryStep::Address);
}

QTEST_GUILESS_MAIN(TestFormation)
#include "tst_formation.moc"
