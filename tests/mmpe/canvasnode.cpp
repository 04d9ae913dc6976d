// canvasnode: one rank of the multi-process canvas test, started by mmpirun.
// Every rank in turn broadcasts its frame of canvasnodescene.h through a
// ParallelCanvas (a frame barrier after each turn fixes the order), then
// renders its scene headlessly to <out>/rank-<r>.png. With --tiled each rank
// first takes a column of the canvas as its viewport and also writes that
// tile to <out>/tile-<r>.png. Prints one line:
//   event=done rank=R frame=F bytes=B commands=C whole-bytes=W
// (bytes and commands received from the root; W, the whole stream's bytes,
// only on rank 0) or event=failed reason=... (exit 1).
#include "canvasnodescene.h"
#include "nodeapp.h"

#include <mmpi/mmpe/parallelcanvas.h>

#include <QCommandLineParser>
#include <QDeadlineTimer>
#include <QDir>
#include <QGuiApplication>

using namespace mmpi;
using mmpi::test::say;

namespace {

int failed(const QString &reason)
{
    say(QStringLiteral("event=failed reason=%1").arg(reason));
    return 1;
}

// A barrier with the event loop running (Request::wait() would block it),
// so that this rank's canvas goes on answering the others meanwhile.
QCoro::Task<Error> barrier(Communicator comm)
{
    const auto done = co_await comm.barrier();
    co_return done ? Error() : done.error();
}

quint64 wholeStreamBytes(const CanvasScene &scene)
{
    CanvasEncoder encoder;
    quint64 bytes = 0;
    for (const CanvasBatch &b : scene.batches())
        if (const auto encoded = encoder.encode(b))
            bytes += quint64(encoded->size());
    return bytes;
}

int draw(const Communicator &comm, const QDir &out, bool tiled)
{
    ParallelCanvas canvas(comm, ParallelCanvas::Mode::Broadcast, 0, canvasnode::Logical);
    int replays = 0;
    QObject::connect(&canvas, &ParallelCanvas::replayed, [&replays] { ++replays; });
    if (tiled)
        if (auto ok = canvas.setViewport(canvasnode::tile(comm.rank(), comm.size())); !ok)
            return failed(ok.error().toString());
    // A member asks for the replay when it is made, and again with its
    // viewport: both answers (empty, nothing is drawn yet) come before any
    // frame, so the byte counts below hold exactly the frames.
    const int expected = canvas.isRoot() ? 0 : (tiled ? 2 : 1);
    const QDeadlineTimer deadline(20000);
    while (replays < expected && !deadline.hasExpired())
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    if (replays < expected)
        return failed(QStringLiteral("no replay from the root within 20 s"));
    if (const Error error = QCoro::waitFor(barrier(comm)); error.isError())
        return failed(error.toString());
    for (int turn = 0; turn < comm.size(); ++turn) {
        if (turn == comm.rank()) {
            for (const CanvasCommand &c : canvasnode::rankFrame(turn))
                if (auto ok = canvas.append(c); !ok)
                    return failed(ok.error().toString());
            if (auto ok = canvas.endFrame(); !ok)
                return failed(ok.error().toString());
        }
        const auto flip = QCoro::waitFor(canvas.flipTogether());
        if (flip.error.isError())
            return failed(flip.error.toString());
    }
    const QString suffix = QStringLiteral("-%1.png").arg(comm.rank());
    if (!canvas.image().save(out.filePath(QStringLiteral("rank") + suffix)))
        return failed(QStringLiteral("cannot write %1").arg(out.filePath(QStringLiteral("rank") + suffix)));
    if (tiled && !canvas.viewportImage().save(out.filePath(QStringLiteral("tile") + suffix)))
        return failed(QStringLiteral("cannot write %1").arg(out.filePath(QStringLiteral("tile") + suffix)));
    // Nobody leaves (and takes its links along) before everyone has drawn.
    if (const Error error = QCoro::waitFor(barrier(comm)); error.isError())
        return failed(error.toString());
    say(QStringLiteral("event=done rank=%1 frame=%2 bytes=%3 commands=%4 whole-bytes=%5")
            .arg(comm.rank())
            .arg(canvas.scene().currentFrame().value_or(0))
            .arg(canvas.bytesReceived())
            .arg(canvas.commandsReceived())
            .arg(canvas.isRoot() ? wholeStreamBytes(canvas.scene()) : 0));
    return 0;
}

} // namespace

int main(int argc, char *argv[])
{
    // Text needs fonts, hence a QGuiApplication; no display is needed.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QGuiApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addOption({QStringLiteral("out"), QStringLiteral("Directory for the PNGs."), QStringLiteral("DIR")});
    parser.addOption({QStringLiteral("tiled"), QStringLiteral("Each rank shows a column of the canvas.")});
    parser.process(app);
    const QDir out(parser.value(QStringLiteral("out")));
    if (!parser.isSet(QStringLiteral("out")) || !out.exists())
        return failed(QStringLiteral("--out needs an existing directory"));
    World world;
    const auto comm = test::joinLaunchedWorld(world);
    if (!comm)
        return failed(comm.error().toString());
    // The canvas listens to every message of its communicator: its own.
    const auto own = comm->dup().wait();
    const int status = own ? draw(*own, out, parser.isSet(QStringLiteral("tiled"))) : failed(own.error().toString());
    world.closeAndWait();
    return status;
}
