// Joins a person confirms (WorldConfig::confirmJoins): the root asks about
// every joining node once its link is sealed, with the verification code the
// joiner shows too; a confirmed node joins, a rejected one fails with
// JoinRejected and is not counted, an unanswered one fails with
// JoinNotConfirmed, and an answer to no open request is UnknownJoinRequest.
#include "worldharness.h"

#include <mmpi/world/world.h>

#include <QSignalSpy>
#include <QTest>

using namespace mmpi;
using namespace mmpi::test;
using namespace std::chrono_literals;

namespace {

constexpr int Patience = 20000;

WorldConfig confirmingRoot(const WorldHarness &harness, int size)
{
    WorldConfig config = harness.config(0, size);
    config.confirmJoins = true;
    return config;
}

// One request's arguments, as joinRequested gave them.
struct Request
{
    int id = 0;
    QString nodeId;
    QString code;
};

Request requestAt(const QSignalSpy &spy, qsizetype index)
{
    const QList<QVariant> args = spy.at(index);
    return {args.at(0).toInt(), args.at(1).toString(), args.at(3).toString()};
}

bool isFormed(const std::vector<World *> &worlds)
{
    return std::all_of(worlds.begin(), worlds.end(), [](World *w) { return w->state() == World::State::Formed; });
}

} // namespace

class TestConfirmJoins : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void confirmedNodesFormWithOneCode_data();
    void confirmedNodesFormWithOneCode();
    void rejectedNodeFailsAndIsNotCounted();
    void rejectedNodeLeavesADiscoveredWorldToTheOthers();
    void unansweredRequestTimesOut();
    void formationDeadlineEndsAnOpenRequest();
    void answerToNoRequestIsAnError();
};

void TestConfirmJoins::confirmedNodesFormWithOneCode_data()
{
    QTest::addColumn<QString>("transport");
    QTest::addColumn<bool>("discovered");
    QTest::newRow("local-launched") << QStringLiteral("local") << false;
    QTest::newRow("tcp-launched") << QStringLiteral("tcp") << false;
    QTest::newRow("local-discovered") << QStringLiteral("local") << true;
}

void TestConfirmJoins::confirmedNodesFormWithOneCode()
{
    QFETCH(QString, transport);
    QFETCH(bool, discovered);
    // Given a root that confirms joins and two nodes that join it
    WorldHarness harness(transport, discovered ? WorldConfig::Mode::Discovered : WorldConfig::Mode::Launched);
    std::vector<World *> worlds{harness.start(confirmingRoot(harness, 3))};
    QSignalSpy requested(worlds[0], &World::joinRequested);
    QSignalSpy ended(worlds[0], &World::joinRequestEnded);
    for (int i = 1; i < 3; ++i)
        worlds.push_back(harness.start(harness.config(i, 3)));

    // When both requests are open at once, nobody is admitted before a person answers
    QTRY_COMPARE_WITH_TIMEOUT(requested.size(), 2, Patience);
    QTest::qWait(300);
    QVERIFY(std::all_of(worlds.begin(), worlds.end(), [](World *w) { return w->state() == World::State::Forming; }));
    QCOMPARE(ended.size(), 0);
    // Each joiner shows the code the root asks about, while it waits
    QHash<QString, QString> codes; // node id -> code
    for (int i = 0; i < 2; ++i) {
        const Request request = requestAt(requested, i);
        QVERIFY2(request.code.size() == 7 && request.code.at(3) == u' ', qPrintable(request.code));
        codes.insert(request.nodeId, request.code);
    }
    for (int i = 1; i < 3; ++i) {
        QTRY_VERIFY_WITH_TIMEOUT(worlds[i]->verificationCode(0).hasValue(), Patience);
        QCOMPARE(worlds[i]->verificationCode(0).value(), codes.value(worlds[i]->nodeId()));
    }
    // And a person confirms both
    for (int i = 0; i < 2; ++i)
        QVERIFY(worlds[0]->confirmJoin(requestAt(requested, i).id));

    // Then the world forms, and both ends of every root link show one code
    QTRY_VERIFY_WITH_TIMEOUT(isFormed(worlds), Patience);
    QCOMPARE(ended.size(), 2);
    QString problem;
    QVERIFY2(harness.allToAllWorks(worlds, &problem), qPrintable(problem));
    for (int rank = 1; rank < 3; ++rank) {
        World *node = *std::find_if(worlds.begin(), worlds.end(), [rank](World *w) { return w->rank() == rank; });
        QCOMPARE(worlds[0]->verificationCode(rank).value(), node->verificationCode(0).value());
        QCOMPARE(worlds[0]->verificationCode(rank).value(), codes.value(node->nodeId()));
    }
    // An answered request is closed.
    QCOMPARE(worlds[0]->confirmJoin(requestAt(requested, 0).id).error().code, ErrorCode::UnknownJoinRequest);
}

