// The game's windows across processes (offscreen): 4 bots play in windows
// under mmpirun, agree on the final state, and rank 0's screenshot shows the
// arena with every player's colour and the score list; 3 people's windows
// (no bots) form, play to the last tick and end cleanly.
#include "gameboard.h"
#include "processrun.h"

#include <QImage>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace mmpi::game;
using namespace mmpi::test;
using namespace Qt::StringLiterals;

namespace {

// The windows draw offscreen, in software.
ProcessRun mmpirun(const QStringList &args)
{
    return runMmpirun(args, {.environment = systemEnvironmentWith({{u"QT_QPA_PLATFORM"_s, u"offscreen"_s},
                                                                   {u"QT_QUICK_BACKEND"_s, u"software"_s}})});
}

const QString game = QStringLiteral(MMPI_GAME_PATH);

// Pixels of the player's head or trail colour left of the score list.
int pixelsOf(const QImage &image, int player, int boardRight)
{
    const QRgb head = GameBoard::playerColor(player).rgb(), trail = GameBoard::trailColor(player).rgb();
    int n = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < boardRight; ++x) {
            const QRgb p = image.pixel(x, y) | 0xff000000;
            n += p == head || p == trail;
        }
    return n;
}

int brightPixels(const QImage &image, QRect area)
{
    int n = 0;
    for (int y = area.top(); y <= area.bottom(); ++y)
        for (int x = area.left(); x <= area.right(); ++x)
            n += qGray(image.pixel(x, y)) > 200;
    return n;
}

} // namespace

class TestGameWindow : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void botsPlayInWindows()
    {
        QTemporaryDir dir;
        const QString shot = dir.filePath(QStringLiteral("game.png"));
        const ProcessRun r = mmpirun({u"-n"_s, u"4"_s, u"--timeout"_s, u"90"_s, game, u"--bots"_s, u"--gui"_s,
                                      u"--ticks"_s, u"160"_s, u"--tick-ms"_s, u"15"_s, u"--screenshot"_s, shot});
        QVERIFY2(r.exitCode == 0, qPrintable(r.dump()));
        static const QRegularExpression done(QStringLiteral(R"(^\[(\d+)\] event=done tick=160 .*hash=([0-9a-f]{16}))"),
                                             QRegularExpression::MultilineOption);
        QMap<int, QString> hashes;
        for (auto it = done.globalMatch(r.out); it.hasNext();) {
            const auto m = it.next();
            hashes.insert(m.captured(1).toInt(), m.captured(2));
        }
        QCOMPARE(hashes.keys(), (QList<int>{0, 1, 2, 3}));
        for (const QString &h : hashes)
            QCOMPARE(h, hashes.first());
        QVERIFY2(r.out.contains(QStringLiteral("[0] event=screenshot tick=159 ")), qPrintable(r.dump()));
        QVERIFY2(!r.out.contains(QStringLiteral("[1] event=screenshot")), qPrintable(r.dump()));

        const QImage image(shot);
        QCOMPARE(image.size(), QSize(980, 640));
        const int boardRight = 980 - 270 - 24;
        // Every player's cycle is on the board (its start cell at least: 9 × 9 pixels).
        for (int player = 0; player < 4; ++player)
            QVERIFY2(pixelsOf(image, player, boardRight) >= 81, qPrintable(QStringLiteral("player %1").arg(player)));
        QCOMPARE(pixelsOf(image, 4, boardRight), 0); // no fifth player
        // The side panel has text (the player, the scores).
        QVERIFY(brightPixels(image, QRect(boardRight + 12, 0, 270, 400)) > 300);
    }

    void threePeoplePlayInWindows()
    {
        QTemporaryDir dir;
        const QString shot = dir.filePath(QStringLiteral("three.png"));
        const ProcessRun r = mmpirun({u"-n"_s, u"3"_s, u"--timeout"_s, u"90"_s, game, u"--ticks"_s, u"30"_s,
                                      u"--tick-ms"_s, u"20"_s, u"--screenshot"_s, shot});
        QVERIFY2(r.exitCode == 0, qPrintable(r.dump()));
        QVERIFY2(r.out.contains(QStringLiteral("[0] event=screenshot tick=29 ")), qPrintable(r.dump()));
        const QImage image(shot);
        QCOMPARE(image.size(), QSize(980, 640));
        for (int player = 0; player < 3; ++player)
            QVERIFY2(pixelsOf(image, player, 980 - 270 - 24) >= 81, qPrintable(QStringLiteral("player %1").arg(player)));
        QCOMPARE(pixelsOf(image, 3, 980 - 270 - 24), 0);
    }
};

QTEST_MAIN(TestGameWindow)
#include "tst_gamewindow.moc"
