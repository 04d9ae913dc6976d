// Collectives when ranks fail, through the public Communicator API between
// Worlds formed in this process: a rank lost in the middle of one or before
// it fails the others with NodeLost instead of a hang, a clean leave does
// not; a revoked communicator fails every member's operations, and
// malformed revoke notices from the network are dropped.
#include "collectivecheck.h"
#include "why.h"

#include <mmpi/comm/communicator.h>
#include <mmpi/wire/itemcodec.h>

#include <QDataStream>
#include <QSignalSpy>
#include <QTest>

using namespace mmpi;
using namespace mmpi::test;

class TestCollectiveFaults : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void peerLostMidCollective();
    void lostRankFailsALargeAllreduce();
    void lostRankFailsCollectivesWhereItIsNoPartner();
    void cleanLeaveDoesNotFailAWaitingBcast();
    void revokeReachesEveryMember();
    void revokeOnThisNodeOnly();
    void malformedRevokeNoticesAreDropped();
};

void TestCollectiveFaults::peerLostMidCollective()
{
    // Given 4 ranks of which 3 are in an allreduce, a bcast from rank 3 and a barrier
    CommWorld w(QStringLiteral("local"), 4);
    QVERIFY(w.formed());
    std::vector<Operation<qint32>> sums, bcasts;
    std::vector<Operation<void>> barriers;
    for (int r = 0; r < 3; ++r) {
        sums.push_back(w[r].allreduce(qint32(r), Op::Sum));
        bcasts.push_back(w[r].bcast(qint32(0), 3));
        barriers.push_back(w[r].barrier());
    }
    QTest::qWait(20);
    QVERIFY(!sums[0].request().isFinished());
    // When rank 3 vanishes without a goodbye
    w.kill(3);
    // Then every one of them fails with NodeLost instead of waiting
    for (int r = 0; r < 3; ++r)
        for (const auto *op : {&sums[size_t(r)], &bcasts[size_t(r)]}) {
            const auto got = within(*op);
            QVERIFY(!got);
            QVERIFY2(got.error().code == ErrorCode::NodeLost, qPrintable(got.error().toString()));
        }
    for (const auto &b : barriers) {
        const auto got = within(b);
        QVERIFY(!got);
        QVERIFY2(got.error().code == ErrorCode::NodeLost, qPrintable(got.error().toString()));
    }
    // And a collective started afterwards fails at once too
    const auto late = within(w[0].bcast(qint32(5), 0, {BcastTopology::Serial}));
    QVERIFY(!late);
}

