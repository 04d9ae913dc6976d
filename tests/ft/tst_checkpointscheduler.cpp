// CheckpointScheduler: a store on the planner's schedule. On a hand-moved
// clock, with a state whose write costs known clock seconds, checkpoints come
// exactly when the plan says and not before; the world's failures (a lost
// node, a node back from out of range) raise the rates and shorten the
// interval; a coordinated schedule follows rank 0's clock whatever the other
// members' say; a failed write is reported and the previous checkpoint stays.
#include "coroutinetest.h"
#include "commworld.h"
#include "worldharness.h"
#include "patience.h"
#include "why.h"

#include <mmpi/ft/checkpointscheduler.h>

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include <sys/fsuid.h>
#include <unistd.h>

using namespace mmpi;
using mmpi::test::why;
using namespace std::chrono_literals;
using mmpi::test::CommWorld;
using mmpi::test::Patience;

namespace {

// One node's state, its store, and its clock, which the test moves by hand;
// encoding the state costs `writeSeconds` of it, so k0 is known exactly.
struct Node
{
    Node(const QString &directory, double writeSeconds)
    {
        store.setDirectory(directory);
        store.setState(
            [this, writeSeconds] {
                time += writeSeconds;
                return state;
            },
            [this](const QByteArray &bytes) {
                state = bytes;
                return success();
            });
    }
    Node(const Node &) = delete; // the store's functions hold `this`

    // A clock at `rate` times this node's time, `offset` ahead.
    CheckpointScheduler::Clock clock(double rate = 1, double offset = 0)
    {
        return [this, rate, offset] { return offset + rate * time; };
    }

    double time = 0;
    QByteArray state;
    CheckpointStore store;
};

// Costs whose k0 a Node with writeSeconds = k0 keeps measuring.
CheckpointCosts costsWithWrite(double k0) { return {k0, 1, 5, 20}; }

// A NORMAL rate of `rate` per second that no run time of this test moves.
void fixRate(CheckpointScheduler &scheduler, double rate)
{
    QVERIFY(scheduler.planner().setFailurePrior({rate, 0, 0}, 1e12));
}

// Runs a coordinated checkpointIfDue() on every member at once.
std::vector<CheckpointScheduler::Outcome> together(const CommWorld &w,
                                                   std::vector<std::unique_ptr<CheckpointScheduler>> &schedulers)
{
    std::vector<QCoro::Task<CheckpointScheduler::Outcome>> tasks;
    for (int r = 0; r < w.size(); ++r)
        tasks.push_back(schedulers[size_t(r)]->checkpointIfDue(w[r]));
    std::vector<CheckpointScheduler::Outcome> outcomes;
    for (auto &task : tasks)
        outcomes.push_back(mmpi::test::finish(task));
    return outcomes;
}

// While alive, `directory` cannot be written to, even by root: mode 0555,
// and a root test process checks permissions as nobody (setfsuid drops
// the capability that bypasses them, on this thread, until set back).
class ReadOnly
{
public:
    explicit ReadOnly(const QString &directory) : m_directory(directory)
    {
        QFile::setPermissions(directory, QFile::ReadOwner | QFile::ExeOwner | QFile::ReadGroup | QFile::ExeGroup
                                             | QFile::ReadOther | QFile::ExeOther);
        if (::geteuid() == 0)
            m_oldFsuid = ::setfsuid(65534);
    }
    ~ReadOnly()
    {
        if (m_oldFsuid >= 0)
            ::setfsuid(uid_t(m_oldFsuid));
        QFile::setPermissions(m_directory, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    }

private:
    QString m_directory;
    int m_oldFsuid = -1;
};

} // namespace

class TestCheckpointScheduler : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void checkpointsComeWhenDueAndNotBefore()
    {
        QTemporaryDir dir;
        Node node(dir.path(), 2);
        CheckpointScheduler scheduler(node.store, costsWithWrite(2), 3600);
        scheduler.setClock(node.clock());
        const double before = scheduler.plan().interval; // the default prior's
        fixRate(scheduler, 0.001);
        QSignalSpy due(&scheduler, &CheckpointScheduler::checkpointDue);
        QSignalSpy taken(&scheduler, &CheckpointScheduler::checkpointTaken);
        QSignalSpy changed(&scheduler, &CheckpointScheduler::planChanged);

