// reduce through the public Communicator API between Worlds formed in this
// process: every built-in op, MINLOC and a user's non-commutative op at
// every root for 1, 2, 3, 4, 6 and 7 ranks against a serial reference, and
// a bad root.
#include "collectivecheck.h"
#include "collectivetest.h"
#include "reducecheck.h"

#include <mmpi/comm/communicator.h>
#include <mmpi/comm/tuning.h>

#include <QTest>

using namespace mmpi;
using namespace mmpi::test;

class TestReduce : public CollectiveTest
{
    Q_OBJECT
public:
    TestReduce() : CollectiveTest(CheckedSizes) {}

private Q_SLOTS:
    void builtins();
    void minLoc();
    void userOps();
    void bothTreesCombineInOrder();
    void badRoot();
};

void TestReduce::builtins()
{
    for (const CommWorld *w : worlds().all()) {
        checkBuiltinOps(*w, Reduction::Reduce);
        if (QTest::currentTestFailed())
            return;
    }
}

void TestReduce::minLoc()
{
    // Values with ties: the smallest index among equals wins
    for (int n : CheckedSizes) {
        const CommWorld &w = worlds().sized(n);
        const Extremes e = extremesOf(n);
        for (int root = 0; root < n; ++root) {
            QCOMPARE((onAll<ValueIndex<double>>(w, [&](const Communicator &c, int r) {
                          return c.reduce(ValueIndex<double>{tiedValueOf(r), r}, Op::MinLoc, root);
                      }, [&](int r, const ValueIndex<double> &v) {
                          return r != root || (v.value == e.low && v.index == e.lowAt) ? QString() : QStringLiteral("wrong minloc");
                      })),
                     QString());
        }
    }
}

void TestReduce::userOps()
{
    for (const CommWorld *world : worlds().all()) {
        const CommWorld &w = *world;
        const int n = w.size();
        const QString ordered = bracketedRanks(n);
        // Given a non-commutative op (concatenation), Then it combines in rank order at every root
        const ReduceOp<QString> concat = concatenation();
        for (int root = 0; root < n; ++root)
            QCOMPARE((onAll<QString>(w, [&](const Communicator &c, int r) { return c.reduce(bracketed(r), concat, root); },
                                     [&](int r, const QString &v) { return differs(v, r == root ? ordered : QString()); })),
                     QString());
    }
}

void TestReduce::bothTreesCombineInOrder()
{
    // Given links where a latency is worth many frames (the root takes
    // every contribution itself) and links where it is worth none (a
    // binomial tree), set alike on every rank, as the medium is
    const LinkModel radio{30000.0, 0.09, 0.0};
    const LinkModel wire{0.0, 1000.0, 4.0};
    for (int n : {3, 4, 7}) {
        const CommWorld &w = worlds().sized(n);
        const QString ordered = bracketedRanks(n);
        for (const LinkModel &model : {radio, wire}) {
            for (int r = 0; r < n; ++r)
                setLinkModel(w[r], model);
            // Then a non-commutative op combines in rank order at every root,
            // and a sum of vectors is whole
            for (int root = 0; root < n; ++root) {
                QCOMPARE((onAll<QString>(w, [&](const Communicator &c, int r) { return c.reduce(bracketed(r), concatenation(), root); },
                                         [&](int r, const QString &v) { return differs(v, r == root ? ordered : QString()); })),
                         QString());
                const qint64 sum = qint64(n) * (n - 1) / 2;
                QCOMPARE((onAll<QList<qint64>>(w, [&](const Communicator &c, int r) {
                              const QList<qint64> mine(100, qint64(r));
                              return c.reduce(std::span<const qint64>(mine), Op::Sum, root);
                          }, [&](int r, const QList<qint64> &v) {
                              return r != root || v == QList<qint64>(100, sum) ? QString() : QStringLiteral("wrong sum");
                          })),
                         QString());
            }
        }
        for (int r = 0; r < n; ++r)
            setLinkModel(w[r], std::nullopt);
    }
}

void TestReduce::badRoot()
{
    // A bad root: every rank fails at once, nobody waits
    const CommWorld &w = worlds().sized(3);
    QCOMPARE((allFail<qint32>(w, [](const Communicator &c, int) { return c.reduce(qint32(1), Op::Sum, 3); }, ErrorCode::InvalidRank)), QString());
    QCOMPARE(stillWorks(w), QString());
}

QTEST_GUILESS_MAIN(TestReduce)
#include "tst_reduce.moc"