void TestConfirmJoins::rejectedNodeFailsAndIsNotCounted()
{
    // Given a launched root of two that confirms joins, and rank 1 asking
    WorldHarness harness(QStringLiteral("local"), WorldConfig::Mode::Launched);
    World *root = harness.start(confirmingRoot(harness, 2));
    QSignalSpy requested(root, &World::joinRequested);
    QSignalSpy ended(root, &World::joinRequestEnded);
    QSignalSpy progress(root, &World::formationProgress);
    World *intruder = harness.start(harness.config(1, 2));
    QTRY_COMPARE_WITH_TIMEOUT(requested.size(), 1, Patience);

    // When a person rejects it
    QVERIFY(root->rejectJoin(requestAt(requested, 0).id));

    // Then it fails, told why, and the root goes on waiting for rank 1
    QTRY_COMPARE_WITH_TIMEOUT(intruder->state(), World::State::Failed, Patience);
    QCOMPARE(intruder->error().code, ErrorCode::JoinRejected);
    QVERIFY2(intruder->error().message.contains(QLatin1String("rejected")), qPrintable(intruder->error().message));
    QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, Patience);
    QCOMPARE(ended.at(0).at(0).toInt(), requestAt(requested, 0).id);
    QCOMPARE(root->state(), World::State::Forming);
    for (const QList<QVariant> &joined : progress)
        QCOMPARE(joined.at(0).toInt(), 1);
    // A node that is confirmed takes the rank
    World *member = harness.start(harness.config(1, 2));
    QTRY_COMPARE_WITH_TIMEOUT(requested.size(), 2, Patience);
    QVERIFY(requestAt(requested, 1).nodeId == member->nodeId());
    QVERIFY(root->confirmJoin(requestAt(requested, 1).id));
    QTRY_VERIFY_WITH_TIMEOUT(isFormed({root, member}), Patience);
    QCOMPARE(root->nodes().at(1).nodeId, member->nodeId());
}

// A discovered root of three that may form with two: it rejects one node
// while the other's request is open, confirms the other, and forms with it.
void TestConfirmJoins::rejectedNodeLeavesADiscoveredWorldToTheOthers()
{
    WorldHarness harness(QStringLiteral("local"), WorldConfig::Mode::Discovered);
    WorldConfig rootConfig = confirmingRoot(harness, 3);
    rootConfig.minimumSize = 2;
    rootConfig.discoveryTimeout = 2s;
    World *root = harness.start(rootConfig);
    QSignalSpy requested(root, &World::joinRequested);
    World *first = harness.start(harness.config(1, 3));
    World *second = harness.start(harness.config(2, 3));
    QTRY_COMPARE_WITH_TIMEOUT(requested.size(), 2, Patience);
    const bool firstAskedFirst = requestAt(requested, 0).nodeId == first->nodeId();
    World *rejected = firstAskedFirst ? first : second;
    World *confirmed = firstAskedFirst ? second : first;

    QVERIFY(root->rejectJoin(requestAt(requested, 0).id));
    QTRY_COMPARE_WITH_TIMEOUT(rejected->state(), World::State::Failed, Patience);
    QCOMPARE(rejected->error().code, ErrorCode::JoinRejected);
    QCOMPARE(confirmed->state(), World::State::Forming);
    QVERIFY(root->confirmJoin(requestAt(requested, 1).id));

    QTRY_VERIFY_WITH_TIMEOUT(isFormed({root, confirmed}), Patience);
    QCOMPARE(root->size(), 2);
    QCOMPARE(requested.size(), 2); // the rejected node was not asked about again
}

