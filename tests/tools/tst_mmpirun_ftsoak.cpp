// The overlapping-failure REBUILD of tst_mmpirun_ft, many times per delay
// (label soak, not in the default run: ctest -L soak): ranks 2 and 3, then
// ranks 0 and 1, killed 5, 50 and 200 ms apart, MMPI_SOAK_RUNS times each
// (default 20). Prints a table of the runs that ended with the failure-free
// totals on every rank; any other run fails the test with its output.
#include "overlappingfailures.h"

#include <QDir>
#include <QFile>
#include <QTest>

using namespace mmpi::test;
using namespace Qt::StringLiterals;

class TestMmpirunFtSoak : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void rebuildAfterTwoKills_data()
    {
        QTest::addColumn<int>("first");
        QTest::addColumn<int>("second");
        QTest::addColumn<int>("gap");
        for (const auto &[first, second] : {std::pair{2, 3}, std::pair{0, 1}})
            for (int gap : {5, 50, 200})
                QTest::addRow("%d then %d, %d ms", first, second, gap) << first << second << gap;
    }

    void rebuildAfterTwoKills()
    {
        QFETCH(int, first);
        QFETCH(int, second);
        QFETCH(int, gap);
        const int runs = qEnvironmentVariableIntValue("MMPI_SOAK_RUNS") > 0
            ? qEnvironmentVariableIntValue("MMPI_SOAK_RUNS") : 20;
        int good = 0;
        QString firstFailure;
        for (int run = 0; run < runs; ++run) {
            QTemporaryDir home;
            const ProcessRun r = runRebuildWithTwoKills(first, second, gap, home.path());
            const QString problem = rebuildProblem(r, first, second);
            if (problem.isEmpty()) {
                ++good;
                continue;
            }
            // Whole, in a file: a test message this long would be cut.
            const QString log = QDir::current().filePath(
                u"tst_mmpirun_ftsoak-%1-%2-%3ms-run%4.log"_s.arg(first).arg(second).arg(gap).arg(run + 1));
            QFile out(log);
            if (out.open(QIODevice::WriteOnly))
                out.write(r.dump().toUtf8());
            qWarning().noquote() << u"run %1: %2 (output in %3)"_s.arg(run + 1).arg(problem, log);
            if (firstFailure.isEmpty())
                firstFailure = u"run %1: %2 (output in %3)"_s.arg(run + 1).arg(problem, log);
        }
        qInfo().noquote() << u"| ranks %1 then %2 | %3 ms apart | %4 of %5 runs with the failure-free totals |"_s
                                 .arg(first).arg(second).arg(gap).arg(good).arg(runs);
        QVERIFY2(good == runs, qPrintable(firstFailure));
    }
};

QTEST_GUILESS_MAIN(TestMmpirunFtSoak)
#include "tst_mmpirun_ftsoak.moc"
