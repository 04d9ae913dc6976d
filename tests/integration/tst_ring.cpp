// End to end: mmpirun starts real processes that form a world and pass a token
// around the ring; the table rank 0 prints proves every hop happened in order.
#include <QElapsedTimer>
#include <QProcess>
#include <QRegularExpression>
#include <QTest>

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
    QProcess run;
    QElapsedTimer clock;
    clock.start();
    run.start(QStringLiteral(MMPIRUN_PATH),
              {QStringLiteral("-n"), QString::number(size), QStringLiteral("--transport"), transport,
               QStringLiteral("--timeout"), QStringLiteral("60"), QStringLiteral("--"),
               QStringLiteral(MMPI_RING_PATH), QStringLiteral("--rounds"), QString::number(rounds)});
    QVERIFY(run.waitForFinished(90000));
    const QString out = QString::fromUtf8(run.readAllStandardOutput());
    const QString err = QString::fromUtf8(run.readAllStandardError());
    QVERIFY2(run.exitStatus() == QProcess::NormalExit && run.exitCode() == 0,
             qPrintable(QStringLiteral("exit %1\n%2\n%3").arg(run.exitCode()).arg(out, err)));
    qInfo("%d nodes over %s: %lld ms end to end", size, qPrintable(transport), clock.elapsed());

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
    QProcess ring;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("MMPI_RANK"));
    ring.setProcessEnvironment(env);
    ring.start(QStringLiteral(MMPI_RING_PATH), {});
    QVERIFY(ring.waitForFinished(30000));
    QCOMPARE(ring.exitCode(), 2);
    const QString err = QString::fromUtf8(ring.readAllStandardError());
    QVERIFY2(err.contains(QLatin1String("MMPI_RANK")) && err.contains(QLatin1String("mmpirun")), qPrintable(err));
}

QTEST_GUILESS_MAIN(TestRing)
#include "tst_ring.moc"
