// The game's windows across processes (offscreen): 4 bots play in windows
// under mmpirun, agree on the final state, and rank 0's screenshot shows the
// arena with every player's colour and the score list; 3 people's windows
// (no bots) form, play to the last tick and end cleanly.
#include "gameboard.h"

#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace mmpi::game;

namespace {

struct Run
{
    int exitCode = -1;
    QString out, err;
    QString dump() const { return QStringLiteral("exit %1\n--- stdout\n%2\n--- stderr\n%3").arg(exitCode).arg(out, err); }
};

Run mmpirun(const QStringList &args)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("QT_QUICK_BACKEND"), QStringLiteral("software"));
    p.setProcessEnvironment(env);
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
        const Run r = mmpirun({QStringLiteral("-n"), QStringLiteral("4"), QStringLiteral("--timeout"), QStringLiteral("90"),
                               game, QStringLiteral("--bots"), QStringLiteral("--gui"), QStringLiteral("--ticks"),
                               QStringLiteral("160"), QStringLiteral("--tick-ms"), QStringLiteral("15"),
                               QStringLiteral("--screenshot"), shot});
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
        const Run r = mmpirun({QStringLiteral("-n"), QStringLiteral("3"), QStringLiteral("--timeout"), QStringLiteral("90"),
                               game, QStringLiteral("--ticks"), QStringLiteral("30"), QStringLiteral("--tick-ms"),
                               QStringLiteral("20"), QStringLiteral("--screenshot"), shot});
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
