// The whiteboard across processes: 3 devices under mmpirun each draw their
// strokes headless, wait for the others' (flipTogether) and save the board —
// the 3 PNGs must be identical, hold every device's strokes where they were
// drawn, and the window screenshots must show them. Also: scripted strokes
// land at their coordinates, clear wipes, devices that open the board late
// get the whole board, discovery forms the world, bad input is refused.
#include "processrun.h"
#include "strokescript.h"
#include "why.h"

#include <QImage>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

using mmpi::whiteboard::StrokeScript;
using namespace mmpi::test;

namespace {

// What a device printed once its board was saved.
struct Report
{
    int size = 0;
    QColor color;
    int strokes = 0;
    int frame = 0;
    QString out;
};

// The reports in `out`, by rank.
QMap<int, Report> reportsOf(const QString &out)
{
    static const QRegularExpression line(QStringLiteral(
        R"(^(?:\[\d+\] )?whiteboard rank=(\d+) size=(\d+) color=(#[0-9a-f]{6}) strokes=(\d+) frame=(\d+) firstFrame=\d+ out=(.+)$)"),
        QRegularExpression::MultilineOption);
    QMap<int, Report> result;
    for (auto it = line.globalMatch(out); it.hasNext();) {
        const auto m = it.next();
        result.insert(m.captured(1).toInt(), {m.captured(2).toInt(), QColor(m.captured(3)), m.captured(4).toInt(),
                                              m.captured(5).toInt(), m.captured(6).trimmed()});
    }
    return result;
}

const QString whiteboard = QStringLiteral(MMPI_WHITEBOARD_PATH);

ProcessRun runWhiteboard(const QStringList &args)
{
    return runProcess(whiteboard, QStringList{QStringLiteral("--platform"), QStringLiteral("offscreen")} + args,
                      {.timeoutMs = 110000});
}

ProcessRun mmpirun(int nodes, const QStringList &appArgs)
{
    const QStringList args{QStringLiteral("-n"), QString::number(nodes), QStringLiteral("--timeout"),
                           QStringLiteral("100"), whiteboard, QStringLiteral("--platform"),
                           QStringLiteral("offscreen")};
    return runMmpirun(args + appArgs, {.timeoutMs = 110000});
}

int countColor(const QImage &image, QColor color)
{
    const QRgb wanted = color.rgb();
    int n = 0;
    for (int y = 0; y < image.height(); ++y) {
        const auto *line = reinterpret_cast<const QRgb *>(image.constScanLine(y));
        for (int x = 0; x < image.width(); ++x)
            n += (line[x] | 0xff000000u) == wanted && qAlpha(line[x]) == 255;
    }
    return n;
}

QImage loadArgb(const QString &path)
{
    return QImage(path).convertToFormat(QImage::Format_ARGB32);
}

bool writeFile(const QString &path, const QByteArray &text)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(text) == text.size();
}

QColor pixel(const QImage &image, int x, int y)
{
    return QColor::fromRgba(image.pixel(x, y));
}

} // namespace

