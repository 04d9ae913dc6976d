// allreduce through the public Communicator API between Worlds formed in
// this process: every built-in op, MAXLOC and user ops for 1, 2, 3, 4, 6 and
// 7 ranks against a serial reference, through each algorithm (recursive
// doubling, reduce + bcast, the ring; recursive halving forced at 1 to 9
// ranks), large lists combined in place, and mismatched contributions.
#include "collectivecheck.h"
#include "collectivetest.h"
#include "reducecheck.h"
#include "why.h"

#include <mmpi/comm/communicator.h>
#include <mmpi/comm/tuning.h>

#include <QRegularExpression>
#include <QTest>

#include <memory>

using namespace mmpi;
using namespace mmpi::test;

class TestAllreduce : public CollectiveTest
{
    Q_OBJECT
public:
    TestAllreduce() : CollectiveTest(CheckedSizes) {}

private Q_SLOTS:
    void builtins();
    void maxLoc();
    void userOps();
    void largeLists_data();
    void largeLists();
    void errors();
    void recursiveHalving();
};

namespace {

// allreduce of every rank's itemsOf(rank, count) under `op`, recursive
// halving forced: every item against serialReduce(), and what ran (recursive
// halving where it can, `runs`; else auto's choice).
template<typename T>
QString halved(const CommWorld &w, const ReduceOp<T> &op, int count, bool runs)
{
    const QList<T> expected = serialReduce<T>(w.size(), count, op);
    const AllreduceOptions forced{AllreduceAlgorithm::RecursiveHalving};
    const QString problem = onAll<QList<T>>(w, [&](const Communicator &c, int r) {
        return c.allreduce(itemsOf<T>(r, count), op, forced);
    }, [&](int r, const QList<T> &got) -> QString {
        if (got.size() != expected.size())
            return QStringLiteral("%1 items, not %2").arg(got.size()).arg(expected.size());
        for (qsizetype i = 0; i < got.size(); ++i)
            if (got.at(i) != expected.at(i))
                return QStringLiteral("item %1: %2, not %3").arg(i).arg(double(got.at(i))).arg(double(expected.at(i)));
        const auto ran = lastAllreduceAlgorithm(w[r]);
        if ((ran == AllreduceAlgorithm::RecursiveHalving) != runs)
            return QStringLiteral("ran %1").arg(ran ? allreduceAlgorithmName(*ran) : QStringLiteral("nothing"));
        return {};
    });
    return problem.isEmpty() ? problem
                             : QStringLiteral("%1 ranks, %2 items of %3 bytes: %4").arg(w.size()).arg(count)
                                   .arg(sizeof(T)).arg(problem);
}

} // namespace

void TestAllreduce::builtins()
{
    for (const CommWorld *world : worlds().all()) {
        const CommWorld &w = *world;
        const int n = w.size();
        checkBuiltinOps(w, Reduction::Allreduce);
        if (QTest::currentTestFailed())
            return;
        // A single value
        QCOMPARE((onAll<qint64>(w, [&](const Communicator &c, int r) { return c.allreduce(qint64(r + 1), Op::Prod); },
                                [&](int, const qint64 &v) {
                                    qint64 f = 1;
                                    for (int i = 1; i <= n; ++i)
                                        f *= i;
                                    return differs(v, f);
                                })),
                 QString());
    }
}

void TestAllreduce::maxLoc()
{
    // Values with ties: the smallest index among equals wins
    for (int n : CheckedSizes) {
        const CommWorld &w = worlds().sized(n);
        const Extremes e = extremesOf(n);
        QCOMPARE((onAll<QList<ValueIndex<qint32>>>(w, [&](const Communicator &c, int r) {
                      return c.allreduce(QList<ValueIndex<qint32>>{{qint32(tiedValueOf(r)), r}, {qint32(-r), r}}, Op::MaxLoc);
                  }, [&](int, const QList<ValueIndex<qint32>> &v) {
                      const QList<ValueIndex<qint32>> expected{{qint32(e.high), e.highAt}, {0, 0}};
                      return v == expected ? QString() : QStringLiteral("wrong maxloc");
                  })),
                 QString());
    }
}

