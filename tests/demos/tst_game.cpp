// The game across processes: 4 bot players under mmpirun end with the same
// state on every device; a player out of range is frozen and comes back, one
// whose app dies is removed, and the others play on and still agree.
#include "processrun.h"

#include <QRegularExpression>
#include <QTest>

using namespace mmpi::test;
using namespace Qt::StringLiterals;

namespace {

// The final hash each rank printed, by rank.
QMap<int, QString> finalHashes(const QString &out)
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

const QString game = QStringLiteral(MMPI_GAME_PATH);

} // namespace

class TestGame : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void everyDeviceEndsInTheSameState()
    {
        const ProcessRun r = runMmpirun({u"-n"_s, u"4"_s, u"--timeout"_s, u"90"_s, game, u"--bots"_s, u"--ticks"_s,
                                         u"1500"_s, u"--tick-ms"_s, u"2"_s});
        QVERIFY2(r.exitCode == 0, qPrintable(r.dump()));
        const auto hashes = finalHashes(r.out);
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
        const ProcessRun r = runMmpirun({u"-n"_s, u"4"_s, u"--transport"_s, u"sim"_s, u"--link"_s, u"ideal"_s,
                                         u"--fault"_s, u"rank 2 out-of-range at 1s for 1.5s"_s, u"--fault"_s,
                                         u"rank 3 terminates at 2s"_s, u"--keep-going"_s, u"--timeout"_s, u"90"_s, game,
                                         u"--bots"_s, u"--ticks"_s, u"300"_s, u"--tick-ms"_s, u"15"_s});
        QVERIFY2(r.err.contains(QStringLiteral("node 3 crashed with signal 9")), qPrintable(r.dump()));
        for (int rank : {0, 1}) {
            for (const char *event : {"event=frozen player=2", "event=thawed player=2", "event=removed player=3"})
                QVERIFY2(r.out.contains(QStringLiteral("[%1] %2").arg(rank).arg(QLatin1String(event))), qPrintable(r.dump()));
        }
        const auto hashes = finalHashes(r.out);
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
