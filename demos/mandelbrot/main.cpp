// mmpi-mandelbrot: renders the Mandelbrot set across every node of a world
// with the fault-tolerant work pool and writes a PNG, e.g.
//   mmpirun -n 4 mmpi-mandelbrot --width 1920 --height 1080 --out mandelbrot.png
// Rank 0 hands out bands of rows and assembles the picture; every other rank
// computes bands. A worker that is lost costs only its bands, which others
// compute again: the picture is the same as a one-node render. Run without
// mmpirun it renders alone. --share also draws every band on a broadcast
// MMPE canvas, so every node holds the picture; --gui shows it in a window on
// every node, where a zoom or pan renders the new view across the world.
#include "options.h"

#include <mmpi/ft/workpool.h>
#include <mmpi/world/world.h>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QGuiApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QtEndian>

#include <cstdio>
#include <memory>
#include <unistd.h>

using namespace mmpi;
using namespace mmpi::demo;

namespace mmpi::demo {

int writeSummary(const Options &o, const QImage &image, double seconds, double workSeconds, const QString &perNode,
                 int nodes)
{
    if (!image.save(o.out, "PNG")) {
        std::fprintf(stderr, "mmpi-mandelbrot: cannot write %s\n", qPrintable(o.out));
        return 1;
    }
    // Summed band compute time over wall time is how many bands were being
    // computed at once on average, not a speedup: nodes that share cores
    // each count their time-sliced share in full.
    std::printf("rendered %dx%d (%d iterations) in %.2f s on %d node(s)%s\n"
                "work %.2f s / wall %.2f s = %.1f bands in flight on average\nwrote %s\n",
                o.view.width, o.view.height, o.view.maxIterations, seconds, nodes,
                perNode.isEmpty() ? "" : qPrintable(QStringLiteral("; bands per node: ") + perNode), workSeconds,
                seconds, seconds > 0 ? workSeconds / seconds : 0.0, qPrintable(o.out));
    return 0;
}

} // namespace mmpi::demo

namespace {

// The progress bar: redrawn in place on a terminal, a line per tenth in a
// pipe (mmpirun forwards whole lines).
class Progress
{
public:
    explicit Progress(qint64 total) : m_total(total), m_terminal(::isatty(STDERR_FILENO)) {}
    void update(qint64 done)
    {
        const int percent = m_total ? int(done * 100 / m_total) : 100;
        if (m_terminal) {
            const int filled = percent * 40 / 100;
            std::fprintf(stderr, "\r[%s%s] %3d%% %lld/%lld bands", QByteArray(filled, '#').constData(),
                         QByteArray(40 - filled, '.').constData(), percent, static_cast<long long>(done),
                         static_cast<long long>(m_total));
            if (done == m_total)
                std::fprintf(stderr, "\n");
        } else if (percent / 10 != m_lastTenth || done == m_total) {
            m_lastTenth = percent / 10;
            std::fprintf(stderr, "rendering: %d%% (%lld/%lld bands)\n", percent, static_cast<long long>(done),
                         static_cast<long long>(m_total));
        }
        std::fflush(stderr);
    }

private:
    qint64 m_total;
    bool m_terminal;
    int m_lastTenth = -1;
};

int bandCount(const Options &o) { return demo::bandCount(o.view, o.band); }
QByteArray computeBand(const Options &o, int band) { return timedBand(o.view, o.band, band); }

int renderAlone(const Options &o)
{
    QElapsedTimer clock;
    clock.start();
    QImage image(o.view.width, o.view.height, QImage::Format_RGB32);
    Progress progress(bandCount(o));
    double work = 0;
    for (int b = 0; b < bandCount(o); ++b) {
        const QByteArray result = computeBand(o, b);
        work += double(qFromBigEndian<qint64>(result.constData())) / 1e9;
        demo::placeBand(image, b * o.band, result.sliced(8), 0);
        progress.update(b + 1);
    }
    return writeSummary(o, image, double(clock.nsecsElapsed()) / 1e9, work, {}, 1);
}

int manage(World &world, WorkPool &pool, const Options &o)
{
    QElapsedTimer clock;
    clock.start();
    QImage image(o.view.width, o.view.height, QImage::Format_RGB32);
    image.fill(Qt::black);
    Progress progress(bandCount(o));
    double work = 0;
    QObject::connect(&pool, &WorkPool::resultReady, [&](qint64 band, int worker, const QByteArray &result) {
        if (result.size() < 8)
            return;
        work += double(qFromBigEndian<qint64>(result.constData())) / 1e9;
        demo::placeBand(image, int(band) * o.band, result.sliced(8), o.tint ? tintOf(worker) : 0);
        progress.update(pool.done());
    });
    QObject::connect(&pool, &WorkPool::workerLost, [](int worker, qint64 reissued) {
        std::fprintf(stderr, "mmpi-mandelbrot: node %d was lost; its %lld band(s) go to the others\n", worker,
                     static_cast<long long>(reissued));
    });
    QEventLoop loop;
    int status = 0;
    QObject::connect(&pool, &WorkPool::finished, &loop, &QEventLoop::quit);
    QObject::connect(&pool, &WorkPool::failed, &loop, [&](const Error &reason) {
        std::fprintf(stderr, "mmpi-mandelbrot: %s\n", qPrintable(reason.message));
        status = 1;
        loop.quit();
    });
    QList<QByteArray> items;
    for (int b = 0; b < bandCount(o); ++b)
        items << QByteArray::number(b);
    pool.manage(items);
    if (pool.done() < pool.total())
        loop.exec();
    if (status != 0)
        return status;
    QStringList perNode;
    const auto counts = pool.resultsByWorker();
    for (int r = 0; r < world.size(); ++r)
        perNode << QStringLiteral("%1:%2").arg(r).arg(counts.value(r));
    return writeSummary(o, image, double(clock.nsecsElapsed()) / 1e9, work, perNode.join(u' '), world.size());
}

} // namespace

