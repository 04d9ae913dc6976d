// A QML app that quits normally leaves its world cleanly: under mmpirun,
// three qml_quitnode processes form a world and rank 1 quits its app (no
// close() anywhere); ranks 0 and 2 see rank 1 leave (nodeLeft), not become
// unreachable or lost.
#include "processrun.h"

#include <QTest>

using namespace mmpi::test;
using namespace Qt::StringLiterals;

class TestQmlQuit : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void quittingAppLeavesCleanly()
    {
        const ProcessRun run = runMmpirun({u"-n"_s, u"3"_s, u"--timeout"_s, u"90"_s, QStringLiteral(QUITNODE_PATH)},
                                          {.timeoutMs = 120000});
        QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
        QVERIFY2(run.err.contains(u"[1] qml: rank 1 quits"_s), qPrintable(run.dump()));
        for (int rank : {0, 2})
            QVERIFY2(run.err.contains(u"[%1] qml: rank 1 left"_s.arg(rank)), qPrintable(run.dump()));
        QVERIFY2(!run.err.contains(u"unreachable"_s) && !run.err.contains(u"lost"_s), qPrintable(run.dump()));
    }
};

QTEST_GUILESS_MAIN(TestQmlQuit)
#include "tst_qmlquit.moc"
