// The game's windows across processes (offscreen): 4 bots play in windows
// under mmpirun, agree on the final state, and rank 0's screenshot shows the
// arena with every player's colour and the score list; 3 people's windows
// (no bots) form, play to the last tick and end cleanly; without mmpirun, a
// host over tcp and a device that chooses it from its lobby play one game;
// options that cannot work are refused with what to do.
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

QProcessEnvironment offscreen()
{
    return systemEnvironmentWith({{u"QT_QPA_PLATFORM"_s, u"offscreen"_s}, {u"QT_QUICK_BACKEND"_s, u"software"_s}});
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

    void chooserJoinsAHostedGame()
    {
        // Given a host of a 2-player game over tcp on loopback, and a device
        // told no game's name but --choose ...
        QTemporaryDir dir;
        const QString name = u"cycles-%1"_s.arg(QCoreApplication::applicationPid());
        const int port = 20000 + int(QCoreApplication::applicationPid() % 10000);
        const QString options = uR"({"beaconPort":%1,"lobbyPort":%2,"beaconTargets":["127.0.0.1"],)"
                                uR"("interfaces":["lo"],"dnsSdBackend":"builtin","beaconInterval":100})"_s
                                    .arg(port)
                                    .arg(port + 10000);
        const auto start = [&](const QStringList &extra) {
            auto *p = new QProcess(this);
            p->setProcessEnvironment(offscreen());
            p->start(game, QStringList{u"--transport"_s, u"tcp"_s, u"--transport-options"_s, options, u"--bots"_s,
                                       u"--gui"_s, u"--ticks"_s, u"40"_s, u"--tick-ms"_s, u"20"_s, u"--hash-every"_s,
                                       u"20"_s, u"--screenshot"_s, dir.filePath(u"game.png"_s)}
                                 + extra);
            return p;
        };
        QProcess *host = start({u"--host"_s, u"--players"_s, u"2"_s, u"--game-name"_s, name});
        QProcess *chooser = start({u"--choose"_s});
        const ProcessRun h = finishProcess(*host, 90000), c = finishProcess(*chooser, 90000);
        QVERIFY2(h.exitCode == 0, qPrintable(h.dump()));
        QVERIFY2(c.exitCode == 0, qPrintable(c.dump()));
        // ... it joins the game its lobby listed, and both end in one state.
        QVERIFY2(c.out.contains(u"event=joining game=%1 players=2\n"_s.arg(name)), qPrintable(c.out));
        static const QRegularExpression done(uR"(event=done tick=40 .*hash=([0-9a-f]{16}))"_s);
        const auto hostDone = done.match(h.out), chooserDone = done.match(c.out);
        QVERIFY2(hostDone.hasMatch() && chooserDone.hasMatch(), qPrintable(h.out + c.out));
        QCOMPARE(chooserDone.captured(1), hostDone.captured(1));
        QVERIFY(QImage(dir.filePath(u"game.png"_s)).size() == QSize(980, 640)); // the host is player 0
    }

    void optionsThatCannotWorkAreRefused_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("no mmpirun, no transport") << QStringList{} << u"start it with mmpirun"_s;
        QTest::newRow("host without transport") << QStringList{u"--host"_s} << u"--host is for discovery"_s;
        QTest::newRow("host and choose") << QStringList{u"--transport"_s, u"tcp"_s, u"--host"_s, u"--choose"_s}
                                         << u"--choose is for a device that joins"_s;
        QTest::newRow("players of a joiner") << QStringList{u"--transport"_s, u"tcp"_s, u"--players"_s, u"3"_s}
                                             << u"--players is the host's to say"_s;
        QTest::newRow("nine players") << QStringList{u"--transport"_s, u"tcp"_s, u"--host"_s, u"--players"_s, u"9"_s}
                                      << u"--players takes 2..8"_s;
        QTest::newRow("choose headless") << QStringList{u"--transport"_s, u"tcp"_s, u"--choose"_s, u"--bots"_s}
                                         << u"--choose lists the games in the lobby's window"_s;
        QTest::newRow("options not JSON") << QStringList{u"--transport"_s, u"tcp"_s, u"--transport-options"_s, u"[1"_s}
                                          << u"--transport-options takes a JSON object"_s;
    }

    void optionsThatCannotWorkAreRefused()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        QProcessEnvironment environment = offscreen();
        for (const QString &variable : environment.keys())
            if (variable.startsWith(u"MMPI_"_s))
                environment.remove(variable); // not launched, whoever runs the test
        const ProcessRun r = runProcess(game, args, {.environment = environment});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(u"mmpi-game: "_s + message), qPrintable(r.err));
    }
};

QTEST_MAIN(TestGameWindow)
#include "tst_gamewindow.moc"
