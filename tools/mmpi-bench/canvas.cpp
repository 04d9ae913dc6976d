#include "canvas.h"

#include <mmpi/mmpe/canvasencoder.h>
#include <mmpi/mmpe/parallelcanvas.h>

#include <QCommandLineParser>
#include <QElapsedTimer>

#include <cstdio>

namespace mmpi::bench {

namespace {

// Primitive `i` of frame `frame`: mostly lines, every fifth a filled rect,
// spread over the canvas so that no two frames draw the same.
CanvasCommand primitive(int frame, int i)
{
    const int x = (frame * 37 + i * 53) % 1000, y = (frame * 11 + i * 29) % 740;
    return i % 5 == 4 ? CanvasCommand::filledRect(QRect(x, y, 20, 12))
                      : CanvasCommand::line(QPoint(x, y), QPoint((x + 40) % 1024, (y + 25) % 768));
}

double bytesPerPrimitive(int primitives)
{
    CanvasEncoder encoder;
    for (int i = 0; i < primitives; ++i)
        (void)encoder.append(primitive(1, i));
    return double(encoder.endFrame().size()) / primitives;
}

} // namespace

int runCanvas(const Communicator &world, int argc, char **argv, const QString &transport, const QString &link)
{
    QCommandLineParser parser;
    parser.addOption({QStringLiteral("frames"), QStringLiteral("Frames to draw."), QStringLiteral("F"), QStringLiteral("100")});
    parser.addOption({QStringLiteral("primitives"), QStringLiteral("Primitives per frame."), QStringLiteral("P"),
                      QStringLiteral("100")});
    parser.addOption({QStringLiteral("json"), QStringLiteral("One JSON line.")});
    parser.addHelpOption();
    QStringList args;
    for (int i = 0; i < argc; ++i)
        args << QString::fromLocal8Bit(argv[i]);
    if (!parser.parse(args) || parser.value(QStringLiteral("frames")).toInt() < 1
        || parser.value(QStringLiteral("primitives")).toInt() < 1) {
        std::fprintf(stderr, "mmpi-bench canvas: %s\n%s", qPrintable(parser.errorText()), qPrintable(parser.helpText()));
        return 2;
    }
    if (parser.isSet(QStringLiteral("help"))) {
        std::printf("%s", qPrintable(parser.helpText()));
        return 0;
    }
    const int frames = parser.value(QStringLiteral("frames")).toInt();
    const int primitives = parser.value(QStringLiteral("primitives")).toInt();
    const auto comm = world.dup().wait(); // the canvas listens to all of its own
    if (!comm) {
        std::fprintf(stderr, "mmpi-bench canvas: %s\n", qPrintable(comm.error().toString()));
        return 1;
    }
    ParallelCanvas canvas(*comm, ParallelCanvas::Mode::Broadcast);
    if (auto ready = comm->barrier().wait(); !ready) { // every canvas listens before the clock starts
        std::fprintf(stderr, "mmpi-bench canvas: %s\n", qPrintable(ready.error().toString()));
        return 1;
    }
    QElapsedTimer clock;
    clock.start();
    if (canvas.isRoot()) {
        for (int f = 1; f <= frames; ++f) {
            for (int i = 0; i < primitives; ++i)
                if (auto ok = canvas.append(primitive(f, i)); !ok) {
                    std::fprintf(stderr, "mmpi-bench canvas: %s\n", qPrintable(ok.error().toString()));
                    return 1;
                }
            if (auto ok = canvas.endFrame(); !ok) {
                std::fprintf(stderr, "mmpi-bench canvas: %s\n", qPrintable(ok.error().toString()));
                return 1;
            }
        }
    }
    // Until every node has applied every frame: flipTogether() returns on a
    // node once it has; the barrier after it tells the root that all have
    // (and adds one barrier's time to the measurement).
    const auto flip = QCoro::waitFor(canvas.flipTogether());
    if (flip.error.isError()) {
        std::fprintf(stderr, "mmpi-bench canvas: %s\n", qPrintable(flip.error.toString()));
        return 1;
    }
    if (auto all = comm->barrier().wait(); !all) {
        std::fprintf(stderr, "mmpi-bench canvas: %s\n", qPrintable(all.error().toString()));
        return 1;
    }
    const double seconds = double(clock.nsecsElapsed()) / 1e9;
    if (!canvas.isRoot())
        return 0;
    const double perSecond = double(frames) * primitives / seconds;
    const double bytes = bytesPerPrimitive(primitives);
    if (parser.isSet(QStringLiteral("json"))) {
        std::printf("{\"op\":\"canvas\",\"transport\":\"%s\",\"link\":\"%s\",\"ranks\":%d,\"results\":[{\"frames\":%d,"
                    "\"primitives_per_frame\":%d,\"seconds\":%.3f,\"primitives_per_s\":%.0f,\"bytes_per_primitive\":%.2f}]}\n",
                    qPrintable(transport), qPrintable(link), comm->size(), frames, primitives, seconds, perSecond, bytes);
    } else {
        std::printf("canvas broadcast over %s%s, %d ranks: %d frames of %d primitives in %.3f s\n"
                    "%12.0f primitives/s to every rank, %.2f bytes per primitive\n",
                    qPrintable(transport), link.isEmpty() ? "" : qPrintable(QStringLiteral(" (") + link + u')'),
                    comm->size(), frames, primitives, seconds, perSecond, bytes);
    }
    return 0;
}

} // namespace mmpi::bench
