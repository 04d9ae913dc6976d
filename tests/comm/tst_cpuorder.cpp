// CpuOrder: where ranks share CPUs and fill them evenly (rank r on CPU r mod
// c), a broadcast counts them by CPU from its root, so that each CPU's ranks
// form one range; served per CPU, every rank gets the message exactly once,
// each other CPU's ranks through one of them.
#include "cpuorder.h"

#include <QTest>

#include <set>

using namespace mmpi;
using namespace mmpi::detail;

class TestCpuOrder : public QObject
{
    Q_OBJECT
private slots:
    void groupsOnlyWhereRanksFillTheCpusEvenly();
    void ordersAreBijectionsStartingAtTheRoot_data();
    void ordersAreBijectionsStartingAtTheRoot();
    void eachCpuIsOneRange_data();
    void eachCpuIsOneRange();
    void servedPerCpuEveryRankGetsItOnce_data();
    void servedPerCpuEveryRankGetsItOnce();
};

namespace {

void addShapes()
{
    QTest::addColumn<int>("size");
    QTest::addColumn<int>("groups");
    for (auto [n, c] : {std::pair{4, 2}, {6, 2}, {8, 2}, {6, 3}, {12, 4}, {16, 2}, {5, 1}})
        QTest::addRow("%d ranks, %d CPUs", n, c) << n << c;
}

} // namespace

void TestCpuOrder::groupsOnlyWhereRanksFillTheCpusEvenly()
{
    QCOMPARE(CpuOrder::groupsFor(4, 2), 2);
    QCOMPARE(CpuOrder::groupsFor(8, 2), 2);
    QCOMPARE(CpuOrder::groupsFor(12, 4), 4);
    QCOMPARE(CpuOrder::groupsFor(3, 2), 1); // not a multiple: unbound, no order to use
    QCOMPARE(CpuOrder::groupsFor(7, 2), 1);
    QCOMPARE(CpuOrder::groupsFor(2, 2), 1); // a CPU each: nothing shared
    QCOMPARE(CpuOrder::groupsFor(8, 0), 1); // a processor per node
    QCOMPARE(CpuOrder::groupsFor(8, 1), 1);
}

void TestCpuOrder::ordersAreBijectionsStartingAtTheRoot_data()
{
    addShapes();
}

void TestCpuOrder::ordersAreBijectionsStartingAtTheRoot()
{
    QFETCH(int, size);
    QFETCH(int, groups);
    for (int root = 0; root < size; ++root) {
        const CpuOrder order(root, size, groups);
        QCOMPARE(order.rankOf(0), root);
        std::set<int> seen;
        for (int v = 0; v < size; ++v) {
            const int r = order.rankOf(v);
            QVERIFY2(r >= 0 && r < size, qPrintable(QStringLiteral("root %1, vrank %2: rank %3").arg(root).arg(v).arg(r)));
            QCOMPARE(order.vrankOf(r), v);
            seen.insert(r);
        }
        QCOMPARE(int(seen.size()), size);
    }
}

void TestCpuOrder::eachCpuIsOneRange_data()
{
    addShapes();
}

// Counted from the root: the other CPUs' ranks, g at a time, then the rest
// of the root's own CPU; within each range all ranks share rank mod c.
void TestCpuOrder::eachCpuIsOneRange()
{
    QFETCH(int, size);
    QFETCH(int, groups);
    const int g = size / groups;
    for (int root = 0; root < size; ++root) {
        const CpuOrder order(root, size, groups);
        for (int k = 1; k < groups; ++k) {
            const int first = 1 + (k - 1) * g;
            for (int v = first; v < first + g; ++v)
                QCOMPARE(order.rankOf(v) % groups, (root + k) % groups);
            QVERIFY(!order.spansGroups(first, g));
            QVERIFY(order.spansGroups(first, g + 1));
        }
        for (int v = 1 + (groups - 1) * g; v < size; ++v)
            QCOMPARE(order.rankOf(v) % groups, root % groups);
        QCOMPARE(order.spansGroups(0, size), groups > 1);
    }
}

void TestCpuOrder::servedPerCpuEveryRankGetsItOnce_data()
{
    addShapes();
}

// The root serves its range per CPU; a node given a range of one CPU serves
// it serially, one given several CPUs' ranks per CPU again.
void TestCpuOrder::servedPerCpuEveryRankGetsItOnce()
{
    QFETCH(int, size);
    QFETCH(int, groups);
    for (int root = 0; root < size; ++root) {
        const CpuOrder order(root, size, groups);
        QList<int> got(size, 0);
        got[root] = 1;
        int rootSends = 0;
        struct Range { int vrank; int length; };
        QList<Range> todo{{0, size}};
        while (!todo.isEmpty()) {
            const Range range = todo.takeLast();
            const QList<Delegation> sends = order.perGroupDelegations(range.vrank, range.length);
            if (range.vrank == 0)
                rootSends = int(sends.size());
            for (const Delegation &d : sends) {
                QVERIFY(d.offset >= 1 && d.length >= 1 && d.offset + d.length <= range.length);
                const int child = range.vrank + d.offset;
                // A child on the sender's CPU gets no range to forward
                if (order.rankOf(child) % groups == order.rankOf(range.vrank) % groups)
                    QCOMPARE(d.length, 1);
                ++got[order.rankOf(child)];
                todo.append({child, d.length});
            }
        }
        QCOMPARE(got, QList<int>(size, 1));
        // The root sends once per other CPU and once per rank of its own
        QCOMPARE(rootSends, (groups - 1) + (size / groups - 1));
    }
}

QTEST_APPLESS_MAIN(TestCpuOrder)
#include "tst_cpuorder.moc"
