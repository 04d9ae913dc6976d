// The formation state machine's rules (an internal class): the role a
// configuration gives, each role's way to Formed, the moves it refuses, and
// how an advertising node becomes a spare.
#include "formationstate.h"

#include <mmpi/world/worldconfig.h>

#include <QTest>

using namespace mmpi;
using namespace mmpi::detail;

using Role = FormationState::Role;
using Step = FormationState::Step;

namespace {

WorldConfig config(WorldConfig::Mode mode, int rank, bool rejoin = false)
{
    WorldConfig c;
    c.mode = mode;
    c.rank = rank;
    c.rejoin = rejoin;
    return c;
}

FormationState at(Role role, const QList<Step> &steps)
{
    FormationState state(role);
    for (Step step : steps) {
        if (!state.moveTo(step))
            qFatal("%s cannot move to %s", FormationState::name(role), FormationState::name(step));
    }
    return state;
}

} // namespace

class TestFormationState : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void roleComesFromTheConfig()
    {
        constexpr auto Launched = WorldConfig::Mode::Launched;
        constexpr auto Discovered = WorldConfig::Mode::Discovered;
        QCOMPARE(FormationState::roleFor(config(Launched, 0)), Role::LaunchedRoot);
        QCOMPARE(FormationState::roleFor(config(Launched, 3)), Role::LaunchedMember);
        QCOMPARE(FormationState::roleFor(config(Discovered, 0)), Role::DiscoveredRoot);
        QCOMPARE(FormationState::roleFor(config(Discovered, NoRank)), Role::DiscoveredMember);
        QCOMPARE(FormationState::roleFor(config(Launched, 2, true)), Role::Replacement);
        // A replacement of rank 0 joins through a survivor: it does not form the world.
        const FormationState rank0(FormationState::roleFor(config(Launched, 0, true)));
        QCOMPARE(rank0.role(), Role::Replacement);
        QVERIFY(!rank0.formsAsRoot());
        QVERIFY(rank0.rejoining());
    }

    void eachRoleWalksItsWayToFormed_data()
    {
        QTest::addColumn<Role>("role");
        QTest::addColumn<QList<Step>>("way");
        QTest::newRow("launched root") << Role::LaunchedRoot
                                       << QList<Step>{Step::AwaitingJoins, Step::AwaitingMeshReady};
        QTest::newRow("discovered root") << Role::DiscoveredRoot
                                         << QList<Step>{Step::Discovering, Step::AwaitingMeshReady};
        QTest::newRow("launched member") << Role::LaunchedMember
                                         << QList<Step>{Step::ContactingRoot, Step::AwaitingRankTable,
                                                        Step::LinkingMesh, Step::AwaitingStart};
        QTest::newRow("discovered member") << Role::DiscoveredMember
                                           << QList<Step>{Step::Advertising, Step::AwaitingRankTable,
                                                          Step::LinkingMesh, Step::AwaitingStart};
        QTest::newRow("replacement") << Role::Replacement
                                     << QList<Step>{Step::ContactingRoot, Step::AwaitingRankTable,
                                                    Step::LinkingSurvivors};
    }

    void eachRoleWalksItsWayToFormed()
    {
        QFETCH(Role, role);
        QFETCH(QList<Step>, way);
        FormationState state(role);
        QCOMPARE(state.worldState(), World::State::Idle);
        QVERIFY(state.moveTo(Step::OpeningTransport));
        for (Step step : way) {
            QCOMPARE(state.worldState(), World::State::Forming);
            QVERIFY2(state.moveTo(step), FormationState::name(step));
        }
        QVERIFY(state.moveTo(Step::Formed));
        QCOMPARE(state.worldState(), World::State::Formed);
        QVERIFY(state.moveTo(Step::Closing));
        QCOMPARE(state.worldState(), World::State::Closing);
        QVERIFY(state.moveTo(Step::Closed));
        QCOMPARE(state.worldState(), World::State::Closed);
        QCOMPARE(state.role(), role);
    }

    void neitherBackNorOntoAnotherRolesWay()
    {
        FormationState member = at(Role::LaunchedMember, {Step::OpeningTransport, Step::ContactingRoot,
                                                          Step::AwaitingRankTable, Step::LinkingMesh});
        QVERIFY(!member.moveTo(Step::AwaitingRankTable));
        QVERIFY(!member.moveTo(Step::LinkingSurvivors));
        QVERIFY(!member.moveTo(Step::AwaitingMeshReady));
        QVERIFY(!member.moveTo(Step::Advertising));
        QVERIFY(!member.moveTo(Step::Closing));
        QCOMPARE(member.step(), Step::LinkingMesh);
        QVERIFY(member.moveTo(Step::AwaitingStart));

        FormationState idle(Role::LaunchedRoot);
        QVERIFY(!idle.moveTo(Step::AwaitingJoins));
        QVERIFY(!idle.moveTo(Step::Formed));
        QCOMPARE(idle.step(), Step::Idle);
    }

    // The one way back: a replacement whose contact is lost before the rank
    // table came asks another member; no other role goes back.
    void onlyAReplacementGoesBackToItsContact()
    {
        FormationState replacement = at(Role::Replacement, {Step::OpeningTransport, Step::ContactingRoot,
                                                             Step::AwaitingRankTable});
        QVERIFY(replacement.moveTo(Step::ContactingRoot));
        QVERIFY(replacement.moveTo(Step::AwaitingRankTable));
        QVERIFY(replacement.moveTo(Step::LinkingSurvivors));
        QVERIFY(!replacement.moveTo(Step::ContactingRoot));
        FormationState member = at(Role::LaunchedMember, {Step::OpeningTransport, Step::ContactingRoot,
                                                          Step::AwaitingRankTable});
        QVERIFY(!member.moveTo(Step::ContactingRoot));
        FormationState spare(Role::DiscoveredMember);
        QVERIFY(spare.moveTo(Step::OpeningTransport) && spare.moveTo(Step::Advertising) && spare.becomeSpare());
        QVERIFY(spare.moveTo(Step::AwaitingRankTable));
        QVERIFY(!spare.moveTo(Step::ContactingRoot));
    }

    void noStepIsSkipped()
    {
        FormationState root = at(Role::LaunchedRoot, {Step::OpeningTransport, Step::AwaitingJoins});
        QVERIFY(!root.moveTo(Step::Formed));
        FormationState member = at(Role::LaunchedMember, {Step::OpeningTransport, Step::ContactingRoot});
        QVERIFY(!member.moveTo(Step::LinkingMesh));
        QVERIFY(!member.moveTo(Step::AwaitingStart));
        QCOMPARE(member.step(), Step::ContactingRoot);
    }

    void failsOnlyWhileForming()
    {
        FormationState idle(Role::LaunchedMember);
        QVERIFY(!idle.moveTo(Step::Failed));
        FormationState forming = at(Role::LaunchedMember, {Step::OpeningTransport, Step::ContactingRoot});
        QVERIFY(forming.moveTo(Step::Failed));
        QCOMPARE(forming.worldState(), World::State::Failed);
        QVERIFY(!forming.moveTo(Step::AwaitingRankTable));
        QVERIFY(!forming.moveTo(Step::Formed));
        QVERIFY(forming.moveTo(Step::Closed));

        FormationState formed = at(Role::LaunchedRoot, {Step::OpeningTransport, Step::AwaitingJoins,
                                                        Step::AwaitingMeshReady, Step::Formed});
        QVERIFY(!formed.moveTo(Step::Failed));
        QVERIFY(!formed.moveTo(Step::Closed)); // only by saying goodbye first
        QVERIFY(formed.moveTo(Step::Closing));
        QVERIFY(!formed.moveTo(Step::Failed));
    }

    void closedBeforeFormingStarts()
    {
        FormationState idle(Role::DiscoveredMember);
        QVERIFY(idle.moveTo(Step::Closed));
        QVERIFY(!idle.moveTo(Step::OpeningTransport));
    }

    void anAdvertisingMemberInvitedBecomesASpare()
    {
        FormationState joined = at(Role::DiscoveredMember, {Step::OpeningTransport, Step::Advertising,
                                                            Step::AwaitingRankTable});
        QVERIFY(!joined.becomeSpare());
        QCOMPARE(joined.role(), Role::DiscoveredMember);
        FormationState launched = at(Role::LaunchedMember, {Step::OpeningTransport, Step::ContactingRoot});
        QVERIFY(!launched.becomeSpare());

        FormationState spare = at(Role::DiscoveredMember, {Step::OpeningTransport, Step::Advertising});
        QVERIFY(spare.becomeSpare());
        QCOMPARE(spare.role(), Role::Spare);
        QVERIFY(spare.rejoining());
        QVERIFY(!spare.becomeSpare());
        QVERIFY(spare.moveTo(Step::AwaitingRankTable));
        QVERIFY(!spare.moveTo(Step::LinkingMesh));
        QVERIFY(spare.moveTo(Step::LinkingSurvivors));
        QVERIFY(spare.moveTo(Step::Formed));
    }

    void theRankTableComesAfterJoining()
    {
        FormationState member = at(Role::DiscoveredMember, {Step::OpeningTransport, Step::Advertising});
        QVERIFY(!member.hasRankTable());
        QVERIFY(member.moveTo(Step::AwaitingRankTable));
        QVERIFY(!member.hasRankTable());
        QVERIFY(member.moveTo(Step::LinkingMesh));
        QVERIFY(member.hasRankTable());
        QVERIFY(member.moveTo(Step::Failed));
        QVERIFY(!member.hasRankTable());
        // A root makes the table and is given none.
        QVERIFY(!at(Role::LaunchedRoot, {Step::OpeningTransport, Step::AwaitingJoins, Step::AwaitingMeshReady})
                     .hasRankTable());
    }
};

QTEST_GUILESS_MAIN(TestFormationState)
#include "tst_formationstate.moc"
