// Rejoining (docs/guide/fault-tolerance.md#rebuild): a new node takes the rank of a
// member whose app ended; every survivor hears nodeRejoined, lists the new
// node, and frames flow both ways again with fresh streams. A replacement for
// a member that is still there is refused until its deadline, saying why;
// members gone before the replacement came are lost to it from the start;
// rank 0 is replaced through a survivor; a spare found by discovery takes a
// lost rank when a survivor invites it.
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
    void spareTakesLostRank_data();
    void spareTakesLostRank();
    void spareNotFoundSaysWhy();
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

// A spare (a node that advertises the world and is in none) takes a lost
// rank when a survivor invites it, then links to the others like any
// replacement; no address or rank is given to it beforehand.
void TestRejoin::spareTakesLostRank_data()
{
    QTest::addColumn<QString>("transport");
    QTest::addColumn<int>("victim");
    QTest::newRow("local, rank 1") << QStringLiteral("local") << 1;
    QTest::newRow("local, rank 0") << QStringLiteral("local") << 0;
    QTest::newRow("tcp, rank 1") << QStringLiteral("tcp") << 1;
}

void TestRejoin::spareTakesLostRank()
{
    QFETCH(QString, transport);
    QFETCH(int, victim);
    WorldHarness harness(transport, WorldConfig::Mode::Launched);
    auto worlds = formWorld(harness, 3);
    QCOMPARE(worlds.size(), size_t(3));
    const int inviter = victim == 0 ? 1 : 0;
    const int other = 3 - victim - inviter;
    QSignalSpy lostInviter(worlds[inviter], &World::nodeLost);
    QSignalSpy lostOther(worlds[other], &World::nodeLost);
    QSignalSpy rejoinedOther(worlds[other], &World::nodeRejoined);
    QSignalSpy notFound(worlds[inviter], &World::spareNotFound);
    harness.destroy(worlds[victim]);
    QVERIFY(waitForLoss({&lostInviter, &lostOther}, victim));

    WorldConfig spare = quickLoss(harness.config(1, 3));
    spare.mode = WorldConfig::Mode::Discovered;
    spare.rank = NoRank;
    spare.rootAddress.clear();
    World *newcomer = harness.start(spare);
    QVERIFY(QTest::qWaitFor([&] { return newcomer->state() == World::State::Forming; }, Patience));
    worlds[inviter]->inviteSpare(victim);
    QVERIFY2(newcomer->waitForFormed(), qPrintable(newcomer->errorString()));
    QCOMPARE(newcomer->rank(), victim);
    QCOMPARE(newcomer->size(), 3);
    QVERIFY(newcomer->isReplacement());
    QVERIFY(!worlds[inviter]->isReplacement());
    QVERIFY(QTest::qWaitFor([&] { return rejoinedOther.size() == 1; }, Patience));
    QCOMPARE(worlds[other]->nodes().at(victim).nodeId, newcomer->nodeId());
    QCOMPARE(notFound.size(), 0);
    worlds[victim] = newcomer;
    for (int round = 0; round < 2; ++round) {
        QString problem;
        QVERIFY2(harness.allToAllWorks(worlds, &problem), qPrintable(problem));
    }
}

// No spare: the search ends at the discovery timeout, saying so; a rank
// that is still a member is refused at once.
void TestRejoin::spareNotFoundSaysWhy()
{
    WorldHarness harness(QStringLiteral("local"), WorldConfig::Mode::Launched);
    std::vector<World *> worlds;
    for (int r = 0; r < 3; ++r) {
        WorldConfig config = quickLoss(harness.config(r, 3));
        config.discoveryTimeout = 500ms;
        worlds.push_back(harness.start(config));
    }
    for (World *w : worlds)
        QVERIFY(w->waitForFormed());
    QSignalSpy notFound(worlds[0], &World::spareNotFound);
    worlds[0]->inviteSpare(2);
    QVERIFY(QTest::qWaitFor([&] { return notFound.size() == 1; }, Patience));
    QCOMPARE(notFound.at(0).at(0).toInt(), 2);
    QVERIFY2(notFound.at(0).at(1).value<Error>().message.contains(QLatin1String("still a member")),
             qPrintable(notFound.at(0).at(1).value<Error>().message));

    QSignalSpy lost(worlds[0], &World::nodeLost);
    harness.destroy(worlds[2]);
    QVERIFY(waitForLoss({&lost}, 2));
    worlds[0]->inviteSpare(2);
    QVERIFY(QTest::qWaitFor([&] { return notFound.size() == 2; }, Patience));
    const Error reason = notFound.at(1).at(1).value<Error>();
    QCOMPARE(reason.code, ErrorCode::DiscoveryFailed);
    QVERIFY2(reason.message.contains(QLatin1String("no spare")), qPrintable(reason.message));
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