        // t* = sqrt(2·k0/alpha) = 63.2 s: with a call every 10 s of
        // computation, the 7th call of each round (70 s) is the first due.
        const double interval = std::sqrt(2 * 2 / 0.001);
        QList<int> writtenAt;
        for (int call = 1; call <= 21; ++call) {
            node.time += 10;
            const double left = scheduler.nextCheckpointIn();
            const auto result = scheduler.checkpointIfDue();
            QVERIFY2(result, qPrintable(why(result)));
            if (result->has_value()) {
                writtenAt << call;
                QCOMPARE(**result, quint64(writtenAt.size()));
                QCOMPARE(left, 0.0);
            } else {
                QVERIFY2(left > 0, qPrintable(QString::number(left)));
            }
            if (call == 3) {
                // For a progress display: 30 s done, 33.2 s to go, and the
                // computation since the call counts at once.
                QVERIFY(qAbs(scheduler.sinceLastCheckpoint() - 30) < 1e-9);
                QVERIFY(qAbs(scheduler.nextCheckpointIn() - (interval - 30)) < 1e-6);
                node.time += 5;
                QVERIFY(qAbs(scheduler.nextCheckpointIn() - (interval - 35)) < 1e-6);
                node.time -= 5;
            }
        }
        QCOMPARE(writtenAt, (QList<int>{7, 14, 21}));
        QCOMPARE(node.store.epochs(), (QList<quint64>{2, 3}));
        QCOMPARE(due.size(), 3);
        QCOMPARE(taken.size(), 3);
        QCOMPARE(taken.at(2).at(0).toULongLong(), 3u);
        QCOMPARE(taken.at(2).at(1).toDouble(), 2.0); // the write, on the node's clock
        // The plan changed once, when the first call took the new prior in;
        // k0 measured as guessed moves nothing.
        QCOMPARE(changed.size(), 1);
        const auto plan = changed.at(0).at(0).value<CheckpointPlanner::Plan>();
        QVERIFY(before > 2 * interval);
        QVERIFY(qAbs(plan.interval - interval) < 1e-6);
        QVERIFY(qAbs(scheduler.plan().interval - interval) < 1e-6);
        // Run time is the computation only: 21 × 10 s, not the 6 s of writes.
        QCOMPARE(scheduler.planner().exposure(), 210.0);
        QCOMPARE(scheduler.planner().costs().k0, 2.0);

        // A restore takes the computation back to a checkpoint: the whole
        // interval is ahead again, and its time is k1.
        node.time += 40;
        QVERIFY(qAbs(scheduler.nextCheckpointIn() - (interval - 40)) < 1e-6);
        QVERIFY(node.store.restore());
        QCOMPARE(scheduler.sinceLastCheckpoint(), 0.0);
        QVERIFY(qAbs(scheduler.nextCheckpointIn() - interval) < 1e-6);
        QVERIFY(scheduler.planner().costs().k1 != 1.0); // measured, no longer the guess
    }

    void checkpointDueBetweenCalls()
    {
        // The real clock: the signal comes from a timer once the plan's
        // interval has passed since the last call, never before.
        QTemporaryDir dir;
        Node node(dir.path(), 0);
        CheckpointScheduler scheduler(node.store, costsWithWrite(0.05), 3600);
        fixRate(scheduler, 5); // t* about 0.14 s
        double leftAtSignal = -1;
        connect(&scheduler, &CheckpointScheduler::checkpointDue, this,
                [&] { leftAtSignal = scheduler.nextCheckpointIn(); });
        QVERIFY(scheduler.checkpointIfDue()); // written or not, a timer is set
        QSignalSpy due(&scheduler, &CheckpointScheduler::checkpointDue);
        QVERIFY(due.wait(Patience));
        QCOMPARE(leftAtSignal, 0.0);
        const auto written = scheduler.checkpointIfDue();
        QVERIFY(written && written->has_value());
    }

