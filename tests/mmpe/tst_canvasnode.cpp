// tst_canvasnode: MMPE across real processes. `mmpirun -n 4` (local
// transport) runs canvasnode, where every rank in turn broadcasts a frame of
// every primitive kind and renders the shared scene to a PNG: the four images
// must be identical and equal to this process's render of the same frames.
// Then as a tiled wall: each rank's column, put together, is the same
// picture, and each tile's device received less than the whole stream.
#include "offscreenmain.h"
#include "canvasnodescene.h"
#include "processrun.h"

#include <QDir>
#include <QRegion>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace mmpi::test;

namespace {

const QString CanvasNode = QStringLiteral(CANVASNODE_PATH);
constexpr int Ranks = 4;

ProcessRun runNodes(const QString &dir, const QStringList &extra)
{
    return runMmpirun(QStringList{QStringLiteral("-n"), QString::number(Ranks), QStringLiteral("--transport"),
                                  QStringLiteral("local"), QStringLiteral("--timeout"), QStringLiteral("60"),
                                  QStringLiteral("--"), CanvasNode, QStringLiteral("--out"), dir}
                          + extra,
                      {.timeoutMs = 90000});
}

// rank -> the numbers of its event=done line.
struct Done
{
    quint32 frame = 0;
    quint64 bytes = 0, commands = 0, wholeBytes = 0;
};

QHash<int, Done> doneLines(const QString &out)
{
    static const QRegularExpression line(
        QStringLiteral(R"(event=done rank=(\d+) frame=(\d+) bytes=(\d+) commands=(\d+) whole-bytes=(\d+))"));
    QHash<int, Done> done;
    for (auto it = line.globalMatch(out); it.hasNext();) {
        const auto m = it.next();
        done.insert(m.captured(1).toInt(), {m.captured(2).toUInt(), m.captured(3).toULongLong(),
                                            m.captured(4).toULongLong(), m.captured(5).toULongLong()});
    }
    return done;
}

// PNG keeps straight alpha: compare in that form.
QImage straight(const QImage &image)
{
    return image.convertToFormat(QImage::Format_ARGB32);
}

QImage reference()
{
    return straight(canvasnode::referenceScene(Ranks).toImage());
}

} // namespace

class TestCanvasNode : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void everyRankRendersTheSamePicture()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const ProcessRun run = runNodes(dir.path(), {});
        QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
        const auto done = doneLines(run.out);
        QCOMPARE(done.size(), Ranks);
        const QImage expected = reference();
        QVERIFY(expected != straight(mmpi::CanvasScene(canvasnode::Logical).toImage()));
        QList<QImage> images;
        for (int r = 0; r < Ranks; ++r) {
            QCOMPARE(done[r].frame, quint32(Ranks));
            const QImage image(QDir(dir.path()).filePath(QStringLiteral("rank-%1.png").arg(r)));
            QVERIFY2(!image.isNull(), qPrintable(run.dump()));
            images << straight(image);
        }
        for (int r = 1; r < Ranks; ++r)
            QCOMPARE(images[r], images[0]);
        QCOMPARE(images[0], expected);
        // Without viewports every member received the whole stream.
        for (int r = 1; r < Ranks; ++r)
            QCOMPARE(done[r].bytes, done[0].wholeBytes);
    }

    void tiledWallComposesThePicture()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const ProcessRun run = runNodes(dir.path(), {QStringLiteral("--tiled")});
        QVERIFY2(run.exitCode == 0, qPrintable(run.dump()));
        const auto done = doneLines(run.out);
        QCOMPARE(done.size(), Ranks);
        // The columns cover the canvas; each is its part of the picture.
        const QImage expected = reference();
        QRegion covered;
        for (int r = 0; r < Ranks; ++r) {
            const QRect area = canvasnode::tile(r, Ranks);
            covered += area;
            const QImage tile(QDir(dir.path()).filePath(QStringLiteral("tile-%1.png").arg(r)));
            QVERIFY2(!tile.isNull(), qPrintable(run.dump()));
            QCOMPARE(straight(tile), expected.copy(area));
            if (r > 0) {
                QVERIFY2(done[r].bytes > 0 && done[r].bytes < done[0].wholeBytes,
                         qPrintable(QStringLiteral("rank %1 received %2 of %3 bytes")
                                        .arg(r).arg(done[r].bytes).arg(done[0].wholeBytes)));
            }
        }
        QCOMPARE(covered, QRegion(QRect(QPoint(0, 0), canvasnode::Logical)));
    }
};

MMPI_OFFSCREEN_TEST_MAIN(TestCanvasNode)

#include "tst_canvasnode.moc"
