// The game across processes: 4 bot players under mmpirun end with the same
// state on every device; a player out of range is frozen and comes back, one
// whose app dies is removed, and the others play on and still agree.
#include <QProcess>
#include <QRegularExpression>
#include <QTest>

namespace {

struct Run
{
    int exitCode = -1;
    QString out, err;
    QString dump() const { return QStringLiteral("exit %1\n--- stdout\n%2\n--- stderr\n%3").arg(exitCode).arg(out, err); }
    // The final hash each rank printed, by rank.
    QMap<int, QString> finalHashes() const
    {
        QMap<int, QString> hashes;
        static const QRegularExpression done(QStringLiteral(R"(^\[(\d+)\] event=done tick=(\d+) .*hash=([0-9a-f]{16}))"),
                                             QRegularExpression::MultilineOption);
        for (auto it = done.globalMatch(out); it.hasNext();) {
            const auto m = it.next();
            hashes.insert(m.captured(1).toInt(), m.captured(2) + QLatin1Char('/') + m.captured(3));
        }
        return hashes;
    }
};

Run mmpirun(const QStringList &args)
{
    QProcess p;
    p.start(QStringLiteral(MMPIRUN_PATH), args);
    Run r;
    if (!p.waitForFinished(120000))
        p.kill();
    p.waitForFinished(5000);
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

const QString game = QStringLiteral(MMPI_GAME_PATH);

} // namespace

class TestGame : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void everyDeviceEndsInTheSameState()
    {
        const Run r = mmpirun({QStringLiteral("-n"), QStringLiteral("4"), QStringLiteral("--timeout"), QStringLiteral("90"),
                               game, QStringLiteral("--bots"), QStringLiteral("--ticks"), QStringLiteral("1500"),
                               QStringLiteral("--tick-ms"), QStringLiteral("2")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.dump()));
        const auto hashes = r.finalHashes();
        QCOMPARE(hashes.size(), 4);
        for (const QString &h : hashes)
            QCOMPARE(h, hashes.first());
        QVERIFY(hashes.first().startsWith(QLatin1String("1500/")));
        // Every 50 ticks each rank printed its hash: they agree at each one.
        static const QRegularExpression tick(QStringLiteral(R"(^\[\d+\] event=tick tick=(\d+) round=\d+ hash=([0-9a-f]+))"),
                                             QRegularExpression::MultilineOption);
        QMap<QString, QSet<QString>> byTick;
        for (auto it = tick.globalMatch(r.out); it.hasNext();) {
            const auto m = it.next();
            byTick[m.captured(1)].insert(m.captured(2));
        }
        QCOMPARE(byTick.size(), 30);
        for (auto it = byTick.cbegin(); it != byTick.cend(); ++it)
            QVERIFY2(it.value().size() == 1, qPrintable(QStringLiteral("tick %1 differs").arg(it.key())));
    }

    void outOfRangeFreezesAndDeathRemoves()
    {
        const Run r = mmpirun({QStringLiteral("-n"), QStringLiteral("4"), QStringLiteral("--transport"), QStringLiteral("sim"),
                               QStringLiteral("--link"), QStringLiteral("ideal"), QStringLiteral("--fault"),
                               QStringLiteral("rank 2 out-of-range at 1s for 1.5s"), QStringLiteral("--fault"),
                               QStringLiteral("rank 3 terminates at 2s"), QStringLiteral("--keep-going"),
                               QStringLiteral("--timeout"), QStringLiteral("90"), game, QStringLiteral("--bots"),
                               QStringLiteral("--ticks"), QStringLiteral("300"), QStringLiteral("--tick-ms"),
                               QStringLiteral("15")});
        QVERIFY2(r.err.contains(QStringLiteral("node 3 crashed with signal 9")), qPrintable(r.dump()));
        for (int rank : {0, 1}) {
            for (const char *event : {"event=frozen player=2", "event=thawed player=2", "event=removed player=3"})
                QVERIFY2(r.out.contains(QStringLiteral("[%1] %2").arg(rank).arg(QLatin1String(event))), qPrintable(r.dump()));
        }
        const auto hashes = r.finalHashes();
        QCOMPARE(hashes.keys(), (QList<int>{0, 1, 2}));
        for (const QString &h : hashes)
            QCOMPARE(h, hashes.first());
        QVERIFY2(r.out.contains(QStringLiteral("[0] event=done tick=300 ")), qPrintable(r.dump()));
        // The removed player is out of the scores: players 0, 1, 2 remain.
        static const QRegularExpression scores(QStringLiteral(R"(^\[0\] event=done .*scores=0:\d+,1:\d+,2:\d+$)"),
                                               QRegularExpression::MultilineOption);
        QVERIFY2(scores.match(r.out).hasMatch(), qPrintable(r.dump()));
    }
};

QTEST_GUILESS_MAIN(TestGame)
#include "tst_game.moc"
