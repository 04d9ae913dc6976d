// bcast through the public Communicator API between Worlds formed in this
// process: every type at every root for 1, 2, 3, 4, 6 and 7 ranks, every topology
// at 1..7 ranks and on 16 sim ranks, large messages segmented, errors,
// coroutines, and the frames of broadcasts a rank has not started bounded.
#include "collectivecheck.h"
#include "collectivetest.h"
#include "coroutinetest.h"
#include "player.h"
#include "why.h"

#include <mmpi/comm/communicator.h>
#include <mmpi/comm/tuning.h>

#include <QCoroTask>
#include <QTest>
#include <QThread>

#include <algorithm>

using namespace mmpi;
using namespace mmpi::test;

namespace {

// Parameters by value: a coroutine frame outlives the caller's temporaries.
QCoro::Task<QString> awaitBcastThenAllreduce(Communicator comm, QThread **resumedOn)
{
    const auto text = co_await comm.bcast(QString(), 0);
    *resumedOn = QThread::currentThread();
    const auto sum = co_await comm.allreduce(qint32(comm.rank()), Op::Sum);
    co_return text && sum ? QStringLiteral("%1 %2").arg(*text).arg(*sum)
                          : (text ? sum.error().message : text.error().message);
}

const QList<BcastTopology> Topologies{BcastTopology::Auto, BcastTopology::Serial, BcastTopology::Pipe,
                                      BcastTopology::Binary, BcastTopology::Binomial, BcastTopology::Fibonacci};

// A radio's model (30 ms one way, 90 kB/s): large messages are segmented on it.
const LinkModel Radio{30000.0, 0.09, 0.0};

} // namespace

class TestBcast : public CollectiveTest
{
    Q_OBJECT
public:
    TestBcast() : CollectiveTest({1, 2, 3, 4, 5, 6, 7}) {}

private Q_SLOTS:
    void everyTypeEveryRoot();
    void everyTopology();
    void streamsLargeMessages();
    void forwardsToOneChildAtATime();
    void onSixteenSimRanks();
    void errors();
    void coroutineAwaitsCollectives();
    void framesOfCollectivesNotStartedAreBounded();
};

void TestBcast::everyTypeEveryRoot()
{
    const Player player{QStringLiteral("Grüße"), 7};
    for (int n : CheckedSizes) {
        const CommWorld &w = worlds().sized(n);
        for (int root = 0; root < n; ++root) {
            // A single item, lists of 0, 1 and 1000 items, text, bytes, an object, a span
            QCOMPARE((onAll<qint32>(w, [&](const Communicator &c, int r) { return c.bcast(qint32(r == root ? 42 + root : -1), root); },
                                    [&](int, const qint32 &v) { return differs(v, 42 + root); })),
                     QString());
            for (int count : {0, 1, 1000}) {
                const QList<double> values = itemsOf<double>(root, count);
                QCOMPARE((onAll<QList<double>>(w, [&](const Communicator &c, int r) {
                              return c.bcast(r == root ? values : QList<double>{}, root);
                          }, [&](int, const QList<double> &v) { return differs(v, values); })),
                         QString());
            }
            const QString text = QStringLiteral("root %1 says \U0001F600").arg(root);
            QCOMPARE((onAll<QString>(w, [&](const Communicator &c, int) { return c.bcast(text, root); },
                                     [&](int, const QString &v) { return differs(v, text); })),
                     QString());
            const QByteArray bytes = bytesOf(root, 3000);
            QCOMPARE((onAll<QByteArray>(w, [&](const Communicator &c, int r) { return c.bcast(r == root ? bytes : QByteArray(), root); },
                                        [&](int, const QByteArray &v) { return differs(v, bytes); })),
                     QString());
            QCOMPARE((onAll<Player>(w, [&](const Communicator &c, int) { return c.bcast(player, root); },
                                    [&](int, const Player &v) { return v == player ? QString() : QStringLiteral("wrong player"); })),
                     QString());
            const QList<quint16> units = itemsOf<quint16>(root, 17);
            QCOMPARE((onAll<QList<quint16>>(w, [&](const Communicator &c, int) { return c.bcast(std::span<const quint16>(units), root); },
                                            [&](int, const QList<quint16> &v) { return differs(v, units); })),
                     QString());
        }
    }
}

