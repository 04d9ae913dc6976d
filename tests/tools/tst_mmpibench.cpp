// mmpi-bench pingpong and the collectives' --per-rank under the real mmpirun,
// and the raw-tcp baseline: the JSON they print is the contract of
// bench/pingpong.sh and bench/collectives.sh.
#include "processrun.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>
#include <QTest>
#include <QThread>

using namespace mmpi::test;

namespace {

// The larger size of the runs: fragmented (above the 512 KiB chunks of
// local and tcp).
constexpr int LargeSize = 600000;
const QString Sizes = QStringLiteral("1,%1").arg(LargeSize);

// What is wrong with the "results" of a run of sizes 1 and LargeSize, 20
// round trips each, or an empty string.
QString resultsProblem(const QJsonObject &json)
{
    const QJsonArray results = json.value(QLatin1String("results")).toArray();
    if (results.size() != 2 || results.at(1).toObject().value(QLatin1String("size")).toInt() != LargeSize)
        return QStringLiteral("not the two sizes asked for: %1").arg(QString::fromUtf8(QJsonDocument(json).toJson()));
    for (const auto &r : results) {
        const QJsonObject o = r.toObject();
        const double min = o.value(QLatin1String("min_us")).toDouble();
        const double median = o.value(QLatin1String("median_us")).toDouble();
        const double max = o.value(QLatin1String("max_us")).toDouble();
        if (o.value(QLatin1String("iterations")).toInt() != 20 || min <= 0 || min > median || median > max
            || o.value(QLatin1String("mbps")).toDouble() <= 0)
            return QStringLiteral("implausible result: %1")
                .arg(QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)));
    }
    return QString();
}

} // namespace

class TestMmpiBench : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void pingpongJson_data();
    void pingpongJson();
    void refusesWrongWorldSize();
    void collectivePerRankJson_data();
    void collectivePerRankJson();
    void perRankRefusesMoreThanItKeeps();
    void rawBaselineJson_data();
    void rawBaselineJson();
    void spinningRawBaselineNeedsTwoCpus();
};

void TestMmpiBench::pingpongJson_data()
{
    QTest::addColumn<QString>("transport");
    QTest::addColumn<QString>("messages"); // mmpi-bench's flag for the kind of message, or none
    QTest::addColumn<QStringList>("link");
    QTest::newRow("local") << QStringLiteral("local") << QString() << QStringList();
    QTest::newRow("tcp") << QStringLiteral("tcp") << QString() << QStringList();
    QTest::newRow("tcp, QByteArray messages") << QStringLiteral("tcp") << QStringLiteral("--qbytearray")
                                              << QStringList();
    QTest::newRow("tcp, doubles") << QStringLiteral("tcp") << QStringLiteral("--doubles") << QStringList();
    // A byte per 20 ms round trip is 0.0001 MB/s one way: still a positive number
    QTest::newRow("sim, slow link") << QStringLiteral("sim") << QString()
                                    << QStringList{QStringLiteral("--link"), QStringLiteral("ideal"),
                                                   QStringLiteral("--link-latency"), QStringLiteral("10")};
}

void TestMmpiBench::pingpongJson()
{
    QFETCH(QString, transport);
    QFETCH(QString, messages);
    QFETCH(QStringList, link);
    // Given two ranks and a size that is fragmented
    QStringList arguments{QStringLiteral("-n"), QStringLiteral("2"), QStringLiteral("--transport"), transport};
    arguments << link
              << QStringList{QStringLiteral("--timeout"), QStringLiteral("120"), QStringLiteral("--"),
                             QStringLiteral(MMPI_BENCH_PATH), QStringLiteral("pingpong"), QStringLiteral("--sizes"),
                             Sizes, QStringLiteral("--iterations"), QStringLiteral("20"),
                             QStringLiteral("--json")};
    if (!messages.isEmpty())
        arguments << messages;
    const ProcessRun run = runMmpirun(arguments, {.timeoutMs = 180000});
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    // Then rank 0 prints one JSON object of the documented shape
    const QString line = run.out.trimmed();
    QVERIFY2(line.startsWith(QLatin1String("[0] ")), qPrintable(line));
    const QJsonObject json = QJsonDocument::fromJson(line.mid(4).toUtf8()).object();
    QCOMPARE(json.value(QLatin1String("op")).toString(), QStringLiteral("pingpong"));
    QCOMPARE(json.value(QLatin1String("transport")).toString(), transport);
    QCOMPARE(json.value(QLatin1String("ranks")).toInt(), 2);
    const QString problem = resultsProblem(json);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
}

