// The coroutine tests' harness (tests/common/coroutinetest.h): finish()
// returns what the coroutine returns, and a coroutine that never finishes
// ends the test program with the line that waited, instead of hanging it.
#include "coroutinetest.h"
#include "processrun.h"

#include <QCoroTimer>
#include <QCoreApplication>
#include <QTest>

#include <cstdio>
#include <cstdlib>

using namespace std::chrono_literals;
using namespace mmpi::test;

namespace {

QCoro::Task<int> answerLater()
{
    co_await QCoro::sleepFor(20ms);
    co_return 42;
}

QCoro::Task<> sleepForever()
{
    co_await QCoro::sleepFor(24h);
}

// Run as a child (MMPI_TEST_HANG set): waits for a coroutine that hangs.
[[noreturn]] void hang()
{
    finish(sleepForever(), 300ms);
    std::printf("finish() returned\n");
    std::exit(0);
}

} // namespace

class TestCoroutineTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void finishReturnsTheResult()
    {
        QCOMPARE(finish(answerLater()), 42);
        auto task = answerLater();
        QCOMPARE(finish(task), 42);
    }

    void aHangFailsSayingWhere()
    {
        RunOptions options;
        options.environment = systemEnvironmentWith({{QStringLiteral("MMPI_TEST_HANG"), QStringLiteral("1")}});
        options.timeoutMs = 30000;
        const ProcessRun run = runProcess(QCoreApplication::applicationFilePath(), {}, options);
        QVERIFY2(run.finished, qPrintable(run.dump()));
        QVERIFY2(run.exitCode != 0, qPrintable(run.dump()));
        QVERIFY2(!run.out.contains(QStringLiteral("finish() returned")), qPrintable(run.dump()));
        QVERIFY2(run.err.contains(QStringLiteral("tst_coroutinetest.cpp:")), qPrintable(run.dump()));
        QVERIFY2(run.err.contains(QStringLiteral("did not finish within 300 ms")), qPrintable(run.dump()));
        // Well before the coroutine itself would have ended.
        QVERIFY2(run.elapsedMs < 20000, qPrintable(run.dump()));
    }
};

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    if (qEnvironmentVariableIsSet("MMPI_TEST_HANG"))
        hang();
    TestCoroutineTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_coroutinetest.moc"