class TestWhiteboard : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void threeDevicesShowOneBoard()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const int strokes = 5;
        const ProcessRun r = mmpirun(3, {QStringLiteral("--demo-strokes"), QString::number(strokes),
                                         QStringLiteral("--out"), dir.filePath(QStringLiteral("board-{rank}.png")),
                                         QStringLiteral("--screenshot"),
                                         dir.filePath(QStringLiteral("window-{rank}.png"))});
        QVERIFY2(r.exitCode == 0, qPrintable(r.dump()));
        const auto reports = reportsOf(r.out);
        QCOMPARE(reports.keys(), (QList<int>{0, 1, 2}));

        // Every device ends on the same frame: the root's clear and at least
        // one frame per stroke (a stroke leaves in pieces as the finger moves).
        QSet<QRgb> colors;
        for (const auto &report : reports) {
            QCOMPARE(report.size, 3);
            QCOMPARE(report.strokes, strokes);
            QCOMPARE(report.frame, reports[0].frame);
            QVERIFY2(report.frame >= 1 + 3 * strokes, qPrintable(r.dump()));
            colors.insert(report.color.rgb());
        }
        QCOMPARE(colors.size(), 3);

        const QImage board = loadArgb(dir.filePath(QStringLiteral("board-0.png")));
        QCOMPARE(board.size(), QSize(1280, 800));
        for (int rank : {1, 2})
            QVERIFY2(loadArgb(dir.filePath(QStringLiteral("board-%1.png").arg(rank))) == board,
                     qPrintable(QStringLiteral("board %1 differs from board 0").arg(rank)));

        // Each device's strokes are on the board where its script put them:
        // every point of them is drawn on (not white), mostly in its colour
        // (strokes of the others may cross it), and its colour covers more
        // than a few stray pixels.
        QVERIFY(countColor(board, Qt::white) > board.width() * board.height() / 2);
        for (auto it = reports.cbegin(); it != reports.cend(); ++it) {
            const StrokeScript script = StrokeScript::demo(it.key(), strokes, board.size());
            int points = 0, own = 0;
            for (const auto &step : script.steps()) {
                for (const QPoint &p : step.points) {
                    ++points;
                    QVERIFY2(pixel(board, p.x(), p.y()) != QColor(Qt::white),
                             qPrintable(QStringLiteral("rank %1's point %2,%3 is blank").arg(it.key()).arg(p.x()).arg(p.y())));
                    own += pixel(board, p.x(), p.y()) == it->color;
                }
            }
            QCOMPARE(points, strokes * 40);
            QVERIFY2(own > points * 7 / 10, qPrintable(QStringLiteral("rank %1: %2 of %3").arg(it.key()).arg(own).arg(points)));
            QVERIFY2(countColor(board, it->color) > 3000, qPrintable(it->color.name()));
        }

        // The windows: not blank, each showing every device's strokes.
        for (int rank : {0, 1, 2}) {
            const QImage shot = loadArgb(dir.filePath(QStringLiteral("window-%1.png").arg(rank)));
            QVERIFY2(!shot.isNull() && shot.width() >= 600, qPrintable(QString::number(rank)));
            for (const auto &report : reports)
                QVERIFY2(countColor(shot, report.color) > 1000,
                         qPrintable(QStringLiteral("window %1 lacks %2").arg(rank).arg(report.color.name())));
        }
    }

    void scriptedStrokesLandAtTheirCoordinates()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QStringList colors{QStringLiteral("#ff0000"), QStringLiteral("#00a000"), QStringLiteral("#0000ff")};
        for (int rank = 0; rank < 3; ++rank) {
            const int y = 150 + 200 * rank;
            QByteArray text = QStringLiteral("# rank %1\npen %2 10\nstroke 100,%3 700,%3 1100,%3\n")
                                  .arg(rank).arg(colors[rank]).arg(y).toUtf8();
            if (rank == 1)
                text += "pen mine 20\nstroke 640,720   # a dot\n";
            QVERIFY(writeFile(dir.filePath(QStringLiteral("script-%1.txt").arg(rank)), text));
        }
        const ProcessRun r = mmpirun(3, {QStringLiteral("--script"), dir.filePath(QStringLiteral("script-{rank}.txt")),
                                         QStringLiteral("--out"), dir.filePath(QStringLiteral("board-{rank}.png"))});
        QVERIFY2(r.exitCode == 0, qPrintable(r.dump()));
        const auto reports = reportsOf(r.out);
        QCOMPARE(reports.size(), 3);
        for (int rank = 0; rank < 3; ++rank) {
            const QImage board = loadArgb(dir.filePath(QStringLiteral("board-%1.png").arg(rank)));
            QCOMPARE(board.size(), QSize(1280, 800));
            for (int line = 0; line < 3; ++line) {
                const int y = 150 + 200 * line;
                for (int x : {100, 400, 700, 1099})
                    QCOMPARE(pixel(board, x, y), QColor(colors[line]));
                QCOMPARE(pixel(board, 600, y - 8), QColor(Qt::white)); // 10 wide: nothing 8 above
                QCOMPARE(pixel(board, 1110, y), QColor(Qt::white));    // nothing past the end
            }
            QCOMPARE(pixel(board, 640, 720), reports[1].color); // the dot, in device 1's own colour
            QCOMPARE(pixel(board, 640, 735), QColor(Qt::white));
        }
    }

    void clearWipesTheBoard()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString script = dir.filePath(QStringLiteral("clear.txt"));
        QVERIFY(writeFile(script, "pen #ff0000 10\nstroke 100,100 500,100\nclear #ffff00\n"
                                  "pen #0000ff 10\nstroke 100,300 500,300\n"));
        // One device on its own: no mmpirun, no transport.
        const ProcessRun r = runWhiteboard({QStringLiteral("--script"), script, QStringLiteral("--out"),
                                            dir.filePath(QStringLiteral("sub/board.png"))});
        QVERIFY2(r.exitCode == 0, qPrintable(r.dump()));
        QCOMPARE(reportsOf(r.out).value(0).size, 1);
        const QImage board = loadArgb(dir.filePath(QStringLiteral("sub/board.png")));
        QCOMPARE(board.size(), QSize(1280, 800));
        QCOMPARE(pixel(board, 300, 100), QColor(Qt::yellow));
        QCOMPARE(pixel(board, 300, 300), QColor(Qt::blue));
        QCOMPARE(countColor(board, Qt::red), 0);
    }

    void boardsOpenedLateGetTheWholeBoard()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        // Devices 1 and 2 create their canvas only after device 0 has drawn
        // all its strokes (and 300 ms more): they get them from the root.
        const ProcessRun r = mmpirun(3, {QStringLiteral("--demo-strokes"), QStringLiteral("3"),
                                         QStringLiteral("--attach-delay"), QStringLiteral("300"), QStringLiteral("--out"),
                                         dir.filePath(QStringLiteral("board-{rank}.png"))});
        QVERIFY2(r.exitCode == 0, qPrintable(r.dump()));
        const auto reports = reportsOf(r.out);
        QCOMPARE(reports.size(), 3);
        const QImage board = loadArgb(dir.filePath(QStringLiteral("board-0.png")));
        for (int rank : {1, 2}) {
            QCOMPARE(reports[rank].frame, reports[0].frame);
            QVERIFY(loadArgb(dir.filePath(QStringLiteral("board-%1.png").arg(rank))) == board);
        }
        QVERIFY(reports[0].frame >= 1 + 3 * 3);
        for (const auto &report : reports)
            QVERIFY2(countColor(board, report.color) > 2000, qPrintable(report.color.name()));
    }

    void discoveredWorldFromTheCommandLine()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString name = QStringLiteral("wb-test-%1").arg(QCoreApplication::applicationPid());
        auto start = [&](bool host, const QString &out) {
            auto *p = new QProcess(this);
            QStringList args{QStringLiteral("--platform"), QStringLiteral("offscreen"), QStringLiteral("--transport"),
                             QStringLiteral("local"), QStringLiteral("--size"), QStringLiteral("2"),
                             QStringLiteral("--world-name"), name, QStringLiteral("--demo-strokes"), QStringLiteral("2"),
                             QStringLiteral("--out"), out, QStringLiteral("--timeout"), QStringLiteral("60")};
            if (host)
                args << QStringLiteral("--host");
            p->start(whiteboard, args);
            return p;
        };
        QProcess *root = start(true, dir.filePath(QStringLiteral("root.png")));
        QProcess *other = start(false, dir.filePath(QStringLiteral("other.png")));
        QString rootOut;
        for (QProcess *p : {root, other}) {
            const ProcessRun r = finishProcess(*p, 90000);
            QVERIFY2(r.exitCode == 0, qPrintable(r.dump()));
            if (p == root)
                rootOut = r.out;
        }
        QVERIFY2(rootOut.contains(QLatin1String("whiteboard rank=0 size=2 ")), qPrintable(rootOut));
        const QImage board = loadArgb(dir.filePath(QStringLiteral("root.png")));
        QVERIFY(!board.isNull());
        QVERIFY(loadArgb(dir.filePath(QStringLiteral("other.png"))) == board);
        QVERIFY(countColor(board, Qt::white) < board.width() * board.height());
    }

    void chooserJoinsAWorldItLists()
    {
        // Given a host of world X over tcp on loopback, and a device that was
        // told no world name but --choose ...
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString name = QStringLiteral("wb-choose-%1").arg(QCoreApplication::applicationPid());
        const int port = 40000 + int(QCoreApplication::applicationPid() % 10000);
        const QString options = QStringLiteral("{\"beaconPort\":%1,\"lobbyPort\":%2,\"beaconTargets\":[\"127.0.0.1\"],"
                                               "\"interfaces\":[\"lo\"],\"dnsSdBackend\":\"builtin\",\"beaconInterval\":100}")
                                    .arg(port).arg(port + 10000);
        auto start = [&](const QStringList &extra, const QString &out) {
            auto *p = new QProcess(this);
            p->start(whiteboard, QStringList{QStringLiteral("--platform"), QStringLiteral("offscreen"),
                                             QStringLiteral("--transport"), QStringLiteral("tcp"),
                                             QStringLiteral("--transport-options"), options,
                                             QStringLiteral("--demo-strokes"), QStringLiteral("2"),
                                             QStringLiteral("--out"), out, QStringLiteral("--timeout"), QStringLiteral("60")}
                                     + extra);
            return p;
        };
        QProcess *root = start({QStringLiteral("--host"), QStringLiteral("--size"), QStringLiteral("2"),
                                QStringLiteral("--world-name"), name},
                               dir.filePath(QStringLiteral("root.png")));
        QProcess *other = start({QStringLiteral("--choose")}, dir.filePath(QStringLiteral("other.png")));
        QString otherOut;
        for (QProcess *p : {root, other}) {
            const ProcessRun r = finishProcess(*p, 90000);
            QVERIFY2(r.exitCode == 0, qPrintable(r.dump()));
            if (p == other)
                otherOut = r.out;
        }
        // ... it joins the world it listed: one board for both.
        QVERIFY2(otherOut.contains(QLatin1String("whiteboard rank=1 size=2 ")), qPrintable(otherOut));
        const QImage board = loadArgb(dir.filePath(QStringLiteral("root.png")));
        QVERIFY(!board.isNull());
        QVERIFY(loadArgb(dir.filePath(QStringLiteral("other.png"))) == board);
    }

    void exampleScriptsParse()
    {
        // The sketches docs/guide/demos.md runs (and the README picture shows).
        const QList<int> strokes{5, 13, 6};
        for (int rank = 0; rank < 3; ++rank) {
            const auto script = StrokeScript::load(QStringLiteral(MMPI_WHITEBOARD_EXAMPLES "/sketch-%1.txt").arg(rank), {1280, 800});
            QVERIFY2(script, qPrintable(why(script)));
            QCOMPARE(script->strokeCount(), strokes[rank]);
        }
    }

    void badInputIsRefused_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QByteArray>("script");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        QTest::newRow("strokes not a number") << QStringList{QStringLiteral("--demo-strokes"), QStringLiteral("many"),
                                                             QStringLiteral("--out"), QStringLiteral("x.png")}
                                              << QByteArray() << 2 << QStringLiteral("--demo-strokes takes a whole number");
        QTest::newRow("no --out") << QStringList{QStringLiteral("--demo-strokes"), QStringLiteral("3")} << QByteArray() << 2
                                  << QStringLiteral("needs --out");
        QTest::newRow("size without transport") << QStringList{QStringLiteral("--size"), QStringLiteral("3")} << QByteArray()
                                                << 2 << QStringLiteral("add --transport");
        QTest::newRow("unknown option") << QStringList{QStringLiteral("--colour")} << QByteArray() << 2
                                        << QStringLiteral("Unknown option 'colour'");
        QTest::newRow("bad step") << QStringList() << QByteArray("pen red 3\nscribble 1,2\n") << 1
                                  << QStringLiteral("script line 2: unknown step 'scribble'");
        QTest::newRow("point off the board") << QStringList() << QByteArray("stroke 10,10 2000,10\n") << 1
                                             << QStringLiteral("script line 1: point 2000,10 is outside the 1280x800 board");
        QTest::newRow("bad colour") << QStringList() << QByteArray("\n\npen nocolour 3\n") << 1
                                    << QStringLiteral("script line 3: 'nocolour' is not a colour");
        QTest::newRow("huge width") << QStringList() << QByteArray("pen red 100000\n") << 1
                                    << QStringLiteral("script line 1: pen width '100000'");
        QTest::newRow("nothing drawn") << QStringList() << QByteArray("# empty\npen red 3\n") << 1
                                       << QStringLiteral("the script draws no stroke");
    }

    void badInputIsRefused()
    {
        QFETCH(QStringList, args);
        QFETCH(QByteArray, script);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        if (!script.isEmpty()) {
            const QString path = dir.filePath(QStringLiteral("script.txt"));
            QVERIFY(writeFile(path, script));
            args << QStringLiteral("--script") << path << QStringLiteral("--out") << dir.filePath(QStringLiteral("b.png"));
        }
        const ProcessRun r = runWhiteboard(args);
        QVERIFY2(r.exitCode == exitCode, qPrintable(r.dump()));
        QVERIFY2(r.err.contains(message), qPrintable(r.dump()));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("b.png"))));
    }
};

QTEST_GUILESS_MAIN(TestWhiteboard)
#include "tst_whiteboard.moc"