// Every band also goes out as an image block on a canvas every node keeps:
// the root prints the same progress and summary, then all save their canvas.
int mmpi::demo::runShared(const Options &o)
{
    SharedWorld shared;
    if (!shared.form())
        return 1;
    SharedRender render(o.view, o.band, o.tint, shared.network());
    QEventLoop loop;
    int status = 0;
    std::optional<Progress> progress;
    if (render.isRoot())
        progress.emplace(bandCount(o.view, o.band));
    const auto saveCanvas = [&] {
        if (o.canvasOut.isEmpty())
            return;
        const QString path = perNodePath(o.canvasOut, render.rank());
        if (!render.canvasImage().save(path, "PNG")) {
            std::fprintf(stderr, "mmpi-mandelbrot: cannot write %s\n", qPrintable(path));
            status = 1;
        }
    };
    QObject::connect(&render, &SharedRender::progressChanged, [&] {
        if (progress && render.done() > 0)
            progress->update(render.done());
    });
    QObject::connect(&render, &SharedRender::workerLost, [](int worker, qint64 reissued) {
        std::fprintf(stderr, "mmpi-mandelbrot: node %d was lost; its %lld band(s) go to the others\n", worker,
                     static_cast<long long>(reissued));
    });
    QObject::connect(&render, &SharedRender::failed, &loop, [&](const QString &reason) {
        std::fprintf(stderr, "mmpi-mandelbrot: %s\n", qPrintable(reason));
        status = 1;
        loop.quit();
    });
    QObject::connect(&render, &SharedRender::renderComplete, &loop, [&] {
        if (!render.isRoot())
            return;
        QStringList perNode;
        const auto counts = render.bandsByNode();
        if (render.nodes() > 1) // alone, the summary names no nodes
            for (int r = 0; r < render.nodes(); ++r)
                perNode << QStringLiteral("%1:%2").arg(r).arg(counts.value(r));
        status = writeSummary(o, render.picture(), render.wallSeconds(), render.workSeconds(), perNode.join(u' '),
                              render.nodes());
        render.finishTogether();
    });
    QObject::connect(&render, &SharedRender::finishing, saveCanvas);
    QObject::connect(&render, &SharedRender::finishedTogether, &loop, [&] {
        if (render.isRoot())
            saveCanvas();
        loop.quit();
    });
    render.start();
    loop.exec();
    return status;
}

