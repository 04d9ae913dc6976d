// Rejoining (docs/fault-tolerance.md#rebuild): a new node takes the rank of a
// member whose app ended; every survivor hears nodeRejoined, lists the new
// node, and frames flow both ways again with fresh streams. A replacement for
// a member that is still there is refused until its deadline, saying why;
// members gone before the replacement came are lost to it from the start;
// rank 0 is replaced through a survivor.
#include "worldharness.h"

#include <mmpi/world/world.h>

#include <QSignalSpy>
#include <QTest>

using namespace mmpi;
using namespace mmpi::test;
using namespace std::chrono_literals;

namespace {

constexpr int Patience = 20000;

WorldConfig quickLoss(WorldConfig config)
{
    // A node whose app ended is refused at once on local and tcp: the
    // survivors give it up without waiting out the grace period.
    config.heartbeatInterval = 200ms;
    config.heartbeatTimeout = 2s;
    return config;
}

std::vector<World *> formWorld(WorldHarness &harness, int size)
{
    std::vector<World *> worlds;
    for (int r = 0; r < size; ++r)
        worlds.push_back(harness.start(quickLoss(harness.config(r, size))));
    for (World *w : worlds)
        if (!w->waitForFormed())
            return {};
    return worlds;
}

Frame byteFrame(char c)
{
    return makeFrame(FrameKind::Data, ItemType::Byte, 1, QByteArray(1, c));
}

bool waitForLoss(const std::vector<QSignalSpy *> &spies, int rank)
{
    for (QSignalSpy *spy : spies) {
        const auto seen = [spy, rank] {
            for (const auto &args : std::as_const(*spy))
                if (args.at(0).toInt() == rank)
                    return true;
            return false;
        };
        if (!QTest::qWaitFor(seen, Patience))
            return false;
    }
    return true;
}

} // namespace

class TestRejoin : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void replacementTakesLostRank_data();
    void replacementTakesLostRank();
    void replacementOfLiveMemberIsRefused();
    void membersGoneBeforeAreLostToReplacement();
    void rootRejoinsThroughSurvivor_data();
    void rootRejoinsThroughSurvivor();
    void rejoinNeedsAMemberAddress();
};

void TestRejoin::replacementTakesLostRank_data()
{
    QTest::addColumn<QString>("transport");
    QTest::newRow("local") << QStringLiteral("local");
    QTest::newRow("tcp") << QStringLiteral("tcp");
}

void TestRejoin::replacementTakesLostRank()
{
    QFETCH(QString, transport);
    WorldHarness harness(transport, WorldConfig::Mode::Launched);
    auto worlds = formWorld(harness, 3);
    QCOMPARE(worlds.size(), size_t(3));
    const QString oldNode = worlds[0]->nodes().at(2).nodeId;
    QSignalSpy lost0(worlds[0], &World::nodeLost);
    QSignalSpy lost1(worlds[1], &World::nodeLost);
    QSignalSpy rejoined0(worlds[0], &World::nodeRejoined);
    QSignalSpy rejoined1(worlds[1], &World::nodeRejoined);
    harness.destroy(worlds[2]);
    QVERIFY(waitForLoss({&lost0, &lost1}, 2));

    WorldConfig replacement = quickLoss(harness.config(2, 3));
    replacement.rejoin = true;
    World *newcomer = harness.start(replacement);
    QVERIFY2(newcomer->waitForFormed(), qPrintable(newcomer->errorString()));
    QCOMPARE(newcomer->rank(), 2);
    QCOMPARE(newcomer->size(), 3);
    QVERIFY(QTest::qWaitFor([&] { return rejoined0.size() == 1 && rejoined1.size() == 1; }, Patience));
    QCOMPARE(rejoined0.at(0).at(0).toInt(), 2);
    for (World *survivor : {worlds[0], worlds[1]}) {
        QCOMPARE(survivor->nodes().at(2).nodeId, newcomer->nodeId());
        QVERIFY(survivor->nodes().at(2).nodeId != oldNode);
        const auto quality = survivor->linkQuality(2);
        QVERIFY(quality);
        QVERIFY(quality->status != World::NodeStatus::Lost);
    }

    // Fresh streams both ways, in every direction of the mesh, twice: the
    // second round also crosses acknowledgements of the first.
    worlds[2] = newcomer;
    for (int round = 0; round < 2; ++round) {
        QString problem;
        QVERIFY2(harness.allToAllWorks(worlds, &problem), qPrintable(problem));
    }
    QCOMPARE(newcomer->streamPosition(0)->sent, worlds[0]->streamPosition(2)->received);
    QCOMPARE(newcomer->streamPosition(1)->received, worlds[1]->streamPosition(2)->sent);
}

void TestRejoin::replacementOfLiveMemberIsRefused()
{
    WorldHarness harness(QStringLiteral("local"), WorldConfig::Mode::Launched);
    auto worlds = formWorld(harness, 3);
    QCOMPARE(worlds.size(), size_t(3));
    QSignalSpy rejoined(worlds[0], &World::nodeRejoined);
    WorldConfig impostor = harness.config(2, 3);
    impostor.rejoin = true;
    impostor.formationTimeout = 1500ms;
    World *newcomer = harness.start(impostor);
    QVERIFY(!newcomer->waitForFormed());
    QCOMPARE(newcomer->state(), World::State::Failed);
    QCOMPARE(newcomer->error().code, ErrorCode::FormationTimeout);
    QVERIFY2(newcomer->errorString().contains(QLatin1String("rank 2 is still a member")),
             qPrintable(newcomer->errorString()));
    QCOMPARE(rejoined.size(), 0);
    QString problem;
    QVERIFY2(harness.allToAllWorks(worlds, &problem), qPrintable(problem));
}

