// mmpi-bench pingpong under the real mmpirun, and the raw-tcp baseline: the
// JSON they print is the contract of bench/pingpong.sh.
#include "processrun.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>
#include <QTest>
#include <QThread>

using namespace mmpi::test;

class TestMmpiBench : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void pingpongJson_data();
    void pingpongJson();
    void refusesWrongWorldSize();
    void rawBaselineJson_data();
    void rawBaselineJson();
    void spinningRawBaselineNeedsTwoCpus();
};

void TestMmpiBench::pingpongJson_data()
{
    QTest::addColumn<QString>("transport");
    QTest::addColumn<bool>("shared");
    QTest::newRow("local") << QStringLiteral("local") << false;
    QTest::newRow("tcp") << QStringLiteral("tcp") << false;
    QTest::newRow("tcp, QByteArray messages") << QStringLiteral("tcp") << true;
}

void TestMmpiBench::pingpongJson()
{
    QFETCH(QString, transport);
    QFETCH(bool, shared);
    // Given two ranks and a size that is fragmented (above the 64 KiB and
    // 256 KiB chunks of local and tcp)
    QStringList arguments{QStringLiteral("-n"), QStringLiteral("2"), QStringLiteral("--transport"), transport,
                          QStringLiteral("--timeout"), QStringLiteral("120"), QStringLiteral("--"),
                          QStringLiteral(MMPI_BENCH_PATH), QStringLiteral("pingpong"), QStringLiteral("--sizes"),
                          QStringLiteral("1,300000"), QStringLiteral("--iterations"), QStringLiteral("20"),
                          QStringLiteral("--json")};
    if (shared)
        arguments << QStringLiteral("--qbytearray");
    const ProcessRun run = runMmpirun(arguments, {.timeoutMs = 180000});
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    // Then rank 0 prints one JSON object of the documented shape
    const QString line = run.out.trimmed();
    QVERIFY2(line.startsWith(QLatin1String("[0] ")), qPrintable(line));
    const QJsonObject json = QJsonDocument::fromJson(line.mid(4).toUtf8()).object();
    QCOMPARE(json.value(QLatin1String("op")).toString(), QStringLiteral("pingpong"));
    QCOMPARE(json.value(QLatin1String("transport")).toString(), transport);
    QCOMPARE(json.value(QLatin1String("ranks")).toInt(), 2);
    const QJsonArray results = json.value(QLatin1String("results")).toArray();
    QCOMPARE(results.size(), 2);
    QCOMPARE(results.at(1).toObject().value(QLatin1String("size")).toInt(), 300000);
    for (const auto &r : results) {
        const QJsonObject o = r.toObject();
        QCOMPARE(o.value(QLatin1String("iterations")).toInt(), 20);
        QVERIFY(o.value(QLatin1String("min_us")).toDouble() > 0);
        QVERIFY(o.value(QLatin1String("min_us")).toDouble() <= o.value(QLatin1String("median_us")).toDouble());
        QVERIFY(o.value(QLatin1String("median_us")).toDouble() <= o.value(QLatin1String("max_us")).toDouble());
        QVERIFY(o.value(QLatin1String("mbps")).toDouble() > 0);
    }
}

void TestMmpiBench::refusesWrongWorldSize()
{
    const ProcessRun run = runMmpirun({QStringLiteral("-n"), QStringLiteral("3"), QStringLiteral("--"),
                                       QStringLiteral(MMPI_BENCH_PATH), QStringLiteral("pingpong")});
    QVERIFY(run.finished);
    QVERIFY(run.exitCode != 0);
    QVERIFY(run.err.contains(QLatin1String("exactly 2 ranks")));
}

void TestMmpiBench::rawBaselineJson_data()
{
    QTest::addColumn<bool>("spin");
    QTest::newRow("blocking") << false;
    QTest::newRow("busy-polling on two CPUs") << true;
}

void TestMmpiBench::rawBaselineJson()
{
    QFETCH(bool, spin);
    if (spin && QThread::idealThreadCount() < 2)
        QSKIP("busy-polling needs two CPUs");
    QStringList arguments{QStringLiteral("--sizes"), QStringLiteral("1,300000"), QStringLiteral("--iterations"),
                          QStringLiteral("20"), QStringLiteral("--json")};
    if (spin)
        arguments.prepend(QStringLiteral("--spin"));
    const ProcessRun run = runProcess(QStringLiteral(RAW_PINGPONG_PATH), arguments);
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    const QJsonObject json = QJsonDocument::fromJson(run.out.trimmed().toUtf8()).object();
    QCOMPARE(json.value(QLatin1String("transport")).toString(),
             spin ? QStringLiteral("raw-tcp spin") : QStringLiteral("raw-tcp"));
    const QJsonArray results = json.value(QLatin1String("results")).toArray();
    QCOMPARE(results.size(), 2);
    QCOMPARE(results.at(1).toObject().value(QLatin1String("size")).toInt(), 300000);
    for (const auto &r : results) {
        const QJsonObject o = r.toObject();
        QCOMPARE(o.value(QLatin1String("iterations")).toInt(), 20);
        QVERIFY(o.value(QLatin1String("min_us")).toDouble() > 0);
        QVERIFY(o.value(QLatin1String("min_us")).toDouble() <= o.value(QLatin1String("median_us")).toDouble());
    }
}

// Two processes spinning on one CPU would measure the scheduler, not TCP.
void TestMmpiBench::spinningRawBaselineNeedsTwoCpus()
{
    if (QStandardPaths::findExecutable(QStringLiteral("taskset")).isEmpty())
        QSKIP("taskset (util-linux) is not installed");
    const ProcessRun run = runProcess(QStringLiteral("taskset"),
                                      {QStringLiteral("-c"), QStringLiteral("0"), QStringLiteral(RAW_PINGPONG_PATH),
                                       QStringLiteral("--spin"), QStringLiteral("--sizes"), QStringLiteral("1"),
                                       QStringLiteral("--iterations"), QStringLiteral("20")},
                                      {.timeoutMs = 30000});
    QVERIFY(run.finished);
    QVERIFY(run.exitCode != 0);
    QVERIFY2(run.err.contains(QLatin1String("--spin needs two CPUs")), qPrintable(run.dump()));
}

QTEST_GUILESS_MAIN(TestMmpiBench)
#include "tst_mmpibench.moc"