namespace {

int parse(QCoreApplication &app, Options &o)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Renders the Mandelbrot set across the nodes of an MMPI world (or alone) and writes a PNG;\n"
        "with --share every node's canvas shows the picture as it fills in, with --gui in a window\n"
        "where wheel, pinch and drag zoom and pan on any node."));
    parser.addHelpOption();
    const QList<QCommandLineOption> options{
        {QStringLiteral("width"), QStringLiteral("Image width."), QStringLiteral("PX"), QStringLiteral("800")},
        {QStringLiteral("height"), QStringLiteral("Image height."), QStringLiteral("PX"), QStringLiteral("600")},
        {QStringLiteral("iterations"), QStringLiteral("Iterations per pixel."), QStringLiteral("N"), QStringLiteral("500")},
        {QStringLiteral("center-x"), QStringLiteral("View centre, real part."), QStringLiteral("X"), QStringLiteral("-0.5")},
        {QStringLiteral("center-y"), QStringLiteral("View centre, imaginary part."), QStringLiteral("Y"), QStringLiteral("0")},
        {QStringLiteral("span"), QStringLiteral("View width in the complex plane."), QStringLiteral("S"), QStringLiteral("3")},
        {QStringLiteral("band"), QStringLiteral("Rows per work item."), QStringLiteral("ROWS"), QStringLiteral("8")},
        {QStringLiteral("out"), QStringLiteral("PNG to write."), QStringLiteral("FILE"), QStringLiteral("mandelbrot.png")},
        {QStringLiteral("tint"), QStringLiteral("Tint each band by the node that computed it.")},
        {QStringLiteral("share"), QStringLiteral("Broadcast every band as an MMPE image block: every node's canvas fills in.")},
        {QStringLiteral("canvas-out"), QStringLiteral("Every node saves its canvas ({rank}: the node's rank; implies --share)."),
         QStringLiteral("FILE")},
        {QStringLiteral("gui"), QStringLiteral("A window on every node (QML): the shared picture, progress, tint, zoom and pan.")},
        {QStringLiteral("screenshot"), QStringLiteral("GUI: grab the window when quitting ({rank} as above)."),
         QStringLiteral("FILE")},
        {QStringLiteral("exit-after"), QStringLiteral("GUI: save and quit on every node after N complete renders."),
         QStringLiteral("N"), QStringLiteral("0")},
        {QStringLiteral("script-wheel"), QStringLiteral("GUI: once the first picture is complete, turn the wheel STEPS "
                                                        "notches at fractions FX,FY of the picture."),
         QStringLiteral("FX,FY,STEPS")},
        {QStringLiteral("script-rank"), QStringLiteral("GUI: the node that turns the wheel."), QStringLiteral("RANK"),
         QStringLiteral("1")},
    };
    parser.addOptions(options);
    parser.process(app);
    o.view.width = parser.value(QStringLiteral("width")).toInt();
    o.view.height = parser.value(QStringLiteral("height")).toInt();
    o.view.maxIterations = parser.value(QStringLiteral("iterations")).toInt();
    o.view.centerX = parser.value(QStringLiteral("center-x")).toDouble();
    o.view.centerY = parser.value(QStringLiteral("center-y")).toDouble();
    o.view.spanX = parser.value(QStringLiteral("span")).toDouble();
    o.band = parser.value(QStringLiteral("band")).toInt();
    o.out = parser.value(QStringLiteral("out"));
    o.tint = parser.isSet(QStringLiteral("tint"));
    o.canvasOut = parser.value(QStringLiteral("canvas-out"));
    o.gui = parser.isSet(QStringLiteral("gui"));
    o.share = parser.isSet(QStringLiteral("share")) || !o.canvasOut.isEmpty();
    o.screenshot = parser.value(QStringLiteral("screenshot"));
    o.exitAfter = parser.value(QStringLiteral("exit-after")).toInt();
    o.scriptRank = parser.value(QStringLiteral("script-rank")).toInt();
    if (o.view.width < 1 || o.view.width > 16384 || o.view.height < 1 || o.view.height > 16384
        || o.view.maxIterations < 1 || o.band < 1 || !(o.view.spanX > 0)) {
        std::fprintf(stderr, "mmpi-mandelbrot: width and height 1..16384, iterations and band >= 1, span > 0\n");
        return 2;
    }
    if (parser.isSet(QStringLiteral("script-wheel"))) {
        const QStringList parts = parser.value(QStringLiteral("script-wheel")).split(u',');
        bool okX = false, okY = false, okSteps = false;
        if (parts.size() == 3) {
            o.scriptWheelAt = QPointF(parts[0].toDouble(&okX), parts[1].toDouble(&okY));
            o.scriptWheelSteps = parts[2].toInt(&okSteps);
        }
        if (!okX || !okY || !okSteps || o.scriptWheelSteps == 0) {
            std::fprintf(stderr, "mmpi-mandelbrot: --script-wheel wants FX,FY,STEPS (STEPS not 0)\n");
            return 2;
        }
    }
    if ((o.gui || o.share) && !validateView(o.view)) {
        std::fprintf(stderr, "mmpi-mandelbrot: %s\n", qPrintable(validateView(o.view).error().message));
        return 2;
    }
    if (o.exitAfter < 0) {
        std::fprintf(stderr, "mmpi-mandelbrot: --exit-after wants N >= 0\n");
        return 2;
    }
    return 0;
}