void TestBcast::everyTopology()
{
    // Given every topology forced on every rank, at every size 1..7 and every root
    for (const CommWorld *world : worlds().all()) {
        const CommWorld &w = *world;
        const int n = w.size();
        for (BcastTopology t : Topologies) {
            for (int root = 0; root < n; ++root) {
                const QList<qint64> values = itemsOf<qint64>(root + n, 100);
                const QString p = onAll<QList<qint64>>(
                    w, [&](const Communicator &c, int r) { return c.bcast(r == root ? values : QList<qint64>{}, root, {t}); },
                    [&](int, const QList<qint64> &v) { return differs(v, values); });
                QVERIFY2(p.isEmpty(), qPrintable(QStringLiteral("%1, %2 ranks, root %3: %4").arg(bcastTopologyName(t)).arg(n).arg(root).arg(p)));
            }
            // Then the root's forced choice is what it used
            if (n > 1 && t != BcastTopology::Auto) {
                (void)within(w[0].bcast(qint32(1), 0, {t}));
                for (int r = 1; r < n; ++r)
                    (void)within(w[r].bcast(qint32(0), 0, {t}));
                QVERIFY(lastBcastPlan(w[0]).has_value());
                QCOMPARE(lastBcastPlan(w[0])->topology, t);
            }
        }
    }
}

void TestBcast::streamsLargeMessages()
{
    // Given a model of a slow radio, so that large messages are segmented and
    // forwarded as they arrive, and the measured model of this machine
    const CommWorld &w = worlds().sized(7);
    for (bool radio : {true, false}) {
        for (int r = 0; r < w.size(); ++r)
            setLinkModel(w[r], radio ? std::optional<LinkModel>(Radio) : std::nullopt);
        for (BcastTopology t : Topologies) {
            for (qsizetype size : {qsizetype(70000), qsizetype(1) << 20}) {
                const int root = int(size % 7);
                const QByteArray bytes = bytesOf(root, size);
                // When broadcast
                const QString p = onAll<QByteArray>(
                    w, [&](const Communicator &c, int r) { return c.bcast(r == root ? bytes : QByteArray(), root, {t}); },
                    [&](int, const QByteArray &v) { return v == bytes ? QString() : QStringLiteral("%1 bytes differ").arg(v.size()); });
                // Then every rank has it whole
                QVERIFY2(p.isEmpty(), qPrintable(QStringLiteral("%1 %2 bytes: %3").arg(bcastTopologyName(t)).arg(size).arg(p)));
                if (radio && t == BcastTopology::Pipe && size > 70000)
                    QVERIFY(lastBcastPlan(w[root]).value_or(BcastPlan{}).segmentBytes > 0);
            }
        }
    }
    for (int r = 0; r < w.size(); ++r)
        setLinkModel(w[r], std::nullopt);
}

// One radio sends every copy a node forwards: a copy sent while the last is
// still in the node's kernel only makes both late. So the next child's copy
// starts once the last has left the node, not once its socket took it.
void TestBcast::forwardsToOneChildAtATime()
{
    // Given 4 ranks where the root sends to 1, 2 and 3 in turn (serial), and
    // rank 1 reads nothing from the root for now
    const CommWorld &w = worlds().sized(4);
    w.world(1)->setReceiving(0, false);
    // When the root broadcasts a message larger than the buffers between them
    const QByteArray bytes = bytesOf(0, 8 << 20);
    std::vector<Operation<QByteArray>> ops;
    for (int r = 0; r < 4; ++r)
        ops.push_back(w[r].bcast(r == 0 ? bytes : QByteArray(), 0, {BcastTopology::Serial}));
    // Then ranks 2 and 3 get nothing while rank 1's copy has not left
    QTest::qWait(500);
    for (int r : {2, 3})
        QVERIFY2(!ops[size_t(r)].request().isFinished(), qPrintable(QStringLiteral("rank %1 finished").arg(r)));
    // When rank 1 reads again, every rank has the message whole
    w.world(1)->setReceiving(0, true);
    for (int r = 0; r < 4; ++r) {
        const auto got = within(ops[size_t(r)]);
        QVERIFY2(got, qPrintable(why(got)));
        QCOMPARE(got->size(), bytes.size());
        QVERIFY(*got == bytes);
    }
}

void TestBcast::onSixteenSimRanks()
{
    // Given 16 ranks over the sim transport's ideal links
    CommWorld w(QStringLiteral("local"), 16, [](WorldConfig &config) {
        config.transport = QStringLiteral("sim");
        config.rootAddress.replace(QStringLiteral("local://"), QStringLiteral("sim://"));
        config.transportOptions.insert(QStringLiteral("link"), QStringLiteral("ideal"));
    });
    QVERIFY(w.formed());
    // When every topology broadcasts from every root, small and segmented
    for (int r = 0; r < 16; ++r)
        setLinkModel(w[r], Radio); // segments for 64 KiB
    for (BcastTopology t : Topologies)
        for (int root = 0; root < 16; ++root) {
            const QByteArray bytes = bytesOf(root, root % 4 == 0 ? 65536 : 100);
            const QString p = onAll<QByteArray>(
                w, [&](const Communicator &c, int r) { return c.bcast(r == root ? bytes : QByteArray(), root, {t}); },
                [&](int, const QByteArray &v) { return v == bytes ? QString() : QStringLiteral("wrong bytes"); });
            // Then every rank has the root's message
            QVERIFY2(p.isEmpty(), qPrintable(QStringLiteral("%1 root %2: %3").arg(bcastTopologyName(t)).arg(root).arg(p)));
        }
}

