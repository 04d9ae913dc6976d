// The Mandelbrot demo end to end: a render on 4 nodes under mmpirun, and one
// where a worker is killed (SIGKILL) midway, give a PNG identical pixel for
// pixel to a one-node render; the summary and the progress are printed. With
// --share every node's canvas holds the root's picture (tinted or not); in
// GUI mode (offscreen) a wheel turned on a non-root node makes every node
// show a one-node render of the new view.
#include "processrun.h"

#include <QImage>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

using namespace mmpi::test;
using namespace Qt::StringLiterals;

namespace {

const QString mandelbrot = QStringLiteral(MMPI_MANDELBROT_PATH);
const QStringList smallView{u"--width"_s, u"400"_s, u"--height"_s, u"300"_s};
// Slow enough that a worker killed 300 ms in dies mid-render.
const QStringList bigView{u"--width"_s,      u"800"_s,  u"--height"_s, u"600"_s,
                          u"--iterations"_s, u"3000"_s, u"--band"_s,   u"4"_s};

// One node, no mmpirun: the picture every distributed render must equal.
ProcessRun renderAlone(const QStringList &view, const QString &png)
{
    return runProcess(mandelbrot, view + QStringList{u"--out"_s, png});
}

struct KilledRender
{
    ProcessRun alone, killed;
};

// bigView alone into one.png, and on 4 nodes into killed.png with rank 2
// killed (SIGKILL) 300 ms in while the others go on.
KilledRender renderWithAKilledWorker(const QTemporaryDir &dir, const QStringList &appArgs)
{
    return {renderAlone(bigView, dir.filePath(u"one.png"_s)),
            runMmpirun(QStringList{u"-n"_s, u"4"_s, u"--transport"_s, u"sim"_s, u"--link"_s, u"ideal"_s, u"--fault"_s,
                                   u"rank 2 terminates at 300ms"_s, u"--keep-going"_s, u"--timeout"_s, u"90"_s,
                                   mandelbrot}
                       + appArgs + bigView + QStringList{u"--out"_s, dir.filePath(u"killed.png"_s)})};
}

// mmpirun saw rank 2 die and the demo saw it lost.
bool lostRankTwo(const ProcessRun &killed)
{
    return killed.err.contains(u"node 2 crashed with signal 9"_s)
           && killed.err.contains(u"mmpi-mandelbrot: node 2 was lost"_s);
}

QImage rgb(const QString &path) { return QImage(path).convertToFormat(QImage::Format_RGB32); }

// How many of a picture's pixels differ from another's.
int differingPixels(const QImage &a, const QImage &b)
{
    if (a.size() != b.size())
        return -1;
    int count = 0;
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x)
            count += a.pixel(x, y) != b.pixel(x, y) ? 1 : 0;
    return count;
}

} // namespace