void TestMmpiBench::refusesWrongWorldSize()
{
    const ProcessRun run = runMmpirun({QStringLiteral("-n"), QStringLiteral("3"), QStringLiteral("--"),
                                       QStringLiteral(MMPI_BENCH_PATH), QStringLiteral("pingpong")});
    QVERIFY(run.finished);
    QVERIFY(run.exitCode != 0);
    QVERIFY(run.err.contains(QLatin1String("exactly 2 ranks")));
}

void TestMmpiBench::collectivePerRankJson_data()
{
    QTest::addColumn<QString>("op");
    QTest::addColumn<bool>("perRank");
    // bcast starts at the root's start, the others at the last rank's start
    QTest::newRow("bcast") << QStringLiteral("bcast") << true;
    QTest::newRow("allreduce") << QStringLiteral("allreduce") << true;
    QTest::newRow("bcast without --per-rank") << QStringLiteral("bcast") << false;
}

void TestMmpiBench::collectivePerRankJson()
{
    QFETCH(QString, op);
    QFETCH(bool, perRank);
    constexpr int Ranks = 3;
    constexpr int Calls = 30;
    // Given three ranks timing 30 calls, asked for per-rank figures or not
    QStringList arguments{QStringLiteral("-n"), QString::number(Ranks), QStringLiteral("--transport"),
                          QStringLiteral("local"), QStringLiteral("--timeout"), QStringLiteral("120"),
                          QStringLiteral("--"), QStringLiteral(MMPI_BENCH_PATH), op, QStringLiteral("--sizes"),
                          QStringLiteral("16"), QStringLiteral("--iterations"), QString::number(Calls),
                          QStringLiteral("--json")};
    if (perRank)
        arguments << QStringLiteral("--per-rank");
    const ProcessRun run = runMmpirun(arguments, {.timeoutMs = 180000});
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    const QString line = run.out.trimmed();
    QVERIFY2(line.startsWith(QLatin1String("[0] ")), qPrintable(line));
    const QJsonObject row = QJsonDocument::fromJson(line.mid(4).toUtf8())
                                .object().value(QLatin1String("results")).toArray().at(0).toObject();
    QCOMPARE(row.value(QLatin1String("iterations")).toInt(), Calls);
    const QJsonArray ranks = row.value(QLatin1String("per_rank")).toArray();
    if (!perRank) {
        QVERIFY2(!row.contains(QLatin1String("per_rank")), qPrintable(line));
        return;
    }
    // Then every rank has its median end, none before the call's start nor
    // after the median of the last ends, and each call had one last rank
    QCOMPARE(ranks.size(), Ranks);
    const double median = row.value(QLatin1String("median_us")).toDouble();
    int lastCalls = 0;
    for (int r = 0; r < Ranks; ++r) {
        const QJsonObject mine = ranks.at(r).toObject();
        QCOMPARE(mine.value(QLatin1String("rank")).toInt(), r);
        const double end = mine.value(QLatin1String("median_us")).toDouble(-1);
        QVERIFY2(end >= 0 && end <= median, qPrintable(line));
        lastCalls += mine.value(QLatin1String("last")).toInt();
    }
    QCOMPARE(lastCalls, Calls);
}

void TestMmpiBench::perRankRefusesMoreThanItKeeps()
{
    // 64 Mi one-byte calls by 2 ranks are more values than --per-rank keeps:
    // every rank stops before the first call, none waits for another
    const ProcessRun run = runMmpirun({QStringLiteral("-n"), QStringLiteral("2"), QStringLiteral("--transport"),
                                       QStringLiteral("local"), QStringLiteral("--timeout"), QStringLiteral("60"),
                                       QStringLiteral("--"), QStringLiteral(MMPI_BENCH_PATH), QStringLiteral("bcast"),
                                       QStringLiteral("--sizes"), QStringLiteral("1"), QStringLiteral("--iterations"),
                                       QStringLiteral("100000000"), QStringLiteral("--per-rank")},
                                      {.timeoutMs = 90000});
    QVERIFY(run.finished);
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains(QLatin1String("--per-rank keeps at most")), qPrintable(run.dump()));
    QVERIFY2(run.out.trimmed().isEmpty(), qPrintable(run.dump()));
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
    QStringList arguments{QStringLiteral("--sizes"), Sizes, QStringLiteral("--iterations"),
                          QStringLiteral("20"), QStringLiteral("--json")};
    if (spin)
        arguments.prepend(QStringLiteral("--spin"));
    const ProcessRun run = runProcess(QStringLiteral(RAW_PINGPONG_PATH), arguments);
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    const QJsonObject json = QJsonDocument::fromJson(run.out.trimmed().toUtf8()).object();
    QCOMPARE(json.value(QLatin1String("transport")).toString(),
             spin ? QStringLiteral("raw-tcp spin") : QStringLiteral("raw-tcp"));
    const QString problem = resultsProblem(json);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
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