void TestAllreduce::userOps()
{
    for (const CommWorld *world : worlds().all()) {
        const CommWorld &w = *world;
        const int n = w.size();
        const QString ordered = bracketedRanks(n);
        // Given a non-commutative op (concatenation), Then it combines in rank order
        const ReduceOp<QString> concat = concatenation();
        QCOMPARE((onAll<QString>(w, [&](const Communicator &c, int r) { return c.allreduce(bracketed(r), concat); },
                                 [&](int, const QString &v) { return differs(v, ordered); })),
                 QString());
        // 2x2 integer matrix products (not commutative), element type a whole matrix as an object
        const auto matrixOf = [](int r) { return QList<qint64>{1, r + 1, 0, 1 + r % 2}; };
        const auto multiply = [](const QList<qint64> &a, const QList<qint64> &b) {
            return QList<qint64>{a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                                 a[2] * b[1] + a[3] * b[3]};
        };
        QList<qint64> product = matrixOf(0);
        for (int r = 1; r < n; ++r)
            product = multiply(product, matrixOf(r));
        QCOMPARE((onAll<QList<QList<qint64>>>(w, [&](const Communicator &c, int r) {
                      return c.allreduce(QList<QList<qint64>>{matrixOf(r)},
                                         ReduceOp<QList<QList<qint64>>>([&](const QList<QList<qint64>> &a, const QList<QList<qint64>> &b) {
                                             return QList<QList<qint64>>{multiply(a.at(0), b.at(0))};
                                         }, Commutativity::NonCommutative));
                  }, [&](int, const QList<QList<qint64>> &v) { return differs(v.value(0), product); })),
                 QString());
        // Large (above recursive doubling): a non-commutative op on items keeps
        // rank order (reduce + bcast; "the left one" is associative, not
        // commutative), a commutative one goes round the ring
        constexpr int Large = 9000; // 72 KB of qint64
        const auto largeOf = [](int r) {
            QList<qint64> items(Large);
            for (int i = 0; i < Large; ++i)
                items[i] = i + r;
            return items;
        };
        QCOMPARE((onAll<QList<qint64>>(w, [&](const Communicator &c, int r) {
                      return c.allreduce(largeOf(r), ReduceOp<qint64>([](qint64 a, qint64) { return a; },
                                                                      Commutativity::NonCommutative));
                  }, [&](int, const QList<qint64> &v) { return differs(v, largeOf(0)); })),
                 QString());
        QCOMPARE((onAll<QList<qint64>>(w, [&](const Communicator &c, int r) {
                      return c.allreduce(largeOf(r), ReduceOp<qint64>([](qint64 a, qint64 b) { return a + b + 1; }));
                  }, [&](int, const QList<qint64> &v) {
                      const qint64 first = qint64(n) * (n - 1) / 2 + (n - 1); // sum of r, plus one per combine
                      return v.size() == Large && v.at(0) == first && v.at(Large - 1) == first + qint64(Large - 1) * n
                                 ? QString() : QStringLiteral("wrong sum");
                  })),
                 QString());
        // A commutative user op on items, element by element
        QCOMPARE((onAll<QList<qint32>>(w, [&](const Communicator &c, int r) {
                      return c.allreduce(QList<qint32>{r, -r}, ReduceOp<qint32>([](qint32 a, qint32 b) { return a > b ? a : b; }));
                  }, [&](int, const QList<qint32> &v) { return differs(v, QList<qint32>{n - 1, 0}); })),
                 QString());
    }
}

// Between 2 ranks the partner's half of a large allreduce is written into
// the caller's result list as it arrives and combined there (or, when it
// came before this rank started, combined from where it waited); the
// caller's own list is shared, not copied, so changing it right after the
// call must not change what was contributed (the ring, on more ranks, reads
// it in place too; reduce + bcast takes a copy of its own).
void TestAllreduce::largeLists_data()
{
    QTest::addColumn<int>("n");
    QTest::addColumn<bool>("secondLate");
    QTest::addColumn<bool>("userOp");
    QTest::newRow("2 ranks together, built-in sum") << 2 << false << false;
    QTest::newRow("2 ranks together, non-commutative op") << 2 << false << true;
    QTest::newRow("2 ranks, rank 1 late, built-in sum") << 2 << true << false;
    QTest::newRow("2 ranks, rank 1 late, non-commutative op") << 2 << true << true;
    QTest::newRow("1 rank (reduce + bcast)") << 1 << false << false;
    QTest::newRow("3 ranks, ring") << 3 << false << false;
    QTest::newRow("7 ranks, ring") << 7 << false << false;
    QTest::newRow("3 ranks, reduce + bcast") << 3 << true << true;
}