    void badPlanIsAClearError()
    {
        QTemporaryDir dir;
        Node node(dir.path(), 0);
        CheckpointScheduler scheduler(node.store, costsWithWrite(1), 0); // no run time
        const auto result = scheduler.checkpointIfDue();
        QVERIFY(!result);
        QCOMPARE(result.error().code, ErrorCode::BadConfiguration);
        QVERIFY2(result.error().message.contains(QStringLiteral("the run time T is 0")), qPrintable(result.error().message));
        QVERIFY(node.store.epochs().isEmpty());
        const auto outcome = mmpi::test::finish(scheduler.checkpointIfDue(Communicator{}));
        QCOMPARE(outcome.error.code, ErrorCode::NotFormed);
    }

    void lostNodeRaisesItsRateAndShortensTheInterval()
    {
        CommWorld w(QStringLiteral("local"), 3);
        QVERIFY(w.formed());
        QTemporaryDir dir;
        Node node(dir.path(), 2);
        CheckpointScheduler scheduler(node.store, costsWithWrite(2), 3600);
        scheduler.setClock(node.clock());
        scheduler.setWorld(w.world(0));
        // 0.36 failures of each class in an hour's worth of prior.
        QVERIFY(scheduler.planner().setFailurePrior({1e-4, 1e-4, 1e-4}, 3600));
        QVERIFY(scheduler.checkpointIfDue()); // takes the prior in
        const double before = scheduler.plan().interval;
        QVERIFY(qAbs(before - std::sqrt(2 * 2 / 3e-4)) < 1e-6);
        QSignalSpy changed(&scheduler, &CheckpointScheduler::planChanged);

        w.kill(1);
        QTRY_COMPARE_WITH_TIMEOUT(scheduler.planner().failures(World::FailureClass::NodeTerm), 1, Patience);
        // One episode, counted once by the class it ended with.
        QCOMPARE(scheduler.planner().failures(World::FailureClass::Normal), 0);
        QCOMPARE(scheduler.planner().failures(World::FailureClass::Range), 0);
        QVERIFY(qAbs(scheduler.planner().rates().nodeTerm - 1.36 / 3600) < 1e-12);
        const double after = std::sqrt(2 * 2 / (2.08 / 3600));
        QVERIFY2(qAbs(scheduler.plan().interval - after) < 1e-6, qPrintable(QString::number(scheduler.plan().interval)));
        QVERIFY(after < 0.8 * before);
        QCOMPARE(changed.size(), 1);
        QVERIFY(qAbs(changed.at(0).at(0).value<CheckpointPlanner::Plan>().interval - after) < 1e-6);
    }

    void nodeBackInRangeCountsAndFeedsK2()
    {
        // Rank 1 is out of range from 1.5 s (the world formed long before)
        // for 1.2 s and comes back within the grace period: one RANGE
        // failure, its relinking time k2.
        test::WorldHarness harness(QStringLiteral("sim"), WorldConfig::Mode::Launched);
        harness.addTransportOptions({{QStringLiteral("link"), QStringLiteral("ideal")}});
        QTemporaryDir dir;
        Node node(dir.filePath(QStringLiteral("counting")), 0);
        Node other(dir.filePath(QStringLiteral("resumed")), 0);
        CheckpointScheduler counting(node.store, {1, 1, 1000, 20}, 3600);
        CheckpointScheduler notCounting(other.store, {1, 1, 1000, 20}, 3600);
        notCounting.setCountResumedFailures(false);
        std::vector<World *> worlds;
        for (int i = 0; i < 2; ++i) {
            WorldConfig config = harness.config(i, 2);
            config.heartbeatInterval = 100ms;
            config.heartbeatTimeout = 1000ms;
            config.reconnectGracePeriod = 10s;
            config.transportOptions.insert(QStringLiteral("rank"), i);
            config.transportOptions.insert(QStringLiteral("faults"),
                                           QStringList{QStringLiteral("rank 1 out-of-range at 1500ms for 1200ms")});
            worlds.push_back(harness.start(config));
            if (i == 1) { // before anything can happen to it
                counting.setWorld(worlds.back());
                notCounting.setWorld(worlds.back());
            }
        }
        QSignalSpy returned(worlds[1], &World::nodeReturned);
        QSignalSpy lost(worlds[1], &World::nodeLost);
        QVERIFY(returned.wait(Patience));
        QCOMPARE(lost.size(), 0);
        QCOMPARE(worlds[1]->state(), World::State::Formed);

        QTRY_COMPARE_WITH_TIMEOUT(counting.planner().failures(World::FailureClass::Range), 1, Patience);
        QCOMPARE(counting.planner().failures(World::FailureClass::Normal), 0);
        QCOMPARE(counting.planner().failures(World::FailureClass::NodeTerm), 0);
        const double k2 = counting.planner().costs().k2;
        QVERIFY2(k2 > 0 && k2 < 20, qPrintable(QString::number(k2))); // measured, not the guess of 1000 s
        // Resumed failures left out: k2 still learnt, no rate raised.
        QCOMPARE(notCounting.planner().failures(World::FailureClass::Range), 0);
        QTRY_VERIFY_WITH_TIMEOUT(qAbs(notCounting.planner().costs().k2 - k2) < 0.1, Patience);
        QVERIFY(counting.planner().rates().range > notCounting.planner().rates().range);
        QVERIFY(counting.plan().interval < notCounting.plan().interval);
    }