void TestBcast::errors()
{
    const CommWorld &w = worlds().sized(3);
    // A bad root: every rank fails at once, nobody waits
    QCOMPARE((allFail<qint32>(w, [](const Communicator &c, int) { return c.bcast(qint32(1), 5); }, ErrorCode::InvalidRank)), QString());
    // Wrong type: the root sends doubles, a rank receives Int; the root is fine
    {
        auto atRoot = w[0].bcast(QList<double>{1.5}, 0);
        auto wrong = w[1].bcast(QList<qint32>{}, 0);
        auto right = w[2].bcast(QList<double>{}, 0);
        QVERIFY(within(atRoot));
        const auto mismatch = within(wrong);
        QVERIFY(!mismatch);
        QCOMPARE(mismatch.error().code, ErrorCode::TypeMismatch);
        QVERIFY2(mismatch.error().message.contains(QLatin1String("Double")), qPrintable(mismatch.error().message));
        QCOMPARE(*within(right), QList<double>{1.5});
    }
    // And everything still works afterwards
    QCOMPARE(stillWorks(w), QString());
    // An unformed communicator
    World idle;
    const auto unformed = Communicator::world(idle);
    QVERIFY(unformed);
    QCOMPARE(within(unformed->bcast(qint32(1), 0)).error().code, ErrorCode::NotFormed);
}

void TestBcast::coroutineAwaitsCollectives()
{
    const CommWorld &w = worlds().sized(2);
    QThread *const mine = QThread::currentThread();
    QThread *resumedOn = nullptr;
    // Given a coroutine on rank 1 that awaits a bcast and then an allreduce
    QCoro::Task<QString> task = awaitBcastThenAllreduce(w[1], &resumedOn);
    // When rank 0 takes part (the frames are handled on the progress threads)
    auto sent = w[0].bcast(QStringLiteral("hello"), 0);
    auto summed = w[0].allreduce(qint32(0), Op::Sum);
    // Then the coroutine resumes here, on the thread that awaited, with both results
    QCOMPARE(finish(task), QStringLiteral("hello 1"));
    QCOMPARE(resumedOn, mine);
    QVERIFY(within(sent));
    QCOMPARE(*within(summed), 1);
}

void TestBcast::framesOfCollectivesNotStartedAreBounded()
{
    constexpr qint64 Limit = 256 * 1024;
    constexpr int Size = 64 * 1024;
    constexpr int Broadcasts = 200; // 12.5 MiB: more than every buffer on the way
    CommWorld w(QStringLiteral("local"), 2, [](WorldConfig &c) { c.maxUnexpectedBytes = Limit; });
    QVERIFY(w.formed());
    // Given rank 1 broadcasts in a loop while rank 0, busy elsewhere, has
    // started none of those broadcasts yet
    std::vector<Operation<QByteArray>> sent;
    for (int i = 0; i < Broadcasts; ++i)
        sent.push_back(w[1].bcast(QByteArray(Size, char(i % 251)), 1, {BcastTopology::Serial}));
    const auto completed = [&] {
        return std::count_if(sent.begin(), sent.end(), [](const auto &op) { return op.request().isFinished(); });
    };
    // When rank 0 has buffered up to its limit and rank 1's progress settles
    QVERIFY(QTest::qWaitFor([&] { return w[0].unexpectedBytes() >= Limit; }, Patience));
    qsizetype before = -1;
    for (int i = 0; i < 100 && completed() != before; ++i) {
        before = completed();
        QTest::qWait(100);
    }
    // Then rank 0 holds no more than the limit and a frame or two, and rank
    // 1's broadcasts are held back by flow control instead
    QVERIFY2(w[0].unexpectedBytes() <= Limit + 2 * (Size + 1024),
             qPrintable(QString::number(w[0].unexpectedBytes())));
    QVERIFY2(completed() < Broadcasts, "every broadcast completed: nothing slowed the root");
    // And once rank 0 takes part, every broadcast arrives, whole and in order
    for (int i = 0; i < Broadcasts; ++i) {
        const auto got = w[0].bcast(QByteArray(), 1, {BcastTopology::Serial}).wait();
        QVERIFY2(got, qPrintable(why(got)));
        QCOMPARE(got->size(), Size);
        QCOMPARE(got->front(), char(i % 251));
        QCOMPARE(got->back(), char(i % 251));
    }
    for (auto &op : sent)
        QVERIFY(op.wait());
    QCOMPARE(w[0].unexpectedBytes(), 0);
}

QTEST_GUILESS_MAIN(TestBcast)
#include "tst_bcast.moc"