void TestAllreduce::largeLists()
{
    QFETCH(int, n);
    QFETCH(bool, secondLate);
    QFETCH(bool, userOp);
    const CommWorld &w = worlds().sized(n);
    constexpr qsizetype Count = 300'000; // 1.2 MB: many chunks
    const ReduceOp<qint32> op = userOp ? ReduceOp<qint32>([](qint32 a, qint32 b) { return 2 * a + b; },
                                                          Commutativity::NonCommutative)
                                       : ReduceOp<qint32>(Op::Sum);
    const auto item = [](int r, qsizetype i) { return qint32(i * (r + 3) - r * 7); };
    QList<QList<qint32>> lists(n);
    for (int r = 0; r < n; ++r) {
        lists[r].resize(Count);
        for (qsizetype i = 0; i < Count; ++i)
            lists[r][i] = item(r, i);
    }
    // Given every rank's call, the second one after the first's half has arrived (or not)
    QList<Operation<QList<qint32>>> calls;
    for (int r = 0; r < n; ++r) {
        if (r == 1 && secondLate)
            QTest::qWait(100);
        calls.append(w[r].allreduce(lists[r], op));
    }
    // When the callers change their lists at once (the only other holder
    // of their items is the collective)
    for (QList<qint32> &items : lists)
        items.fill(-1);
    // Then every rank gets x0 op x1 op ... (in rank order) of the lists as they were
    for (int r = 0; r < n; ++r) {
        const auto got = calls[r].wait();
        QVERIFY2(got, qPrintable(why(got)));
        QCOMPARE(got->size(), Count);
        for (qsizetype i = 0; i < Count; ++i) {
            qint32 expected = item(0, i);
            for (int k = 1; k < n; ++k)
                expected = userOp ? 2 * expected + item(k, i) : expected + item(k, i);
            if (got->at(i) != expected)
                QFAIL(qPrintable(QStringLiteral("rank %1, item %2: %3, not %4").arg(r).arg(i).arg(got->at(i)).arg(expected)));
        }
    }
}

