// The Mandelbrot demo end to end: a render on 4 nodes under mmpirun, and one
// where a worker is killed (SIGKILL) midway, give a PNG identical pixel for
// pixel to a one-node render; the summary and the progress are printed. With
// --share every node's canvas holds the root's picture (tinted or not); in
// GUI mode (offscreen) a wheel turned on a non-root node makes every node
// show a one-node render of the new view.
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Run
{
    int exitCode = -1;
    QString out, err;
    QString dump() const { return QStringLiteral("exit %1\n--- stdout\n%2\n--- stderr\n%3").arg(exitCode).arg(out, err); }
};

Run run(const QString &program, const QStringList &args, const QProcessEnvironment &env = {})
{
    QProcess p;
    if (!env.isEmpty())
        p.setProcessEnvironment(env);
    p.start(program, args);
    Run r;
    if (!p.waitForFinished(120000))
        p.kill();
    p.waitForFinished(5000);
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

const QString mmpirun = QStringLiteral(MMPIRUN_PATH);
const QString mandelbrot = QStringLiteral(MMPI_MANDELBROT_PATH);

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
        const QStringList view{QStringLiteral("--width"), QStringLiteral("400"), QStringLiteral("--height"),
                               QStringLiteral("300")};
        const Run alone = run(mandelbrot, view + QStringList{QStringLiteral("--out"), dir.filePath(QStringLiteral("one.png"))});
        QVERIFY2(alone.exitCode == 0, qPrintable(alone.dump()));
        const Run four = run(mmpirun, QStringList{QStringLiteral("-n"), QStringLiteral("4"), QStringLiteral("--timeout"),
                                                  QStringLiteral("60"), mandelbrot}
                                          + view + QStringList{QStringLiteral("--out"), dir.filePath(QStringLiteral("four.png"))});
        QVERIFY2(four.exitCode == 0, qPrintable(four.dump()));
        QVERIFY2(four.out.contains(QStringLiteral("on 4 node(s); bands per node: 1:")), qPrintable(four.dump()));
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
        const QStringList view{QStringLiteral("--width"), QStringLiteral("800"), QStringLiteral("--height"),
                               QStringLiteral("600"), QStringLiteral("--iterations"), QStringLiteral("3000"),
                               QStringLiteral("--band"), QStringLiteral("4")};
        const Run alone = run(mandelbrot, view + QStringList{QStringLiteral("--out"), dir.filePath(QStringLiteral("one.png"))});
        QVERIFY2(alone.exitCode == 0, qPrintable(alone.dump()));
        const Run killed = run(mmpirun, QStringList{QStringLiteral("-n"), QStringLiteral("4"), QStringLiteral("--transport"),
                                                    QStringLiteral("sim"), QStringLiteral("--link"), QStringLiteral("ideal"),
                                                    QStringLiteral("--fault"), QStringLiteral("rank 2 terminates at 300ms"),
                                                    QStringLiteral("--keep-going"), QStringLiteral("--timeout"),
                                                    QStringLiteral("90"), mandelbrot}
                                            + view + QStringList{QStringLiteral("--out"), dir.filePath(QStringLiteral("killed.png"))});
        QVERIFY2(killed.err.contains(QStringLiteral("node 2 crashed with signal 9")), qPrintable(killed.dump()));
        QVERIFY2(killed.err.contains(QStringLiteral("mmpi-mandelbrot: node 2 was lost")), qPrintable(killed.dump()));
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
        const QStringList view{QStringLiteral("--width"), QStringLiteral("400"), QStringLiteral("--height"),
                               QStringLiteral("300")};
        const Run alone = run(mandelbrot, view + QStringList{QStringLiteral("--out"), dir.filePath(QStringLiteral("one.png"))});
        QVERIFY2(alone.exitCode == 0, qPrintable(alone.dump()));
        QStringList args{QStringLiteral("-n"), QStringLiteral("3"), QStringLiteral("--timeout"), QStringLiteral("60"),
                         mandelbrot, QStringLiteral("--canvas-out"), dir.filePath(QStringLiteral("canvas-{rank}.png")),
                         QStringLiteral("--out"), dir.filePath(QStringLiteral("root.png"))};
        if (tint)
            args << QStringLiteral("--tint");
        const Run three = run(mmpirun, args + view);
        QVERIFY2(three.exitCode == 0, qPrintable(three.dump()));
        QVERIFY2(three.out.contains(QStringLiteral("on 3 node(s); bands per node: 1:")), qPrintable(three.dump()));
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
        const QStringList view{QStringLiteral("--width"), QStringLiteral("800"), QStringLiteral("--height"),
                               QStringLiteral("600"), QStringLiteral("--iterations"), QStringLiteral("3000"),
                               QStringLiteral("--band"), QStringLiteral("4")};
        const Run alone = run(mandelbrot, view + QStringList{QStringLiteral("--out"), dir.filePath(QStringLiteral("one.png"))});
        QVERIFY2(alone.exitCode == 0, qPrintable(alone.dump()));
        const Run killed = run(mmpirun, QStringList{QStringLiteral("-n"), QStringLiteral("4"), QStringLiteral("--transport"),
                                                    QStringLiteral("sim"), QStringLiteral("--link"), QStringLiteral("ideal"),
                                                    QStringLiteral("--fault"), QStringLiteral("rank 2 terminates at 300ms"),
                                                    QStringLiteral("--keep-going"), QStringLiteral("--timeout"),
                                                    QStringLiteral("90"), mandelbrot, QStringLiteral("--canvas-out"),
                                                    dir.filePath(QStringLiteral("canvas-{rank}.png"))}
                                            + view + QStringList{QStringLiteral("--out"), dir.filePath(QStringLiteral("killed.png"))});
        QVERIFY2(killed.err.contains(QStringLiteral("node 2 crashed with signal 9")), qPrintable(killed.dump()));
        QVERIFY2(killed.err.contains(QStringLiteral("mmpi-mandelbrot: node 2 was lost")), qPrintable(killed.dump()));
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
        const Run alone = run(mandelbrot, {QStringLiteral("--width"), QStringLiteral("200"), QStringLiteral("--height"),
                                           QStringLiteral("150"), QStringLiteral("--canvas-out"),
                                           dir.filePath(QStringLiteral("canvas-{rank}.png")), QStringLiteral("--out"),
                                           dir.filePath(QStringLiteral("one.png"))});
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
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("QT_QUICK_BACKEND"), QStringLiteral("software"));
        const QStringList size{QStringLiteral("--width"), QStringLiteral("320"), QStringLiteral("--height"),
                               QStringLiteral("240")};
        const Run gui = run(mmpirun,
                            QStringList{QStringLiteral("-n"), QStringLiteral("3"), QStringLiteral("--timeout"),
                                        QStringLiteral("90"), mandelbrot, QStringLiteral("--gui"),
                                        QStringLiteral("--script-wheel"), QStringLiteral("0.3,0.6,2"),
                                        QStringLiteral("--script-rank"), QStringLiteral("1"),
                                        QStringLiteral("--exit-after"), QStringLiteral("2"),
                                        QStringLiteral("--canvas-out"), dir.filePath(QStringLiteral("gui-{rank}.png")),
                                        QStringLiteral("--screenshot"), dir.filePath(QStringLiteral("shot-{rank}.png"))}
                                + size,
                            env);
        QVERIFY2(gui.exitCode == 0, qPrintable(gui.dump()));
        const auto match = QRegularExpression(QStringLiteral("render 2 complete: view (\\S+) (\\S+) (\\S+)")).match(gui.out);
        QVERIFY2(match.hasMatch(), qPrintable(gui.dump()));
        // The zoom keeps the complex point under the wheel where it was.
        const double factor = 1.25 * 1.25, span = 3.0, spanY = span * 240 / 320;
        const double px = -0.5 + (0.3 - 0.5) * span, py = 0.0 - (0.6 - 0.5) * spanY;
        QVERIFY2(qAbs(match.captured(3).toDouble() - span / factor) < 1e-12, qPrintable(gui.out));
        QVERIFY2(qAbs(match.captured(1).toDouble() - (px - (0.3 - 0.5) * span / factor)) < 1e-6, qPrintable(gui.out));
        QVERIFY2(qAbs(match.captured(2).toDouble() - (py + (0.6 - 0.5) * spanY / factor)) < 1e-6, qPrintable(gui.out));
        const Run alone = run(mandelbrot, size + QStringList{QStringLiteral("--center-x"), match.captured(1),
                                                             QStringLiteral("--center-y"), match.captured(2),
                                                             QStringLiteral("--span"), match.captured(3),
                                                             QStringLiteral("--out"), dir.filePath(QStringLiteral("one.png"))});
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
