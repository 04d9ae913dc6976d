// REBUILD in real worlds of one process: after a member is lost the
// survivors keep its rank blank; when a new node rejoins in its place every
// member ends up in one new communicator of the same group (the old one
// revoked), collectives work across it, and CoordinatedCheckpoint::recover()
// hands the new node its rank's state from the partner copy so that every
// member is back at the same epoch with the state it had.
#include "coroutinetest.h"
#include "commworld.h"
#include "protectedworld.h"
#include "storedstate.h"
#include "patience.h"

#include <mmpi/ft/coordinatedcheckpoint.h>
#include <mmpi/ft/faulttolerance.h>
#include <mmpi/ft/partnerstore.h>

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace mmpi;
using mmpi::test::CommWorld;
using mmpi::test::Patience;

namespace {

struct Member
{
    std::unique_ptr<FaultTolerance> ft;
    std::unique_ptr<QSignalSpy> reconfigured;
    std::unique_ptr<QSignalSpy> rebuilt;
};

Member protect(const CommWorld &w, int rank)
{
    Member m;
    m.ft = std::make_unique<FaultTolerance>(w.world(rank));
    m.ft->setPolicy(World::FailureClass::NodeTerm, Policy::Rebuild);
    m.reconfigured = std::make_unique<QSignalSpy>(m.ft.get(), &FaultTolerance::worldReconfigured);
    m.rebuilt = std::make_unique<QSignalSpy>(m.ft.get(), &FaultTolerance::ranksRebuilt);
    (void)m.ft->protect(w[rank]);
    return m;
}

std::vector<Member> protectAll(const CommWorld &w)
{
    std::vector<Member> all;
    for (int r = 0; r < w.size(); ++r)
        all.push_back(protect(w, r));
    const bool ready = QTest::qWaitFor([&] {
        return std::all_of(all.begin(), all.end(), [](const Member &m) { return !m.ft->communicator().isNull(); });
    }, Patience);
    return ready ? std::move(all) : std::vector<Member>{};
}

// Kill `victim`, wait until every survivor agreed on REBUILD, then start its
// replacement and wait until every member is in the rebuilt communicator.
bool killAndReplace(CommWorld &w, std::vector<Member> &all, int victim)
{
    std::vector<qsizetype> reconfigured, rebuilt;
    for (const Member &m : all) {
        reconfigured.push_back(m.reconfigured ? m.reconfigured->size() : 0);
        rebuilt.push_back(m.rebuilt ? m.rebuilt->size() : 0);
    }
    w.kill(victim);
    all[size_t(victim)] = {};
    for (int r = 0; r < w.size(); ++r) {
        if (r == victim)
            continue;
        const auto &m = all[size_t(r)];
        if (!QTest::qWaitFor([&] { return m.reconfigured->size() == reconfigured[r] + 1; }, Patience))
            return false;
        if (m.ft->awaitedRanks() != QList<int>{victim})
            return false;
    }
    if (!w.replace(victim))
        return false;
    all[size_t(victim)] = protect(w, victim);
    rebuilt[size_t(victim)] = 0;
    return QTest::qWaitFor([&] {
        for (size_t r = 0; r < all.size(); ++r)
            if (all[r].rebuilt->size() != rebuilt[r] + 1)
                return false;
        return true;
    }, Patience);
}

QList<qint64> sumOfRanks(const std::vector<Member> &all)
{
    QList<Communicator> comms;
    for (const Member &m : all)
        comms << m.ft->communicator();
    return test::sumOfRanks(comms, Patience);
}

} // namespace

