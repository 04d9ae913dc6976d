// The Mandelbrot demo end to end: a render on 4 nodes under mmpirun, and one
// where a worker is killed (SIGKILL) midway, give a PNG identical pixel for
// pixel to a one-node render; the summary and the progress are printed.
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Run
{
    int exitCode = -1;
    QString out, err;
    QString dump() const { return QStringLiteral("exit %1\n--- stdout\n%2\n--- stderr\n%3").arg(exitCode).arg(out, err); }
};

Run run(const QString &program, const QStringList &args)
{
    QProcess p;
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
};

QTEST_GUILESS_MAIN(TestMandelbrot)
#include "tst_mandelbrot.moc"
