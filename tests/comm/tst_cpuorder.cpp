// CpuOrder: where ranks share CPUs and mmpirun bound each to one (rank r on
// CPU r mod c), a broadcast counts them by CPU from its root, so that each
// CPU's ranks form one range; served per CPU, every rank gets the message
// exactly once, each other CPU's ranks through one of them.
#include "cpuorder.h"

#include <QTest>

#include <set>

using namespace mmpi;
using namespace mmpi::detail;

class TestCpuOrder : public QObject
{
    Q_OBJECT
private slots:
    void unboundOrOneCpuIsPlain();
    void ordersAreBijectionsStartingAtTheRoot_data();
    void ordersAreBijectionsStartingAtTheRoot();
    void eachCpuIsOneRange_data();
    void eachCpuIsOneRange();
    void servedPerCpuEveryRankGetsItOnce_data();
    void servedPerCpuEveryRankGetsItOnce();
};

namespace {

// The CPU of each rank of a communicator of world ranks `members`, bound
// as mmpirun binds them (world rank w on CPU w mod `cpus`).
QList<int> cpusOf(const QList<int> &members, int cpus)
{
    QList<int> of;
    for (int w : members)
        of.append(w % cpus);
    return of;
}

CpuOrder orderFrom(int root, const QList<int> &cpus)
{
    return CpuOrder(root, CpuOrder::Cpus(cpus.cbegin(), cpus.cend()));
}

QList<int> upTo(int n)
{
    QList<int> ranks;
    for (int r = 0; r < n; ++r)
        ranks.append(r);
    return ranks;
}

void addShapes()
{
    QTest::addColumn<QList<int>>("cpus"); // of each rank
    QTest::addColumn<int>("mostPerCpu");
    for (auto [n, c] : {std::pair{4, 2}, {6, 2}, {8, 2}, {6, 3}, {12, 4}, {16, 2}})
        QTest::addRow("%d ranks, %d CPUs", n, c) << cpusOf(upTo(n), c) << n / c;
    QTest::addRow("5 ranks, not bound: plain") << QList<int>(5, -1) << 5;
    // World ranks 1, 2, 3, 5, 6 of 8 on 2 CPUs: 3 on CPU 1, 2 on CPU 0
    QTest::addRow("a communicator of 5 of 8 ranks") << cpusOf({1, 2, 3, 5, 6}, 2) << 3;
    QTest::addRow("the even ranks of 8: one CPU") << cpusOf({0, 2, 4, 6}, 2) << 4;
}

} // namespace

// Ranks not bound (CPU -1) or all on one CPU are counted from the root on.
void TestCpuOrder::unboundOrOneCpuIsPlain()
{
    for (const QList<int> &cpus : {QList<int>(6, -1), QList<int>(6, 1)}) {
        const CpuOrder order = orderFrom(4, cpus);
        QCOMPARE(order.cpus(), 1);
        QCOMPARE(order.mostPerCpu(), 6);
        for (int v = 0; v < 6; ++v)
            QCOMPARE(order.rankOf(v), (4 + v) % 6);
        QVERIFY(!order.spansCpus(0, 6));
    }
}

void TestCpuOrder::ordersAreBijectionsStartingAtTheRoot_data()
{
    addShapes();
}

void TestCpuOrder::ordersAreBijectionsStartingAtTheRoot()
{
    QFETCH(QList<int>, cpus);
    QFETCH(int, mostPerCpu);
    const int n = int(cpus.size());
    for (int root = 0; root < n; ++root) {
        const CpuOrder order = orderFrom(root, cpus);
        QCOMPARE(order.rankOf(0), root);
        QCOMPARE(order.mostPerCpu(), mostPerCpu);
        std::set<int> seen;
        for (int v = 0; v < n; ++v) {
            const int r = order.rankOf(v);
            QVERIFY2(r >= 0 && r < n, qPrintable(QStringLiteral("root %1, vrank %2: rank %3").arg(root).arg(v).arg(r)));
            QCOMPARE(order.vrankOf(r), v);
            seen.insert(r);
        }
        QCOMPARE(int(seen.size()), n);
    }
}

void TestCpuOrder::eachCpuIsOneRange_data()
{
    addShapes();
}

// Counted from the root: the other CPUs' ranks, one CPU after the other,
// then the rest of the root's own CPU.
void TestCpuOrder::eachCpuIsOneRange()
{
    QFETCH(QList<int>, cpus);
    const int n = int(cpus.size());
    for (int root = 0; root < n; ++root) {
        const CpuOrder order = orderFrom(root, cpus);
        std::set<int> finished;
        int previous = cpus.at(order.rankOf(1 % n));
        for (int v = 2; v < n; ++v) {
            const int cpu = cpus.at(order.rankOf(v));
            if (cpu != previous) {
                QVERIFY2(!finished.count(cpu), qPrintable(QStringLiteral("root %1: CPU %2 comes back at vrank %3").arg(root).arg(cpu).arg(v)));
                finished.insert(previous);
                previous = cpu;
            }
        }
        if (n > 1 && order.cpus() > 1)
            QCOMPARE(cpus.at(order.rankOf(n - 1)), cpus.at(root)); // the root's CPU last
        QCOMPARE(order.spansCpus(0, n), std::set<int>(cpus.cbegin(), cpus.cend()).size() > 1);
    }
}

void TestCpuOrder::servedPerCpuEveryRankGetsItOnce_data()
{
    addShapes();
}

// The root serves its range per CPU, and so does every node it hands a
// range to (a range of one CPU's ranks: serially).
void TestCpuOrder::servedPerCpuEveryRankGetsItOnce()
{
    QFETCH(QList<int>, cpus);
    const int n = int(cpus.size());
    const int cpuCount = int(std::set<int>(cpus.cbegin(), cpus.cend()).size());
    for (int root = 0; root < n; ++root) {
        const CpuOrder order = orderFrom(root, cpus);
        QCOMPARE(order.cpus(), cpuCount);
        QList<int> got(n, 0);
        got[root] = 1;
        int rootSends = 0;
        struct Range { int vrank; int length; };
        QList<Range> todo{{0, n}};
        while (!todo.isEmpty()) {
            const Range range = todo.takeLast();
            const QList<Delegation> sends = order.perCpuDelegations(range.vrank, range.length);
            if (range.vrank == 0)
                rootSends = int(sends.size());
            const int senderCpu = cpus.at(order.rankOf(range.vrank));
            for (const Delegation &d : sends) {
                QVERIFY(d.offset >= 1 && d.length >= 1 && d.offset + d.length <= range.length);
                const int child = range.vrank + d.offset;
                // A child on the sender's CPU gets no range; one elsewhere gets its CPU's ranks only
                if (cpus.at(order.rankOf(child)) == senderCpu)
                    QCOMPARE(d.length, 1);
                QVERIFY(!order.spansCpus(child, d.length));
                ++got[order.rankOf(child)];
                todo.append({child, d.length});
            }
        }
        QCOMPARE(got, QList<int>(n, 1));
        // The root sends once per other CPU and once per other rank on its own
        const int onRootCpu = int(std::count(cpus.cbegin(), cpus.cend(), cpus.at(root)));
        QCOMPARE(rootSends, (cpuCount - 1) + (onRootCpu - 1));
    }
}

QTEST_APPLESS_MAIN(TestCpuOrder)
#include "tst_cpuorder.moc"