    void coordinatedScheduleFollowsRankZero()
    {
        CommWorld w(QStringLiteral("local"), 3);
        QVERIFY(w.formed());
        QTemporaryDir dir;
        // The members' clocks disagree: rank 1's runs 1.5 times as fast,
        // rank 2's at 0.7, and each starts somewhere else.
        const double rates[] = {1.0, 1.5, 0.7};
        std::vector<std::unique_ptr<Node>> nodes;
        std::vector<std::unique_ptr<CheckpointScheduler>> schedulers;
        for (int r = 0; r < 3; ++r) {
            nodes.push_back(std::make_unique<Node>(dir.filePath(QStringLiteral("rank%1").arg(r)), 1));
            schedulers.push_back(std::make_unique<CheckpointScheduler>(nodes[r]->store, costsWithWrite(rates[r]), 3600));
            schedulers[r]->setClock(nodes[r]->clock(rates[r], 1000 * r));
            fixRate(*schedulers[r], 0.001);
        }
        // Rank 0: t* = sqrt(2·1/0.001) = 44.7 s, due at every 5th call of 10 s.
        QList<int> dueAt;
        bool someoneElseThoughtDue = false;
        for (int call = 1; call <= 15; ++call) {
            for (int r = 0; r < 3; ++r) {
                nodes[r]->time += 10;
                nodes[r]->state = QByteArray::number(r) + " at call " + QByteArray::number(call);
            }
            const bool rankZeroDue = schedulers[0]->nextCheckpointIn() == 0;
            for (int r = 1; r < 3; ++r)
                someoneElseThoughtDue |= !rankZeroDue && schedulers[r]->nextCheckpointIn() == 0;
            const auto outcomes = together(w, schedulers);
            for (int r = 0; r < 3; ++r) {
                QVERIFY2(!outcomes[r].error.isError(), qPrintable(outcomes[r].error.message));
                QCOMPARE(outcomes[r].due, outcomes[0].due);
                QCOMPARE(outcomes[r].epoch, outcomes[0].epoch);
            }
            QCOMPARE(outcomes[0].due, rankZeroDue);
            if (outcomes[0].due) {
                dueAt << call;
                QCOMPARE(outcomes[0].epoch, quint64(dueAt.size()));
            }
        }
        QCOMPARE(dueAt, (QList<int>{5, 10, 15}));
        // Left alone, the other members would have checkpointed elsewhere.
        QVERIFY(someoneElseThoughtDue);
        for (int r = 0; r < 3; ++r) {
            QCOMPARE(nodes[r]->store.epochs(), (QList<quint64>{2, 3}));
            // k0 of a coordinated checkpoint is the whole collective, on the
            // member's own clock (the write advanced it by 1 s of its time).
            QCOMPARE(schedulers[r]->planner().costs().k0, rates[r]);
            nodes[r]->state.clear();
            QCOMPARE(nodes[r]->store.restore()->epoch, 3u);
            QCOMPARE(nodes[r]->state, QByteArray::number(r) + " at call 15");
        }
    }

