// End to end: mmpirun starts real processes that form a world and pass a token
// around the ring; the table rank 0 prints proves every hop happened in order.
#include "processrun.h"

#include <QRegularExpression>
#include <QTest>

using namespace mmpi::test;

class TestRing : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void ring_data();
    void ring();
    void ringFailsClearlyOutsideMmpirun();
};

void TestRing::ring_data()
{
    QTest::addColumn<QString>("transport");
    QTest::addColumn<int>("size");
    for (const char *transport : {"local", "tcp"})
        for (int size : {1, 2, 4, 7})
            QTest::addRow("%s-%d", transport, size) << QString::fromLatin1(transport) << size;
}

void TestRing::ring()
{
    QFETCH(QString, transport);
    QFETCH(int, size);
    const int rounds = 2;
    const ProcessRun run = runMmpirun({QStringLiteral("-n"), QString::number(size), QStringLiteral("--transport"),
                                       transport, QStringLiteral("--timeout"), QStringLiteral("60"),
                                       QStringLiteral("--"), QStringLiteral(MMPI_RING_PATH), QStringLiteral("--rounds"),
                                       QString::number(rounds)},
                                      {.timeoutMs = 90000});
    QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
    qInfo("%d nodes over %s: %lld ms end to end", size, qPrintable(transport), run.elapsedMs);
    const QString &out = run.out;

    // Every hop of every round, in ring order, with the running token value.
    static const QRegularExpression hop(QStringLiteral(
        R"(^\[0\]\s+(\d+)\s+(\d+)\s+(\d+) -> (\d+)\s+(\d+)\s+[\d.]+\s+[\d.]+$)"),
        QRegularExpression::MultilineOption);
    int count = 0;
    qint64 value = 0;
    auto it = hop.globalMatch(out);
    while (it.hasNext()) {
        const auto m = it.next();
        const int from = m.captured(3).toInt();
        const int to = m.captured(4).toInt();
        QCOMPARE(m.captured(2).toInt(), count + 1);
        QCOMPARE(m.captured(1).toInt(), count / size + 1);
        QCOMPARE(from, count % size);
        QCOMPARE(to, (from + 1) % size);
        value += to + 1;
        QCOMPARE(m.captured(5).toLongLong(), value);
        ++count;
    }
    QVERIFY2(count == size * rounds, qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("[0] World of %1 node(s) over %2 formed").arg(size).arg(transport)),
             qPrintable(out));
}

void TestRing::ringFailsClearlyOutsideMmpirun()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("MMPI_RANK"));
    const ProcessRun ring = runProcess(QStringLiteral(MMPI_RING_PATH), {}, {.timeoutMs = 30000, .environment = env});
    QCOMPARE(ring.exitCode, 2);
    QVERIFY2(ring.err.contains(QLatin1String("MMPI_RANK")) && ring.err.contains(QLatin1String("mmpirun")),
             qPrintable(ring.err));
}

QTEST_GUILESS_MAIN(TestRing)
#include "tst_ring.moc"