class TestRebuild : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void newNodeTakesTheLostRank()
    {
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        auto all = protectAll(w);
        QVERIFY(!all.empty());
        const quint32 before = all[0].ft->communicator().id();

        // While the rank waits for its new node it is blank: refused at once.
        w.kill(2);
        QTRY_COMPARE_WITH_TIMEOUT(all[0].reconfigured->size(), 1, Patience);
        QCOMPARE(all[0].reconfigured->at(0).at(0).value<Policy>(), Policy::Rebuild);
        QCOMPARE(all[0].ft->blankRanks(), QList<int>{2});
        const auto toBlank = all[0].ft->communicator().recv<qint32>(2, 5).wait();
        QVERIFY(!toBlank);
        QVERIFY2(toBlank.error().message.contains(QLatin1String("rank 2")), qPrintable(toBlank.error().message));

        all[2] = {};
        QVERIFY(w.replace(2));
        all[2] = protect(w, 2);
        for (const Member &m : all) {
            QTRY_COMPARE_WITH_TIMEOUT(m.rebuilt->size(), 1, Patience);
            QCOMPARE(m.rebuilt->at(0).at(0).value<QList<int>>(), QList<int>{2});
            QCOMPARE(m.ft->communicator().size(), 4);
            QCOMPARE(m.ft->blankRanks(), QList<int>{});
            QCOMPARE(m.ft->communicator().id(), all[0].ft->communicator().id());
        }
        QVERIFY(all[0].ft->communicator().id() != before);
        QCOMPARE(all[2].ft->communicator().rank(), 2);
        // Collectives span the new node: 1 + 2 + 3 + 4.
        QCOMPARE(sumOfRanks(all), (QList<qint64>{10, 10, 10, 10}));
        // The communicator from before is revoked on the survivors.
        const auto old = w[0].send(1, 3, qint32(1)).wait();
        QVERIFY(!old);
        QCOMPARE(old.error().code, ErrorCode::Revoked);
        QVERIFY2(old.error().message.contains(QLatin1String("rebuilt")), qPrintable(old.error().message));

        // The rebuilt communicator is protected too: the same rank lost again
        // is awaited again, and a second new node takes it.
        QVERIFY(killAndReplace(w, all, 2));
        QCOMPARE(sumOfRanks(all), (QList<qint64>{10, 10, 10, 10}));
    }

    // Issue 44: two ranks lost before either is replaced. Nobody switches
    // until both new nodes are in and linked to each other; then one
    // ranksRebuilt(2, 3) everywhere, and collectives span both.
    void twoLostRanksAreRebuiltTogether()
    {
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        auto all = protectAll(w);
        QVERIFY(!all.empty());
        w.kill(2);
        w.kill(3);
        all[2] = {};
        all[3] = {};
        for (int r : {0, 1})
            QTRY_COMPARE_WITH_TIMEOUT(all[r].ft->awaitedRanks(), (QList<int>{2, 3}), Patience);
        QVERIFY(w.replace(2));
        all[2] = protect(w, 2);
        // One new node is not the rebuilt world: the survivors still wait.
        QTest::qWait(200);
        QCOMPARE(all[0].rebuilt->size(), 0);
        QVERIFY(w.replace(3));
        all[3] = protect(w, 3);
        for (const Member &m : all) {
            QTRY_COMPARE_WITH_TIMEOUT(m.rebuilt->size(), 1, Patience);
            QCOMPARE(m.rebuilt->at(0).at(0).value<QList<int>>(), (QList<int>{2, 3}));
            QCOMPARE(m.ft->communicator().id(), all[0].ft->communicator().id());
        }
        QCOMPARE(sumOfRanks(all), (QList<qint64>{10, 10, 10, 10}));
    }

    // reconfigure() after a REBUILD that is done: every member gets
    // ranksRebuilt() with no ranks and a communicator with a new id, which
    // works: the way to run a recovery again that failed on some member.
    void reconfigureAfterRebuildGivesEveryMemberANewCommunicator()
    {
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        auto all = protectAll(w);
        QVERIFY(!all.empty());
        QVERIFY(killAndReplace(w, all, 1));
        const quint32 before = all[0].ft->communicator().id();

        all[2].ft->reconfigure();

        for (const Member &m : all) {
            QTRY_COMPARE_WITH_TIMEOUT(m.rebuilt->size(), 2, Patience);
            QCOMPARE(m.rebuilt->at(1).at(0).value<QList<int>>(), QList<int>{});
            QCOMPARE(m.ft->communicator().id(), all[0].ft->communicator().id());
        }
        QVERIFY(all[0].ft->communicator().id() != before);
        QCOMPARE(sumOfRanks(all), (QList<qint64>{10, 10, 10, 10}));
    }

    void recoverHandsTheNewNodeItsState_data()
    {
        QTest::addColumn<int>("victim");
        QTest::newRow("rank 2") << 2;
        // The root has no root to rejoin through: its replacement asks a survivor.
        QTest::newRow("rank 0") << 0;
    }

    void recoverHandsTheNewNodeItsState()
    {
        QFETCH(int, victim);
        const int partner = (victim + 1) % 3;
        CommWorld w(QStringLiteral("local"), 3);
        QVERIFY(w.formed());
        QTemporaryDir dir;
        std::vector<std::unique_ptr<test::StoredState>> nodes;
        std::vector<std::unique_ptr<PartnerStore>> partners;
        for (int r = 0; r < 3; ++r) {
            nodes.push_back(std::make_unique<test::StoredState>(dir.filePath(QStringLiteral("device%1").arg(r))));
            nodes[r]->state = QByteArray("state of rank ") + QByteArray::number(r) + " at epoch 1";
        }
        auto all = protectAll(w);
        QVERIFY(!all.empty());
        for (int r = 0; r < 3; ++r)
            partners.push_back(std::make_unique<PartnerStore>(w[r],
                                                              &nodes[r]->store));
        // Each rank's checkpoint goes to its partner (the next rank).
        QSignalSpy keptForVictim(partners[size_t(partner)].get(), &PartnerStore::copyStored);
        std::vector<QCoro::Task<CoordinatedCheckpoint::Outcome>> taking;
        for (int r = 0; r < 3; ++r)
            taking.push_back(CoordinatedCheckpoint::take(w[r], &nodes[r]->store));
        for (auto &task : taking)
            QCOMPARE(mmpi::test::finish(task).error.code, ErrorCode::NoError);
        QTRY_VERIFY_WITH_TIMEOUT(std::any_of(keptForVictim.cbegin(), keptForVictim.cend(),
                                             [&](const QList<QVariant> &args) { return args.at(0).toInt() == victim; }),
                                 Patience);
        for (int r = 0; r < 3; ++r)
            nodes[r]->state = "moved on since";

        // The victim's device dies; a new device (an empty store) takes its rank.
        partners[size_t(victim)].reset();
        w.kill(victim);
        all[size_t(victim)] = {};
        for (int r = 0; r < 3; ++r)
            if (r != victim)
                QTRY_COMPARE_WITH_TIMEOUT(all[r].reconfigured->size(), 1, Patience);
        QVERIFY(w.replace(victim));
        all[size_t(victim)] = protect(w, victim);
        nodes[size_t(victim)] = std::make_unique<test::StoredState>(dir.filePath(QStringLiteral("new-device")));
        for (const Member &m : all)
            QTRY_COMPARE_WITH_TIMEOUT(m.rebuilt->size(), 1, Patience);

        std::vector<QCoro::Task<CoordinatedCheckpoint::Outcome>> recovering;
        for (int r = 0; r < 3; ++r)
            recovering.push_back(CoordinatedCheckpoint::recover(all[r].ft->communicator(), &nodes[r]->store));
        for (int r = 0; r < 3; ++r) {
            const auto outcome = mmpi::test::finish(recovering[r]);
            QVERIFY2(!outcome.error.isError(), qPrintable(outcome.error.message));
            QCOMPARE(outcome.epoch, quint64(1));
            QCOMPARE(nodes[r]->state, QByteArray("state of rank ") + QByteArray::number(r) + " at epoch 1");
        }
        QCOMPARE(nodes[size_t(victim)]->store.epochs(), QList<quint64>{1});
    }

    // With setInvitesSpares the survivors find a spare themselves: a node
    // that advertises the world takes the lost rank, with no address given.
    void spareFoundByDiscoveryIsRebuilt()
    {
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        auto all = protectAll(w);
        QVERIFY(!all.empty());
        for (const Member &m : all)
            m.ft->setInvitesSpares(true);
        w.kill(1);
        all[1] = {};
        for (int r : {0, 2, 3})
            QTRY_COMPARE_WITH_TIMEOUT(all[r].reconfigured->size(), 1, Patience);
        QVERIFY(w.takeSpare(1));
        QVERIFY(w.world(1)->isReplacement());
        all[1] = protect(w, 1);
        for (const Member &m : all) {
            QTRY_COMPARE_WITH_TIMEOUT(m.rebuilt->size(), 1, Patience);
            QCOMPARE(m.ft->blankRanks(), QList<int>{});
        }
        QCOMPARE(sumOfRanks(all), (QList<qint64>{10, 10, 10, 10}));
    }

    void recoverWithoutAnyCopyFailsOnEveryMember()
    {
        CommWorld w(QStringLiteral("local"), 3);
        QVERIFY(w.formed());
        QTemporaryDir dir;
        std::vector<std::unique_ptr<test::StoredState>> nodes;
        for (int r = 0; r < 3; ++r)
            nodes.push_back(std::make_unique<test::StoredState>(dir.filePath(QStringLiteral("device%1").arg(r))));
        auto all = protectAll(w);
        QVERIFY(!all.empty());
        // Checkpoints, but no partner copies: nobody can hand rank 1 its state.
        std::vector<QCoro::Task<CoordinatedCheckpoint::Outcome>> taking;
        for (int r = 0; r < 3; ++r)
            taking.push_back(CoordinatedCheckpoint::take(w[r], &nodes[r]->store));
        for (auto &task : taking)
            QCOMPARE(mmpi::test::finish(task).error.code, ErrorCode::NoError);
        QVERIFY(killAndReplace(w, all, 1));
        nodes[1] = std::make_unique<test::StoredState>(dir.filePath(QStringLiteral("new-device")));
        std::vector<QCoro::Task<CoordinatedCheckpoint::Outcome>> recovering;
        for (int r = 0; r < 3; ++r)
            recovering.push_back(CoordinatedCheckpoint::recover(all[r].ft->communicator(), &nodes[r]->store));
        for (auto &task : recovering) {
            const auto outcome = mmpi::test::finish(task);
            QCOMPARE(outcome.error.code, ErrorCode::NoCheckpoint);
            QVERIFY2(outcome.error.message.contains(QLatin1String("rank 1")), qPrintable(outcome.error.message));
        }
    }
};

QTEST_GUILESS_MAIN(TestRebuild)
#include "tst_rebuild.moc"
