// mmpi-mandelbrot (headless): renders the Mandelbrot set across every node of
// a world with the fault-tolerant work pool and writes a PNG, e.g.
//   mmpirun -n 4 mmpi-mandelbrot --width 1920 --height 1080 --out mandelbrot.png
// Rank 0 hands out bands of rows and assembles the picture; every other rank
// computes bands. A worker that is lost costs only its bands, which others
// compute again: the picture is the same as a one-node render. Run without
// mmpirun it renders alone.
#include "mandelbrot.h"

#include <mmpi/ft/workpool.h>
#include <mmpi/world/world.h>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QtEndian>

#include <cstdio>
#include <unistd.h>

using namespace mmpi;
using mmpi::demo::View;

namespace {

struct Options
{
    View view;
    int band = 8;
    QString out;
    bool tint = false;
};

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

int bandCount(const Options &o) { return (o.view.height + o.band - 1) / o.band; }
int rowsOf(const Options &o, int band) { return std::min(o.band, o.view.height - band * o.band); }

// A band's result: the nanoseconds it took (for the speedup), then its pixels.
QByteArray computeBand(const Options &o, int band)
{
    QElapsedTimer clock;
    clock.start();
    const QByteArray pixels = demo::renderBand(o.view, band * o.band, rowsOf(o, band));
    QByteArray result(8, Qt::Uninitialized);
    qToBigEndian<qint64>(clock.nsecsElapsed(), result.data());
    return result + pixels;
}

QRgb tintOf(int worker)
{
    static const QRgb colours[] = {qRgb(230, 60, 60), qRgb(60, 200, 80), qRgb(60, 110, 240), qRgb(240, 200, 40),
                                   qRgb(200, 60, 220), qRgb(40, 210, 210), qRgb(250, 140, 30), qRgb(150, 150, 150)};
    return colours[worker % 8];
}

int finish(const Options &o, const QImage &image, double seconds, double workSeconds, const QString &perNode,
           int nodes)
{
    if (!image.save(o.out, "PNG")) {
        std::fprintf(stderr, "mmpi-mandelbrot: cannot write %s\n", qPrintable(o.out));
        return 1;
    }
    std::printf("rendered %dx%d (%d iterations) in %.2f s on %d node(s)%s\n"
                "work %.2f s / wall %.2f s = speedup %.2fx\nwrote %s\n",
                o.view.width, o.view.height, o.view.maxIterations, seconds, nodes,
                perNode.isEmpty() ? "" : qPrintable(QStringLiteral("; bands per node: ") + perNode), workSeconds,
                seconds, seconds > 0 ? workSeconds / seconds : 0.0, qPrintable(o.out));
    return 0;
}

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
    return finish(o, image, double(clock.nsecsElapsed()) / 1e9, work, {}, 1);
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
    for (int r = 1; r < world.size(); ++r)
        perNode << QStringLiteral("%1:%2").arg(r).arg(counts.value(r));
    return finish(o, image, double(clock.nsecsElapsed()) / 1e9, work, perNode.join(u' '), world.size());
}

int parse(QCoreApplication &app, Options &o)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Renders the Mandelbrot set across the nodes of an MMPI world (or alone) and writes a PNG."));
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
    if (o.view.width < 1 || o.view.width > 16384 || o.view.height < 1 || o.view.height > 16384
        || o.view.maxIterations < 1 || o.band < 1 || !(o.view.spanX > 0)) {
        std::fprintf(stderr, "mmpi-mandelbrot: width and height 1..16384, iterations and band >= 1, span > 0\n");
        return 2;
    }
    return 0;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    Options o;
    if (const int bad = parse(app, o))
        return bad;
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