void TestAllreduce::errors()
{
    const CommWorld &w = worlds().sized(3);
    // (Also between 2 ranks, whose allreduce exchanges whole lists.)
    for (const CommWorld *world : {&w, &worlds().sized(2)}) {
        // Mismatched sizes: rank 1 contributes 3 items, the others 2
        QCOMPARE((allFail<QList<qint32>>(*world, [](const Communicator &c, int r) { return c.allreduce(QList<qint32>(r == 1 ? 3 : 2, 1), Op::Sum); },
                                         ErrorCode::CountMismatch)),
                 QString());
        // Sizes on both sides of the allreduce algorithms' threshold: still an error everywhere, no hang
        QCOMPARE((allFail<QList<qint32>>(*world, [](const Communicator &c, int r) { return c.allreduce(QList<qint32>(r == 1 ? 40000 : 2, 1), Op::Sum); },
                                         ErrorCode::NoError)),
                 QString());
        // Both above it (the ring) with different counts: the segments differ, an error everywhere, no hang
        QCOMPARE((allFail<QList<qint32>>(*world, [](const Communicator &c, int r) { return c.allreduce(QList<qint32>(r == 1 ? 40000 : 30000, 1), Op::Sum); },
                                         ErrorCode::NoError)),
                 QString());
        // One rank with a small list, or a large one a little longer, fails them all too
        for (qsizetype other : {qsizetype(2), qsizetype(300'001)})
            QCOMPARE((allFail<QList<qint32>>(*world, [other](const Communicator &c, int r) { return c.allreduce(QList<qint32>(r == 1 ? other : 300'000, 1), Op::Sum); },
                                             ErrorCode::NoError)),
                     QString());
        QCOMPARE(stillWorks(*world), QString());
    }
    // A reduction over the wrong type (Sum of booleans) fails everywhere
    QCOMPARE((allFail<bool>(w, [](const Communicator &c, int) { return c.allreduce(true, Op::Sum); }, ErrorCode::TypeMismatch)), QString());
    // A type that differs between ranks fails the reduction everywhere, with both types named
    {
        auto a = w[0].allreduce(QList<qint32>{1}, Op::Max);
        auto b = w[1].allreduce(QList<qint32>{1}, Op::Max);
        auto c = w[2].allreduce(std::span<const double>(QList<double>{1.0}), Op::Max);
        for (const auto &got : {within(a), within(b)}) {
            QVERIFY(!got);
            QCOMPARE(got.error().code, ErrorCode::TypeMismatch);
        }
        const auto doubles = within(c);
        QVERIFY(!doubles);
        QCOMPARE(doubles.error().code, ErrorCode::TypeMismatch);
        QVERIFY2(doubles.error().message.contains(QLatin1String("Double")) && doubles.error().message.contains(QLatin1String("Int")),
                 qPrintable(doubles.error().message));
    }
    // And everything still works afterwards
    QCOMPARE(stillWorks(w), QString());
}

// Rabenseifner's allreduce forced at every size from 1 to 9 ranks (powers
// of two, and sizes that fold pairs first), with blocks of unequal counts,
// one item per rank, fewer items than ranks (auto's choice runs instead),
// several ops and item types (bool: bytes of its own, not the caller's list
// type), every item against a serial reduction.
void TestAllreduce::recursiveHalving()
{
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral(
                                           "^allreduce: recursive-halving was forced but cannot run this call")));
    const ReduceOp<qint64> plusOne([](qint64 a, qint64 b) { return a + b + 1; }); // commutative, associative
    for (int n = 1; n <= 9; ++n) {
        std::unique_ptr<CommWorld> own;
        if (!CheckedSizes.contains(n)) {
            own = std::make_unique<CommWorld>(QStringLiteral("local"), n);
            QVERIFY(own->formed());
        }
        const CommWorld &w = own ? *own : worlds().sized(n);
        for (int count : {n - 1, n, n + 1, 2 * n + 3, 1000, 40'001}) {
            const bool runs = n >= 2 && count >= n;
            QCOMPARE(halved<qint32>(w, Op::Sum, count, runs), QString());
            QCOMPARE(halved<qint64>(w, Op::Max, count, runs), QString());
            QCOMPARE(halved<double>(w, Op::Sum, count, runs), QString());
            QCOMPARE(halved<float>(w, Op::Min, count, runs), QString());
            QCOMPARE(halved<quint16>(w, Op::BitwiseXor, count, runs), QString());
            QCOMPARE(halved<bool>(w, Op::LogicalXor, count, runs), QString());
            QCOMPARE(halved<qint64>(w, plusOne, count, runs), QString());
        }
        // A non-commutative op cannot run it: auto's choice, in rank order
        const AllreduceOptions forced{AllreduceAlgorithm::RecursiveHalving};
        QCOMPARE((onAll<QString>(w, [&](const Communicator &c, int r) { return c.allreduce(bracketed(r), concatenation(), forced); },
                                 [&](int, const QString &v) { return differs(v, bracketedRanks(n)); })),
                 QString());
        if (n < 2)
            continue;
        // Contributions of different sizes, both cut into blocks: an error everywhere, no hang
        QCOMPARE((allFail<QList<qint32>>(w, [&](const Communicator &c, int r) {
                      return c.allreduce(QList<qint32>(r == 1 ? 40'000 : 30'000, 1), Op::Sum, forced);
                  }, ErrorCode::NoError)),
                 QString());
        QCOMPARE(stillWorks(w), QString());
    }
}

QTEST_GUILESS_MAIN(TestAllreduce)
#include "tst_allreduce.moc"
