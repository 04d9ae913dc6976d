// AdaptiveSpin: a thread's spin grows to cover waits that end soon after it
// would have gone to sleep, never past its most; waits longer than that
// bring it back towards the configured base; a base of 0 never spins.
#include <mmpi/world/adaptivespin.h>

#include <QTest>

using namespace mmpi;
using us = std::chrono::microseconds;

class TestAdaptiveSpin : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void startsAtTheBase()
    {
        AdaptiveSpin spin;
        spin.configure(us(50), us(1000));
        QCOMPARE(spin.budget(), us(50));
        QVERIFY(spin.isConfiguredFor(us(50), us(1000)));
        QVERIFY(!spin.isConfiguredFor(us(50), us(999)));
    }

    void waitsWithinTheBudgetChangeNothing()
    {
        AdaptiveSpin spin;
        spin.configure(us(50), us(1000));
        for (int i = 0; i < 10; ++i)
            spin.record(us(i * 5));
        QCOMPARE(spin.budget(), us(50));
    }

    void aWaitJustPastTheBudgetIsCoveredNextTime()
    {
        AdaptiveSpin spin;
        spin.configure(us(50), us(1000));
        spin.record(us(120));
        QCOMPARE(spin.budget(), us(240));
        spin.record(us(200)); // within: kept
        QCOMPARE(spin.budget(), us(240));
        spin.record(us(700)); // at most the most
        QCOMPARE(spin.budget(), us(1000));
    }

    void longWaitsBringItBackToTheBase()
    {
        AdaptiveSpin spin;
        spin.configure(us(50), us(1000));
        spin.record(us(900));
        QCOMPARE(spin.budget(), us(1000));
        QList<us> seen;
        for (int i = 0; i < 6; ++i) {
            spin.record(us(20000));
            seen << spin.budget();
        }
        QCOMPARE(seen, (QList<us>{us(500), us(250), us(125), us(62), us(50), us(50)}));
    }

    void zeroBaseNeverSpins()
    {
        AdaptiveSpin spin;
        spin.configure(us(0), us(1000));
        spin.record(us(100));
        QCOMPARE(spin.budget(), us(0));
    }

    void mostBelowTheBaseMeansNoGrowth()
    {
        AdaptiveSpin spin;
        spin.configure(us(50), us(10));
        spin.record(us(60));
        QCOMPARE(spin.budget(), us(50));
    }

    void configureStartsAgain()
    {
        AdaptiveSpin spin;
        spin.configure(us(50), us(1000));
        spin.record(us(400));
        QCOMPARE(spin.budget(), us(800));
        spin.configure(us(30), us(1000));
        QCOMPARE(spin.budget(), us(30));
    }
};

QTEST_GUILESS_MAIN(TestAdaptiveSpin)
#include "tst_adaptivespin.moc"