void TestConfirmJoins::unansweredRequestTimesOut()
{
    // Given a root that waits half a second for each answer
    WorldHarness harness(QStringLiteral("local"), WorldConfig::Mode::Launched);
    WorldConfig rootConfig = confirmingRoot(harness, 2);
    rootConfig.confirmTimeout = 500ms;
    World *root = harness.start(rootConfig);
    QSignalSpy requested(root, &World::joinRequested);
    QSignalSpy ended(root, &World::joinRequestEnded);
    World *node = harness.start(harness.config(1, 2));

    // When nobody answers
    QTRY_COMPARE_WITH_TIMEOUT(requested.size(), 1, Patience);

    // Then the joiner fails with JoinNotConfirmed, the request ends, and a late answer finds none
    QTRY_COMPARE_WITH_TIMEOUT(node->state(), World::State::Failed, Patience);
    QCOMPARE(node->error().code, ErrorCode::JoinNotConfirmed);
    QVERIFY2(node->error().message.contains(QLatin1String("500 ms")), qPrintable(node->error().message));
    QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, Patience);
    const auto late = root->confirmJoin(requestAt(requested, 0).id);
    QVERIFY(!late);
    QCOMPARE(late.error().code, ErrorCode::UnknownJoinRequest);
    QCOMPARE(root->state(), World::State::Forming);
}

// The formation deadline comes before the person answers: the root fails
// saying that a request is still open, and the joiner hears the root's reason.
void TestConfirmJoins::formationDeadlineEndsAnOpenRequest()
{
    WorldHarness harness(QStringLiteral("local"), WorldConfig::Mode::Launched);
    WorldConfig rootConfig = confirmingRoot(harness, 2);
    rootConfig.formationTimeout = 1500ms;
    World *root = harness.start(rootConfig);
    QSignalSpy requested(root, &World::joinRequested);
    QSignalSpy ended(root, &World::joinRequestEnded);
    World *node = harness.start(harness.config(1, 2));
    QTRY_COMPARE_WITH_TIMEOUT(requested.size(), 1, Patience);

    QTRY_COMPARE_WITH_TIMEOUT(root->state(), World::State::Failed, Patience);
    QCOMPARE(root->error().code, ErrorCode::FormationTimeout);
    QVERIFY2(root->error().message.contains(QLatin1String("1 join request(s) still unanswered (node ")
                                            + node->nodeId()),
             qPrintable(root->error().message));
    QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, Patience);
    QTRY_COMPARE_WITH_TIMEOUT(node->state(), World::State::Failed, Patience);
    QVERIFY2(node->error().message.contains(QLatin1String("the root abandoned formation")),
             qPrintable(node->error().message));
}

void TestConfirmJoins::answerToNoRequestIsAnError()
{
    World idle;
    QCOMPARE(idle.confirmJoin(1).error().code, ErrorCode::UnknownJoinRequest);
    WorldHarness harness(QStringLiteral("local"), WorldConfig::Mode::Launched);
    World *root = harness.start(confirmingRoot(harness, 2));
    const auto confirmed = root->confirmJoin(7);
    QVERIFY(!confirmed);
    QCOMPARE(confirmed.error().code, ErrorCode::UnknownJoinRequest);
    QVERIFY2(confirmed.error().message.contains(QLatin1String("7")), qPrintable(confirmed.error().message));
    QCOMPARE(root->rejectJoin(-1).error().code, ErrorCode::UnknownJoinRequest);
}

QTEST_GUILESS_MAIN(TestConfirmJoins)
#include "tst_confirmjoins.moc"
