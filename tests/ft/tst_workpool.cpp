// WorkPool in one process: a manager and three workers compute every item
// once, the results equal a serial run, progress is reported, a late
// duplicate result is ignored, a manager that computes too shares the items
// (and alone does them all), and an empty pool finishes at once. Losing
// workers is tested with real processes (tests/tools/tst_mmpirun_ft).
#include "coroutinetest.h"
#include "commworld.h"
#include "patience.h"

#include <mmpi/ft/workpool.h>

#include <QCryptographicHash>
#include <QSignalSpy>
#include <QTest>

using namespace mmpi;
using mmpi::test::CommWorld;
using mmpi::test::Patience;

namespace {

QByteArray compute(qint64 item, const QByteArray &data)
{
    return QCryptographicHash::hash(data + QByteArray::number(item), QCryptographicHash::Sha256);
}

QList<QByteArray> itemsOf(int n)
{
    QList<QByteArray> items;
    for (int i = 0; i < n; ++i)
        items << QByteArray("item ") + QByteArray::number(i * 7);
    return items;
}

// A pool on every rank of a world: rank 0 manages (computing too if asked),
// the others work.
struct PoolRun
{
    std::vector<std::unique_ptr<WorkPool>> pools;
    std::unique_ptr<QSignalSpy> finished;
    std::unique_ptr<QSignalSpy> progress;
    std::vector<QCoro::Task<WorkPool::Outcome>> workers;

    WorkPool &manager() { return *pools.front(); }
    // Waits for every worker: the items they computed, -1 if one failed.
    qint64 workersComputed()
    {
        qint64 computed = 0;
        for (auto &task : workers) {
            const auto outcome = mmpi::test::finish(task);
            if (outcome.error.isError()) {
                qWarning("a worker failed: %s", qPrintable(outcome.error.message));
                return -1;
            }
            computed += outcome.computed;
        }
        return computed;
    }
};

std::unique_ptr<PoolRun> startPool(const CommWorld &w, const QList<QByteArray> &items, bool managerComputes)
{
    auto run = std::make_unique<PoolRun>();
    for (int r = 0; r < w.size(); ++r)
        run->pools.push_back(std::make_unique<WorkPool>(w.world(r), w[r]));
    if (managerComputes)
        run->manager().setLocalCompute(compute);
    run->finished = std::make_unique<QSignalSpy>(&run->manager(), &WorkPool::finished);
    run->progress = std::make_unique<QSignalSpy>(&run->manager(), &WorkPool::progressChanged);
    run->manager().manage(items);
    for (int r = 1; r < w.size(); ++r)
        run->workers.push_back(run->pools[size_t(r)]->work(compute));
    return run;
}

} // namespace

class TestWorkPool : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void everyItemOnceAndTheSerialResult()
    {
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        const QList<QByteArray> items = itemsOf(200);
        const auto run = startPool(w, items, false);
        WorkPool &manager = run->manager();

        QVERIFY(run->finished->wait(Patience) || run->finished->size() == 1);
        QCOMPARE(manager.done(), 200);
        QCOMPARE(run->progress->size(), 200);
        QCOMPARE(run->progress->last().at(0).toLongLong(), 200);
        for (int i = 0; i < items.size(); ++i)
            QCOMPARE(manager.results().at(i), compute(i, items.at(i)));
        QCOMPARE(run->workersComputed(), 200); // no item twice: nobody was lost
        qint64 byWorker = 0;
        for (qint64 n : manager.resultsByWorker())
            byWorker += n;
        QCOMPARE(byWorker, 200);
    }

    void lateDuplicateIsIgnored()
    {
        CommWorld w(QStringLiteral("local"), 2);
        QVERIFY(w.formed());
        WorkPool manager(w.world(0), w[0]);
        WorkPool worker(w.world(1), w[1]);
        QSignalSpy finished(&manager, &WorkPool::finished);
        QSignalSpy results(&manager, &WorkPool::resultReady);
        manager.manage(itemsOf(3));
        auto task = worker.work(compute);
        QVERIFY(finished.wait(Patience) || finished.size() == 1);
        QVERIFY(!mmpi::test::finish(task).error.isError());
        // A result of item 1 again, different, as a worker thought lost
        // would send it late.
        QByteArray late(8, '\0');
        late[7] = 1;
        QVERIFY(w[1].send(0, WorkPool::DefaultTagBase + 3, late + QByteArray("forged")).wait());
        QTest::qWait(200);
        QCOMPARE(results.size(), 3);
        QCOMPARE(manager.results().at(1), compute(1, itemsOf(3).at(1)));
    }

    void managerComputesToo()
    {
        CommWorld w(QStringLiteral("local"), 3);
        QVERIFY(w.formed());
        const QList<QByteArray> items = itemsOf(120);
        const auto run = startPool(w, items, true);
        QVERIFY(run->finished->wait(Patience) || run->finished->size() == 1);
        for (int i = 0; i < items.size(); ++i)
            QCOMPARE(run->manager().results().at(i), compute(i, items.at(i)));
        const qint64 byWorkers = run->workersComputed();
        QVERIFY(byWorkers >= 0);
        // The manager took the first item before any worker asked, and every
        // item was computed once.
        const auto counts = run->manager().resultsByWorker();
        QVERIFY(counts.value(0) >= 1);
        QCOMPARE(counts.value(0) + byWorkers, 120);
    }

    void managerAloneComputesEverything()
    {
        CommWorld w(QStringLiteral("local"), 1);
        QVERIFY(w.formed());
        const auto run = startPool(w, itemsOf(10), true);
        QVERIFY(run->finished->wait(Patience) || run->finished->size() == 1);
        QCOMPARE(run->manager().resultsByWorker().value(0), 10);
        QCOMPARE(run->manager().results().at(9), compute(9, itemsOf(10).at(9)));
    }

    void emptyPoolFinishesAtOnce()
    {
        CommWorld w(QStringLiteral("local"), 2);
        QVERIFY(w.formed());
        WorkPool manager(w.world(0), w[0]);
        WorkPool worker(w.world(1), w[1]);
        QSignalSpy finished(&manager, &WorkPool::finished);
        manager.manage({});
        QCOMPARE(finished.size(), 1);
        const auto outcome = mmpi::test::finish(worker.work(compute));
        QVERIFY(!outcome.error.isError());
        QCOMPARE(outcome.computed, 0);
    }
};

QTEST_GUILESS_MAIN(TestWorkPool)
#include "tst_workpool.moc"