// Losing a rank in a large allreduce (the ring) fails the others, which
// wait for its part.
void TestCollectiveFaults::lostRankFailsALargeAllreduce()
{
    // Given 4 ranks, three of them in an allreduce of 1.2 MB
    CommWorld w(QStringLiteral("local"), 4);
    QVERIFY(w.formed());
    const QList<qint32> items(300'000, 1);
    std::vector<Operation<QList<qint32>>> sums;
    for (int r : {0, 2, 3})
        sums.push_back(w[r].allreduce(items, Op::Sum));
    QTest::qWait(20);
    QVERIFY(!sums[0].request().isFinished());
    // When rank 1 vanishes without a goodbye
    w.kill(1);
    // Then every one of them fails with NodeLost instead of waiting
    for (const auto &sum : sums) {
        const auto got = within(sum);
        QVERIFY(!got);
        QVERIFY2(got.error().code == ErrorCode::NodeLost, qPrintable(got.error().toString()));
    }
}

// The hang behind a flaky SHRINK run: the survivors that failed a sum on
// the lost rank moved on to a shrunk communicator, while one whose partners
// were all alive had finished it and started the next on the old one.
void TestCollectiveFaults::lostRankFailsCollectivesWhereItIsNoPartner()
{
    // Given 4 ranks where rank 2 is lost without a goodbye, and ranks 0 and 3
    // (rank 1's partners in recursive doubling, the dissemination barrier and
    // the ring) will not join another collective on this communicator
    CommWorld w(QStringLiteral("local"), 4);
    QVERIFY(w.formed());
    QSignalSpy lost(w.world(1), &World::nodeLost);
    w.kill(2);
    QVERIFY(lost.wait(Patience));
    // When rank 1 starts collectives whose results hold every rank's part
    const QList<qint32> large(40000, 1); // 160 kB: the ring allreduce
    const auto small = within(w[1].allreduce(qint32(1), Op::Sum));
    const auto ring = within(w[1].allreduce(large, Op::Sum));
    const auto barrier = within(w[1].barrier());
    // Then each fails with NodeLost naming rank 2, instead of waiting for partners that never send
    QVERIFY(!small && !ring && !barrier);
    for (const Error &e : {small.error(), ring.error(), barrier.error()}) {
        QVERIFY2(e.code == ErrorCode::NodeLost, qPrintable(e.toString()));
        QVERIFY2(e.message.contains(QLatin1String("rank 2 is gone")), qPrintable(e.toString()));
    }
}

void TestCollectiveFaults::cleanLeaveDoesNotFailAWaitingBcast()
{
    for (bool clean : {true, false}) {
        // Given a pipe 0 -> 1 -> 2 where rank 1 has not called bcast yet
        CommWorld w(QStringLiteral("local"), 3);
        QVERIFY(w.formed());
        auto waiting = w[2].bcast(QString(), 0, {BcastTopology::Pipe});
        QVERIFY(within(w[0].bcast(QStringLiteral("hello"), 0, {BcastTopology::Pipe})));
        // When the root leaves (with or without a goodbye) while rank 2 waits
        QSignalSpy left(w.world(2), &World::nodeLeft);
        QSignalSpy lost(w.world(2), &World::nodeLost);
        QSignalSpy &gone = clean ? left : lost;
        if (clean)
            w.world(0)->close();
        else
            w.kill(0);
        QVERIFY(gone.wait(Patience));
        if (clean) {
            // Then a goodbye does not fail it: whatever the root sent has arrived
            QVERIFY(!waiting.request().isFinished());
            QVERIFY(within(w[1].bcast(QString(), 0, {BcastTopology::Pipe})));
            QCOMPARE(*within(waiting), QStringLiteral("hello"));
        } else {
            // Then a lost rank fails it: it may have been the one to forward
            QCOMPARE(within(waiting).error().code, ErrorCode::NodeLost);
        }
    }
}

void TestCollectiveFaults::revokeReachesEveryMember()
{
    CommWorld w(QStringLiteral("local"), 4);
    QVERIFY(w.formed());
    // Given ranks 0, 2 and 3 share a communicator split from the world's,
    // rank 1 waits for a message rank 0 will never send, and rank 2 for a
    // broadcast rank 0 will never start
    std::vector<Operation<Communicator>> splits;
    for (int r = 0; r < 4; ++r)
        splits.push_back(w[r].split(r == 1 ? Undefined : 0, r));
    for (int r : {0, 2, 3}) {
        const auto part = within(splits[size_t(r)]);
        QVERIFY2(part, qPrintable(why(part)));
    }
    QVERIFY(within(splits[1]));
    auto receive = w[1].recv<qint32>(0, 5);
    auto bcast = w[2].bcast(qint32(0), 0);
    QVERIFY(!receive.request().isFinished() && !bcast.request().isFinished());
    // When rank 0 revokes the world communicator
    w[0].revoke({ErrorCode::Cancelled, QStringLiteral("the game is over")});
    // Then both waits end with Revoked and the reason
    for (const auto &got : {within(receive), within(bcast)}) {
        QVERIFY(!got);
        QCOMPARE(got.error().code, ErrorCode::Revoked);
        QCOMPARE(got.error().message, QStringLiteral("the game is over"));
    }
    // And every member has it revoked, so later operations fail at once
    for (int r = 0; r < 4; ++r) {
        QVERIFY2(QTest::qWaitFor([&] { return w[r].revoked().has_value(); }, Patience), qPrintable(QString::number(r)));
        QCOMPARE(within(w[r].barrier()).error().code, ErrorCode::Revoked);
    }
    QCOMPARE(w[3].send(1, 1, qint32(1)).wait().error().code, ErrorCode::Revoked);
    // But a communicator split from it is another one, and still works
    std::vector<Operation<qint32>> sums;
    for (int r : {0, 2, 3})
        sums.push_back(splits[size_t(r)].wait()->allreduce(qint32(r), Op::Sum));
    for (const auto &sum : sums)
        QCOMPARE(*within(sum), 0 + 2 + 3);
}

void TestCollectiveFaults::revokeOnThisNodeOnly()
{
    CommWorld w(QStringLiteral("local"), 3);
    QVERIFY(w.formed());
    // Given rank 0 revokes its copy only
    w[0].revoke({ErrorCode::Revoked, QStringLiteral("mine")}, RevokeScope::ThisNode);
    QCOMPARE(within(w[0].barrier()).error().code, ErrorCode::Revoked);
    QCOMPARE(w[0].revoked()->message, QStringLiteral("mine"));
    // Then ranks 1 and 2 still talk on it
    auto got = w[2].recv<qint32>(1, 7);
    QVERIFY(w[1].send(2, 7, qint32(42)).wait());
    QCOMPARE(*within(got), 42);
    QVERIFY(!w[1].revoked() && !w[2].revoked());
}

// Revoke notices come from the network: anything malformed is dropped, and a
// count of ranks larger than the bytes behind it allocates nothing.
void TestCollectiveFaults::malformedRevokeNoticesAreDropped()
{
    CommWorld w(QStringLiteral("local"), 2);
    QVERIFY(w.formed());
    // The world's collective context, kind revoke (docs/collectives.md, "On the wire")
    const auto notice = [](const QByteArray &record) {
        Frame frame;
        frame.header.kind = FrameKind::Data;
        frame.header.communicator = 0x80000000u;
        frame.header.tag = qint32(2u << 30);
        frame.header.itemType = ItemType::Object;
        frame.header.count = 1;
        frame.payload = encodeObjects({record});
        return frame;
    };
    const auto record = [](qint32 code, const QString &message, std::optional<qint32> count, QList<qint32> ranks) {
        QByteArray bytes;
        QDataStream out(&bytes, QIODevice::WriteOnly);
        out.setVersion(QDataStream::Qt_6_4);
        out << code << message;
        if (count)
            out << *count;
        for (qint32 r : ranks)
            out << r;
        return bytes;
    };
    const qint32 revoked = qint32(ErrorCode::Revoked);
    const QList<QByteArray> malformed{
        QByteArray("\\x01\\x02"),
        record(qint32(ErrorCode::NodeLost), QStringLiteral("wrong code"), std::nullopt, {}),
        record(revoked, QStringLiteral("too many ranks"), 1'000'000'000, {1}),
        record(revoked, QStringLiteral("negative count"), -1, {}),
        record(revoked, QStringLiteral("trailing bytes"), 1, {1, 7}),
    };
    for (const QByteArray &bad : malformed)
        QVERIFY(w.world(0)->sendFrame(1, notice(bad)));
    // An allreduce behind them on the link: they were read, and dropped
    const auto sum1 = w[1].allreduce(qint32(1), Op::Sum), sum0 = w[0].allreduce(qint32(1), Op::Sum);
    for (const auto *sum : {&sum0, &sum1}) {
        const auto got = within(*sum);
        QVERIFY2(got && *got == 2, qPrintable(why(got)));
    }
    QVERIFY(!w[1].revoked());
    QVERIFY(w.world(0)->sendFrame(1, notice(record(revoked, QStringLiteral("well formed"), 1, {1}))));
    QVERIFY(QTest::qWaitFor([&] { return w[1].revoked().has_value(); }, Patience));
    QCOMPARE(w[1].revoked()->message, QStringLiteral("well formed"));
}

QTEST_GUILESS_MAIN(TestCollectiveFaults)
#include "tst_collectivefaults.moc"
