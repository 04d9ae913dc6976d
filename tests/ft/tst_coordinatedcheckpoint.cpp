// Coordinated checkpoints in one process: every member writes the same
// epoch and restores the same one; a message still on its way is waited for
// before the cut; one nobody took, or a member whose store fails, fails the
// checkpoint on every member with that member's rank; a member whose newest
// checkpoint is corrupt brings everyone back to the epoch before.
#include "coroutinetest.h"
#include "coordinatedrun.h"
#include "storedstate.h"
#include "patience.h"

#include <mmpi/ft/coordinatedcheckpoint.h>

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace mmpi;
using mmpi::test::CommWorld;
using mmpi::test::Patience;

namespace {

using Node = mmpi::test::StoredState;

// A store per rank in `dir`.
std::vector<std::unique_ptr<Node>> nodesIn(const QTemporaryDir &dir, int size)
{
    std::vector<std::unique_ptr<Node>> nodes;
    for (int r = 0; r < size; ++r)
        nodes.push_back(std::make_unique<Node>(dir.filePath(QStringLiteral("rank%1").arg(r))));
    return nodes;
}

} // namespace

class TestCoordinatedCheckpoint : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void everyMemberWritesAndRestoresTheSameEpoch()
    {
        CommWorld w(QStringLiteral("local"), 3);
        QVERIFY(w.formed());
        QTemporaryDir dir;
        auto nodes = nodesIn(dir, 3);
        // Rank 2 has an older checkpoint of its own already: the epoch is
        // above the newest anyone has.
        nodes[2]->state = "old";
        QCOMPARE(*nodes[2]->store.checkpoint(4), 4u);
        for (int step : {1, 2}) {
            for (int r = 0; r < 3; ++r)
                nodes[r]->state = QByteArray::number(r) + ": step " + QByteArray::number(step);
            const auto outcomes = together(w, [&](int r) { return CoordinatedCheckpoint::take(w[r], &nodes[r]->store); });
            for (const auto &o : outcomes) {
                QVERIFY2(!o.error.isError(), qPrintable(o.error.message));
                QCOMPARE(o.epoch, quint64(4 + step));
            }
        }
        for (auto &n : nodes)
            n->state.clear();
        const auto restored = together(w, [&](int r) { return CoordinatedCheckpoint::restore(w[r], &nodes[r]->store); });
        for (int r = 0; r < 3; ++r) {
            QVERIFY2(!restored[r].error.isError(), qPrintable(restored[r].error.message));
            QCOMPARE(restored[r].epoch, 6u);
            QCOMPARE(nodes[r]->state, QByteArray::number(r) + ": step 2");
        }
    }

    void messageOnItsWayIsWaitedFor()
    {
        // 150 ms each way: the message is still travelling when the
        // checkpoint starts.
        CommWorld w(QStringLiteral("local"), 2, [](WorldConfig &config) {
            config.transport = QStringLiteral("sim");
            config.rootAddress.replace(QStringLiteral("local://"), QStringLiteral("sim://"));
            config.transportOptions.insert(QStringLiteral("link"), QStringLiteral("wifi"));
            config.transportOptions.insert(QStringLiteral("latencyMs"), 150);
        });
        QVERIFY(w.formed());
        QTemporaryDir dir;
        auto nodes = nodesIn(dir, 2);
        const Request incoming = w[1].irecv(0, 7);
        QVERIFY(w[0].isend(1, 7, QByteArray("late")).wait());
        QVERIFY(!incoming.isFinished());
        auto first = CoordinatedCheckpoint::take(w[0], &nodes[0]->store);
        auto second = CoordinatedCheckpoint::take(w[1], &nodes[1]->store);
        const auto a = mmpi::test::finish(first);
        QVERIFY(incoming.isFinished()); // it arrived before rank 0's cut was done
        const auto b = mmpi::test::finish(second);
        QVERIFY2(!a.error.isError() && !b.error.isError(), qPrintable(a.error.message + b.error.message));
        QCOMPARE(a.epoch, b.epoch);
    }

    void messageNobodyTookFailsEveryMember()
    {
        CommWorld w(QStringLiteral("local"), 3);
        QVERIFY(w.formed());
        QTemporaryDir dir;
        auto nodes = nodesIn(dir, 3);
        for (int i = 0; i < 3; ++i)
            QVERIFY(w[0].send(1, 9, qint32(i)).wait());
        auto outcomes = together(w, [&](int r) { return CoordinatedCheckpoint::take(w[r], &nodes[r]->store); });
        for (const auto &o : outcomes) {
            QCOMPARE(o.error.code, ErrorCode::CheckpointFailed);
            QVERIFY2(o.error.message.startsWith(QStringLiteral("the cut failed on rank 1: 3 message(s) arrived")),
                     qPrintable(o.error.message));
        }
        QVERIFY(nodes[0]->store.epochs().isEmpty());
        // Taken, the next one goes through.
        for (int i = 0; i < 3; ++i)
            QVERIFY(w[1].recv<qint32>(0, 9).wait());
        outcomes = together(w, [&](int r) { return CoordinatedCheckpoint::take(w[r], &nodes[r]->store); });
        for (const auto &o : outcomes)
            QVERIFY2(!o.error.isError(), qPrintable(o.error.message));
    }

    void storeFailingOnOneMemberFailsEveryMember()
    {
        CommWorld w(QStringLiteral("local"), 3);
        QVERIFY(w.formed());
        QTemporaryDir dir;
        auto nodes = nodesIn(dir, 3);
        QFile blocker(dir.filePath(QStringLiteral("blocker")));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        nodes[1]->store.setDirectory(blocker.fileName() + QStringLiteral("/rank1"));
        const auto outcomes = together(w, [&](int r) { return CoordinatedCheckpoint::take(w[r], &nodes[r]->store); });
        for (const auto &o : outcomes) {
            QCOMPARE(o.error.code, ErrorCode::CheckpointFailed);
            QVERIFY2(o.error.message.startsWith(QStringLiteral("the checkpoint of epoch 1 failed on rank 1: cannot create the directory")),
                     qPrintable(o.error.message));
        }
    }

    void corruptNewestOnOneMemberBringsEveryoneToTheEpochBefore()
    {
        CommWorld w(QStringLiteral("local"), 3);
        QVERIFY(w.formed());
        QTemporaryDir dir;
        auto nodes = nodesIn(dir, 3);
        for (int step : {1, 2}) {
            for (int r = 0; r < 3; ++r)
                nodes[r]->state = QByteArray::number(r * 10 + step);
            for (const auto &o : together(w, [&](int r) { return CoordinatedCheckpoint::take(w[r], &nodes[r]->store); }))
                QVERIFY2(!o.error.isError(), qPrintable(o.error.message));
        }
        QFile newest(nodes[2]->store.directory() + QStringLiteral("/checkpoint-00000000000000000002.mmpi-ckpt"));
        QVERIFY(newest.open(QIODevice::ReadWrite));
        QVERIFY(newest.seek(newest.size() - 1) && newest.write("#") == 1);
        newest.close();

        const auto restored = together(w, [&](int r) { return CoordinatedCheckpoint::restore(w[r], &nodes[r]->store); });
        for (int r = 0; r < 3; ++r) {
            QVERIFY2(!restored[r].error.isError(), qPrintable(restored[r].error.message));
            QCOMPARE(restored[r].epoch, 1u);
            QCOMPARE(nodes[r]->state, QByteArray::number(r * 10 + 1));
        }
        QVERIFY(!restored[2].skipped.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestCoordinatedCheckpoint)
#include "tst_coordinatedcheckpoint.moc"