    void coordinatedBadPlanOnRankZeroFailsEveryMember()
    {
        CommWorld w(QStringLiteral("local"), 3);
        QVERIFY(w.formed());
        QTemporaryDir dir;
        std::vector<std::unique_ptr<Node>> nodes;
        std::vector<std::unique_ptr<CheckpointScheduler>> schedulers;
        for (int r = 0; r < 3; ++r) {
            nodes.push_back(std::make_unique<Node>(dir.filePath(QStringLiteral("rank%1").arg(r)), 1));
            // Rank 0 was given a negative k0; the others' plans are fine.
            schedulers.push_back(
                std::make_unique<CheckpointScheduler>(nodes[r]->store, costsWithWrite(r == 0 ? -1 : 1), 3600));
        }
        for (const auto &o : together(w, schedulers)) {
            QCOMPARE(o.error.code, ErrorCode::BadConfiguration);
            QVERIFY2(o.error.message.startsWith(QStringLiteral("rank 0's checkpoint plan: k0")), qPrintable(o.error.message));
            QVERIFY(!o.due);
        }
        for (auto &n : nodes)
            QVERIFY(n->store.epochs().isEmpty());
    }

    void failedWriteIsReportedAndThePreviousStays()
    {
        QTemporaryDir dir;
        // Anyone may pass through to the store's directory (0755).
        QFile::setPermissions(dir.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner | QFile::ReadGroup
                                              | QFile::ExeGroup | QFile::ReadOther | QFile::ExeOther);
        const QString storeDir = dir.filePath(QStringLiteral("node"));
        QVERIFY(QDir().mkpath(storeDir));
        Node node(storeDir, 2);
        CheckpointScheduler scheduler(node.store, costsWithWrite(2), 3600);
        scheduler.setClock(node.clock());
        fixRate(scheduler, 0.001); // t* = 63.2 s
        node.state = "first";
        node.time += 70;
        const auto first = scheduler.checkpointIfDue();
        QVERIFY(first && first->has_value() && **first == 1);
        QSignalSpy failed(&scheduler, &CheckpointScheduler::checkpointFailed);
        QSignalSpy taken(&scheduler, &CheckpointScheduler::checkpointTaken);

        node.state = "second";
        node.time += 70;
        {
            ReadOnly readOnly(storeDir);
            QFile probe(storeDir + QStringLiteral("/probe"));
            QVERIFY2(!probe.open(QIODevice::WriteOnly), "the directory is still writable");
            for (int attempt = 0; attempt < 2; ++attempt) {
                // Still due after a failure: every call tries again.
                const auto result = scheduler.checkpointIfDue();
                QVERIFY(!result);
                QCOMPARE(result.error().code, ErrorCode::CheckpointFailed);
                QVERIFY2(result.error().message.contains(QStringLiteral("Permission denied")),
                         qPrintable(result.error().message));
                QCOMPARE(scheduler.nextCheckpointIn(), 0.0);
            }
        }
        QCOMPARE(failed.size(), 2);
        QCOMPARE(failed.at(0).at(0).value<Error>().code, ErrorCode::CheckpointFailed);
        QCOMPARE(taken.size(), 0);
        // The previous checkpoint is whole and alone.
        QCOMPARE(node.store.epochs(), QList<quint64>{1});
        QCOMPARE(*node.store.read(1), QByteArray("first"));
        QCOMPARE(QDir(storeDir).entryList(QDir::Files).size(), 1);
        // Writable again: the next call writes the due checkpoint.
        const auto second = scheduler.checkpointIfDue();
        QVERIFY(second && second->has_value() && **second == 2);
        QCOMPARE(taken.size(), 1);
        // The failed attempts' time was no computation: 70 + 70 s.
        QCOMPARE(scheduler.planner().exposure(), 140.0);
    }
};

QTEST_GUILESS_MAIN(TestCheckpointScheduler)
#include "tst_checkpointscheduler.moc"