bool wantsGui(int argc, char *argv[])
{
    for (int i = 1; i < argc; ++i)
        if (qstrcmp(argv[i], "--gui") == 0 || qstrcmp(argv[i], "-gui") == 0)
            return true;
    return false;
}

} // namespace

int main(int argc, char *argv[])
{
    // A window needs a QGuiApplication; headless runs stay without one.
    std::unique_ptr<QCoreApplication> app = wantsGui(argc, argv)
                                                ? std::make_unique<QGuiApplication>(argc, argv)
                                                : std::make_unique<QCoreApplication>(argc, argv);
    Options o;
    if (const int bad = parse(*app, o))
        return bad;
    if (o.gui)
        return runGui(o);
    if (o.share)
        return runShared(o);
    if (!WorldConfig::isLaunched())
        return renderAlone(o);
    const auto config = WorldConfig::fromEnvironment();
    if (!config) {
        std::fprintf(stderr, "mmpi-mandelbrot: %s\n", qPrintable(config.error().message));
        return 2;
    }
    World world;
    const auto comm = Communicator::world(world);
    world.form(*config);
    if (auto formed = world.waitForFormed(); !formed) {
        std::fprintf(stderr, "mmpi-mandelbrot: %s\n", qPrintable(formed.error().toString()));
        return 1;
    }
    int status = 0;
    if (world.size() == 1) {
        status = renderAlone(o);
    } else {
        WorkPool pool(&world, *comm);
        if (pool.isManager()) {
            // The root computes bands too, on a pool thread: its core would
            // idle otherwise (2 nodes on 2 cores: twice one, not the same).
            pool.setLocalCompute([view = o.view, rows = o.band](qint64 band, const QByteArray &) {
                return timedBand(view, rows, int(band));
            });
            status = manage(world, pool, o);
        } else {
            const auto outcome = QCoro::waitFor(
                pool.work([&o](qint64 band, const QByteArray &) { return computeBand(o, int(band)); }));
            if (outcome.error.isError()) {
                std::fprintf(stderr, "mmpi-mandelbrot: %s\n", qPrintable(outcome.error.message));
                status = 1;
            }
        }
    }
    world.closeAndWait();
    return status;
}
