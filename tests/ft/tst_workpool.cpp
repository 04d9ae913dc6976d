// WorkPool in one process: a manager and three workers compute every item
// once, the results equal a serial run, progress is reported, a late
// duplicate result is ignored, a manager that computes too shares the items
// (and alone does them all), and an empty pool finishes at once. Losing
// workers is tested with real processes (tests/tools/tst_mmpirun_ft).
#include "commworld.h"

#include <mmpi/ft/workpool.h>

#include <QCryptographicHash>
#include <QSignalSpy>
#include <QTest>

using namespace mmpi;
using mmpi::test::CommWorld;

namespace {

constexpr int Patience = 20000;

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

} // namespace

class TestWorkPool : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void everyItemOnceAndTheSerialResult()
    {
        CommWorld w(QStringLiteral("local"), 4);
        QVERIFY(w.formed());
        std::vector<std::unique_ptr<WorkPool>> pools;
        for (int r = 0; r < 4; ++r)
            pools.push_back(std::make_unique<WorkPool>(w.world(r), w[r]));
        QSignalSpy finished(pools[0].get(), &WorkPool::finished);
        QSignalSpy progress(pools[0].get(), &WorkPool::progressChanged);
        const QList<QByteArray> items = itemsOf(200);
        pools[0]->manage(items);
        std::vector<QCoro::Task<WorkPool::Outcome>> workers;
        for (int r = 1; r < 4; ++r)
            workers.push_back(pools[r]->work(compute));

        QVERIFY(finished.wait(Patience) || finished.size() == 1);
        QCOMPARE(pools[0]->done(), 200);
        QCOMPARE(progress.size(), 200);
        QCOMPARE(progress.last().at(0).toLongLong(), 200);
        for (int i = 0; i < items.size(); ++i)
            QCOMPARE(pools[0]->results().at(i), compute(i, items.at(i)));
        qint64 computed = 0;
        for (auto &task : workers) {
            const auto outcome = QCoro::waitFor(task);
            QVERIFY2(!outcome.error.isError(), qPrintable(outcome.error.message));
            computed += outcome.computed;
        }
        QCOMPARE(computed, 200); // no item twice: nobody was lost
        qint64 byWorker = 0;
        for (qint64 n : pools[0]->resultsByWorker())
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
        QVERIFY(!QCoro::waitFor(task).error.isError());
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
        std::vector<std::unique_ptr<WorkPool>> pools;
        for (int r = 0; r < 3; ++r)
            pools.push_back(std::make_unique<WorkPool>(w.world(r), w[r]));
        pools[0]->setLocalCompute(compute);
        QSignalSpy finished(pools[0].get(), &WorkPool::finished);
        const QList<QByteArray> items = itemsOf(120);
        pools[0]->manage(items);
        std::vector<QCoro::Task<WorkPool::Outcome>> workers;
        for (int r = 1; r < 3; ++r)
            workers.push_back(pools[r]->work(compute));
        QVERIFY(finished.wait(Patience) || finished.size() == 1);
        for (int i = 0; i < items.size(); ++i)
            QCOMPARE(pools[0]->results().at(i), compute(i, items.at(i)));
        qint64 byWorkers = 0;
        for (auto &task : workers) {
            const auto outcome = QCoro::waitFor(task);
            QVERIFY2(!outcome.error.isError(), qPrintable(outcome.error.message));
            byWorkers += outcome.computed;
        }
        // The manager took the first item before any worker asked, and every
        // item was computed once.
        const auto counts = pools[0]->resultsByWorker();
        QVERIFY(counts.value(0) >= 1);
        QCOMPARE(counts.value(0) + byWorkers, 120);
    }

    void managerAloneComputesEverything()
    {
        CommWorld w(QStringLiteral("local"), 1);
        QVERIFY(w.formed());
        WorkPool pool(w.world(0), w[0]);
        pool.setLocalCompute(compute);
        QSignalSpy finished(&pool, &WorkPool::finished);
        pool.manage(itemsOf(10));
        QVERIFY(finished.wait(Patience) || finished.size() == 1);
        QCOMPARE(pool.resultsByWorker().value(0), 10);
        QCOMPARE(pool.results().at(9), compute(9, itemsOf(10).at(9)));
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
        const auto outcome = QCoro::waitFor(worker.work(compute));
        QVERIFY(!outcome.error.isError());
        QCOMPARE(outcome.computed, 0);
    }
};

QTEST_GUILESS_MAIN(TestWorkPool)
#include "tst_workpool.moc"