void TestRejoin::membersGoneBeforeAreLostToReplacement()
{
    WorldHarness harness(QStringLiteral("local"), WorldConfig::Mode::Launched);
    auto worlds = formWorld(harness, 4);
    QCOMPARE(worlds.size(), size_t(4));
    QSignalSpy lost0(worlds[0], &World::nodeLost);
    QSignalSpy lost1(worlds[1], &World::nodeLost);
    harness.destroy(worlds[3]);
    harness.destroy(worlds[2]);
    QVERIFY(waitForLoss({&lost0, &lost1}, 2));
    QVERIFY(waitForLoss({&lost0, &lost1}, 3));

    WorldConfig replacement = quickLoss(harness.config(3, 4));
    replacement.rejoin = true;
    auto newcomer = std::make_unique<World>();
    QSignalSpy lostToNewcomer(newcomer.get(), &World::nodeLost);
    newcomer->form(replacement);
    QVERIFY2(newcomer->waitForFormed(), qPrintable(newcomer->errorString()));
    QVERIFY(QTest::qWaitFor([&] { return lostToNewcomer.size() == 1; }, Patience));
    QCOMPARE(lostToNewcomer.at(0).at(0).toInt(), 2);
    QCOMPARE(lostToNewcomer.at(0).at(1).value<World::FailureClass>(), World::FailureClass::NodeTerm);
    QVERIFY(lostToNewcomer.at(0).at(2).value<Error>().message.contains(QLatin1String("already gone")));
    QCOMPARE(newcomer->linkQuality(2)->status, World::NodeStatus::Lost);
    // A send to the absent member fails (in its completion); the others flow.
    Error toAbsent{ErrorCode::NoError, {}};
    bool reported = false;
    QVERIFY(newcomer->sendFrame(2, byteFrame('x'), [&](const Error &e) {
        toAbsent = e;
        reported = true;
    }));
    QVERIFY(QTest::qWaitFor([&] { return reported; }, Patience));
    QCOMPARE(toAbsent.code, ErrorCode::LinkClosed);
    QSignalSpy at0(worlds[0], &World::frameReceived);
    QSignalSpy at3(newcomer.get(), &World::frameReceived);
    QVERIFY(newcomer->sendFrame(0, byteFrame('n')));
    for (World *w : {worlds[0], worlds[1]})
        QVERIFY(w->sendFrame(3, byteFrame(char('a' + w->rank()))));
    QVERIFY(QTest::qWaitFor([&] { return at3.size() == 2 && at0.size() == 1; }, Patience));
    QCOMPARE(at0.at(0).at(0).value<Frame>().payload, QByteArray("n"));
    newcomer->closeAndWait();
}

void TestRejoin::rootRejoinsThroughSurvivor_data()
{
    replacementTakesLostRank_data();
}

// Rank 0 has no root to join through: its replacement asks a survivor for
// the rank table, then links to the others like any replacement.
void TestRejoin::rootRejoinsThroughSurvivor()
{
    QFETCH(QString, transport);
    WorldHarness harness(transport, WorldConfig::Mode::Launched);
    auto worlds = formWorld(harness, 3);
    QCOMPARE(worlds.size(), size_t(3));
    QSignalSpy lost1(worlds[1], &World::nodeLost);
    QSignalSpy lost2(worlds[2], &World::nodeLost);
    QSignalSpy rejoined1(worlds[1], &World::nodeRejoined);
    QSignalSpy rejoined2(worlds[2], &World::nodeRejoined);
    harness.destroy(worlds[0]);
    QVERIFY(waitForLoss({&lost1, &lost2}, 0));

    WorldConfig replacement = quickLoss(harness.config(0, 3));
    replacement.rejoin = true;
    replacement.rootAddress = worlds[2]->nodes().at(2).address;
    World *newcomer = harness.start(replacement);
    QVERIFY2(newcomer->waitForFormed(), qPrintable(newcomer->errorString()));
    QCOMPARE(newcomer->rank(), 0);
    QCOMPARE(newcomer->size(), 3);
    QVERIFY(QTest::qWaitFor([&] { return rejoined1.size() == 1 && rejoined2.size() == 1; }, Patience));
    QCOMPARE(rejoined1.at(0).at(0).toInt(), 0);
    for (World *survivor : {worlds[1], worlds[2]})
        QCOMPARE(survivor->nodes().at(0).nodeId, newcomer->nodeId());
    worlds[0] = newcomer;
    for (int round = 0; round < 2; ++round) {
        QString problem;
        QVERIFY2(harness.allToAllWorks(worlds, &problem), qPrintable(problem));
    }
}

void TestRejoin::rejoinNeedsAMemberAddress()
{
    WorldHarness harness(QStringLiteral("local"), WorldConfig::Mode::Launched);
    WorldConfig root = harness.config(0, 3);
    root.rejoin = true;
    root.rootAddress.clear();
    const auto valid = root.validate();
    QVERIFY(!valid);
    QCOMPARE(valid.error().code, ErrorCode::BadConfiguration);
    QVERIFY2(valid.error().message.contains(QLatin1String("member to rejoin through")),
             qPrintable(valid.error().message));
}

QTEST_MAIN(TestRejoin)
#include "tst_rejoin.moc"