class TestMandelbrot : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void fourNodesDrawWhatOneDraws()
    {
        QTemporaryDir dir;
        const ProcessRun alone = renderAlone(smallView, dir.filePath(u"one.png"_s));
        QVERIFY2(alone.exitCode == 0, qPrintable(alone.dump()));
        const ProcessRun four = runMmpirun(QStringList{u"-n"_s, u"4"_s, u"--timeout"_s, u"60"_s, mandelbrot} + smallView
                                           + QStringList{u"--out"_s, dir.filePath(u"four.png"_s)});
        QVERIFY2(four.exitCode == 0, qPrintable(four.dump()));
        // The root computes bands too (on a pool thread), beside serving the workers.
        static const QRegularExpression perNode(QStringLiteral(R"(on 4 node\(s\); bands per node: 0:([1-9]\d*) 1:\d+ 2:\d+ 3:\d+)"));
        QVERIFY2(perNode.match(four.out).hasMatch(), qPrintable(four.dump()));
        // Summed band time over wall time is the bands computed at once, which
        // the summary calls what it is: four nodes on fewer cores are no 4x speedup.
        static const QRegularExpression inFlight(
            QStringLiteral(R"(work \d+\.\d\d s / wall \d+\.\d\d s = \d+\.\d bands in flight on average\n)"));
        QVERIFY2(inFlight.match(four.out).hasMatch(), qPrintable(four.dump()));
        QVERIFY2(!four.out.contains(QLatin1String("speedup")), qPrintable(four.dump()));
        QVERIFY2(four.err.contains(QStringLiteral("rendering: 100% (38/38 bands)")), qPrintable(four.dump()));
        const QImage one(dir.filePath(QStringLiteral("one.png"))), many(dir.filePath(QStringLiteral("four.png")));
        QCOMPARE(many.size(), QSize(400, 300));
        QVERIFY(many.convertToFormat(QImage::Format_RGB32) == one.convertToFormat(QImage::Format_RGB32));
        // Not a blank picture: the set and its outside differ.
        QVERIFY(one.pixel(200, 150) != one.pixel(5, 5));
    }

    // Issue 8: killing a worker mid-render still yields the one-node image.
    void killedWorkerStillGivesTheSamePicture()
    {
        QTemporaryDir dir;
        const auto [alone, killed] = renderWithAKilledWorker(dir, {});
        QVERIFY2(alone.exitCode == 0, qPrintable(alone.dump()));
        QVERIFY2(lostRankTwo(killed), qPrintable(killed.dump()));
        QVERIFY2(killed.out.contains(QStringLiteral("wrote ")), qPrintable(killed.dump()));
        const QImage one(dir.filePath(QStringLiteral("one.png"))), survived(dir.filePath(QStringLiteral("killed.png")));
        QCOMPARE(survived.size(), QSize(800, 600));
        QVERIFY(survived.convertToFormat(QImage::Format_RGB32) == one.convertToFormat(QImage::Format_RGB32));
    }

    // Every band broadcast as an MMPE image block: each node's canvas is
    // the root's PNG; untinted that is the one-node picture, tinted it is not.
    void everyCanvasHoldsTheRootsPicture_data()
    {
        QTest::addColumn<bool>("tint");
        QTest::newRow("plain") << false;
        QTest::newRow("tinted") << true;
    }
    void everyCanvasHoldsTheRootsPicture()
    {
        QFETCH(bool, tint);
        QTemporaryDir dir;
        const ProcessRun alone = renderAlone(smallView, dir.filePath(u"one.png"_s));
        QVERIFY2(alone.exitCode == 0, qPrintable(alone.dump()));
        QStringList args{QStringLiteral("-n"), QStringLiteral("3"), QStringLiteral("--timeout"), QStringLiteral("60"),
                         mandelbrot, QStringLiteral("--canvas-out"), dir.filePath(QStringLiteral("canvas-{rank}.png")),
                         QStringLiteral("--out"), dir.filePath(QStringLiteral("root.png"))};
        if (tint)
            args << QStringLiteral("--tint");
        const ProcessRun three = runMmpirun(args + smallView);
        QVERIFY2(three.exitCode == 0, qPrintable(three.dump()));
        QVERIFY2(three.out.contains(QStringLiteral("on 3 node(s); bands per node: 0:")), qPrintable(three.dump()));
        QVERIFY2(three.err.contains(QStringLiteral("rendering: 100% (38/38 bands)")), qPrintable(three.dump()));
        const QImage root = rgb(dir.filePath(QStringLiteral("root.png")));
        QCOMPARE(root.size(), QSize(400, 300));
        for (int rank = 0; rank < 3; ++rank) {
            const QImage canvas = rgb(dir.filePath(QStringLiteral("canvas-%1.png").arg(rank)));
            QCOMPARE(canvas.size(), QSize(400, 300));
            QCOMPARE(differingPixels(canvas, root), 0);
        }
        const QImage one = rgb(dir.filePath(QStringLiteral("one.png")));
        if (tint)
            QVERIFY(differingPixels(root, one) > 400 * 300 / 2); // every band is tinted
        else
            QVERIFY(root == one);
    }

    // A worker killed while the bands are broadcast: the others' canvases
    // still get the whole picture, the one-node picture.
    void killedWorkerLeavesEveryCanvasComplete()
    {
        QTemporaryDir dir;
        const auto [alone, killed] =
            renderWithAKilledWorker(dir, {u"--canvas-out"_s, dir.filePath(u"canvas-{rank}.png"_s)});
        QVERIFY2(alone.exitCode == 0, qPrintable(alone.dump()));
        QVERIFY2(lostRankTwo(killed), qPrintable(killed.dump()));
        const QImage one = rgb(dir.filePath(QStringLiteral("one.png")));
        QCOMPARE(one.size(), QSize(800, 600));
        QCOMPARE(differingPixels(rgb(dir.filePath(QStringLiteral("killed.png"))), one), 0);
        for (int rank : {0, 1, 3})
            QCOMPARE(differingPixels(rgb(dir.filePath(QStringLiteral("canvas-%1.png").arg(rank))), one), 0);
    }

    // Alone, --canvas-out draws the same blocks on a local canvas.
    void aloneTheCanvasIsThePicture()
    {
        QTemporaryDir dir;
        const ProcessRun alone = renderAlone({u"--width"_s, u"200"_s, u"--height"_s, u"150"_s, u"--canvas-out"_s,
                                              dir.filePath(u"canvas-{rank}.png"_s)},
                                             dir.filePath(u"one.png"_s));
        QVERIFY2(alone.exitCode == 0, qPrintable(alone.dump()));
        QVERIFY2(alone.out.contains(QStringLiteral("on 1 node(s)\n")), qPrintable(alone.dump()));
        const QImage one = rgb(dir.filePath(QStringLiteral("one.png")));
        QCOMPARE(one.size(), QSize(200, 150));
        QCOMPARE(differingPixels(rgb(dir.filePath(QStringLiteral("canvas-0.png"))), one), 0);
    }

    // GUI (offscreen): node 1 turns the wheel at (0.3, 0.6) of the picture,
    // two notches; the root renders the zoomed view across the world and
    // every node's window shows a one-node render of it.
    void guiZoomOnAMemberRedrawsEveryNode()
    {
        QTemporaryDir dir;
        const QStringList size{u"--width"_s, u"320"_s, u"--height"_s, u"240"_s};
        const ProcessRun gui = runMmpirun(
            QStringList{u"-n"_s, u"3"_s, u"--timeout"_s, u"90"_s, mandelbrot, u"--gui"_s, u"--script-wheel"_s,
                        u"0.3,0.6,2"_s, u"--script-rank"_s, u"1"_s, u"--exit-after"_s, u"2"_s, u"--canvas-out"_s,
                        dir.filePath(u"gui-{rank}.png"_s), u"--screenshot"_s, dir.filePath(u"shot-{rank}.png"_s)}
                + size,
            {.environment = systemEnvironmentWith({{u"QT_QPA_PLATFORM"_s, u"offscreen"_s},
                                                   {u"QT_QUICK_BACKEND"_s, u"software"_s}})});
        QVERIFY2(gui.exitCode == 0, qPrintable(gui.dump()));
        const auto match = QRegularExpression(QStringLiteral("render 2 complete: view (\\S+) (\\S+) (\\S+)")).match(gui.out);
        QVERIFY2(match.hasMatch(), qPrintable(gui.dump()));
        // The zoom keeps the complex point under the wheel where it was.
        const double factor = 1.25 * 1.25, span = 3.0, spanY = span * 240 / 320;
        const double px = -0.5 + (0.3 - 0.5) * span, py = 0.0 - (0.6 - 0.5) * spanY;
        QVERIFY2(qAbs(match.captured(3).toDouble() - span / factor) < 1e-12, qPrintable(gui.out));
        QVERIFY2(qAbs(match.captured(1).toDouble() - (px - (0.3 - 0.5) * span / factor)) < 1e-6, qPrintable(gui.out));
        QVERIFY2(qAbs(match.captured(2).toDouble() - (py + (0.6 - 0.5) * spanY / factor)) < 1e-6, qPrintable(gui.out));
        const ProcessRun alone = renderAlone(size + QStringList{u"--center-x"_s, match.captured(1), u"--center-y"_s,
                                                                match.captured(2), u"--span"_s, match.captured(3)},
                                             dir.filePath(u"one.png"_s));
        QVERIFY2(alone.exitCode == 0, qPrintable(alone.dump()));
        const QImage one = rgb(dir.filePath(QStringLiteral("one.png")));
        QCOMPARE(one.size(), QSize(320, 240));
        for (int rank = 0; rank < 3; ++rank) {
            QCOMPARE(differingPixels(rgb(dir.filePath(QStringLiteral("gui-%1.png").arg(rank))), one), 0);
            // The window shows it: a screenshot with the picture's colours in it.
            const QImage shot = rgb(dir.filePath(QStringLiteral("shot-%1.png").arg(rank)));
            QVERIFY2(!shot.isNull() && shot.width() >= 320, qPrintable(QString::number(rank)));
            QSet<QRgb> colours;
            for (int y = 0; y < shot.height(); y += 7)
                for (int x = 0; x < shot.width(); x += 7)
                    colours.insert(shot.pixel(x, y));
            QVERIFY2(colours.size() > 20, qPrintable(QStringLiteral("rank %1: %2 colours").arg(rank).arg(colours.size())));
        }
        // The first picture differed: the zoom really changed what is shown.
        QVERIFY(gui.out.contains(QStringLiteral("render 1 complete: view -0.5 0 3")));
    }
};

QTEST_GUILESS_MAIN(TestMandelbrot)
#include "tst_mandelbrot.moc"
