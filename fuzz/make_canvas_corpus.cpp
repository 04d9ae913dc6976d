// Writes the seed corpus of fuzz_canvasdecoder: real batches from the MMPE
// encoder (one of every command, the benchmark's frame of lines and rects,
// images compressed and raw, opaque and not, text in several scripts, a
// replay's opening, a frame cut to a viewport). Run: fuzz_make_canvas_corpus <dir>.
#include "canvassamples.h" // tests/mmpe: one of every command
#include "seedfiles.h"

#include <mmpi/mmpe/canvasencoder.h>
#include <mmpi/mmpe/canvasviewport.h>

#include <QImage>

using namespace mmpi;

namespace {

// The benchmark's mix: lines, every fifth a filled rect.
QList<CanvasCommand> benchFrame()
{
    QList<CanvasCommand> c;
    for (int i = 0; i < 40; ++i) {
        const int x = (37 + i * 53) % 1000, y = (11 + i * 29) % 740;
        c << (i % 5 == 4 ? CanvasCommand::filledRect(QRect(x, y, 20, 12))
                         : CanvasCommand::line(QPoint(x, y), QPoint((x + 40) % 1024, (y + 25) % 768)));
    }
    return c;
}

std::optional<QByteArray> encode(const QList<CanvasCommand> &commands, quint32 frame, bool compress = true)
{
    CanvasEncoder encoder;
    encoder.setFrameNumber(frame);
    encoder.setImageCompression(compress);
    for (const CanvasCommand &c : commands)
        if (!encoder.append(c))
            return std::nullopt;
    return encoder.endFrame();
}

bool writeSeed(const QString &dir, const QString &name, const std::optional<QByteArray> &batch)
{
    return batch && fuzz::writeSeedFile(dir, name, {*batch});
}

} // namespace

int main(int argc, char **argv)
{
    const QString dir = fuzz::corpusDirectory(argc, argv);
    if (dir.isEmpty())
        return 2;
    const QList<CanvasCommand> text{CanvasCommand::setFont({QStringLiteral("Noto Sans CJK"), 30}),
                                    CanvasCommand::textAt({0, 40}, QStringLiteral("漢字 かな Ελληνικά русский")),
                                    CanvasCommand::setFont({QString(), 9}),
                                    CanvasCommand::textAt({-20, 32767}, QStringLiteral("edge 🙂"))};
    const QList<CanvasCommand> replayStart{CanvasCommand::setPen({0xFF00FF00, 0, CanvasPenStyle::Dot}),
                                           CanvasCommand::setBrush({CanvasBrushStyle::Solid, 0xFF000000}),
                                           CanvasCommand::setFont({QStringLiteral("Serif"), 1024}),
                                           CanvasCommand::clear(0xFF203040),
                                           CanvasCommand::ellipse({-32768, -32768, 65535, 65535})};
    // A frame as a tile's device receives it.
    CanvasState state;
    QList<CanvasCommand> tile = CanvasViewport(QRect(0, 0, 512, 384)).filter(samples::everyCommand() + benchFrame(), state);

    const bool ok = writeSeed(dir, QStringLiteral("every-command.mmpe"), encode(samples::everyCommand(), 1))
        && writeSeed(dir, QStringLiteral("every-command-raw.mmpe"), encode(samples::everyCommand(), 2, false))
        && writeSeed(dir, QStringLiteral("bench-frame.mmpe"), encode(benchFrame(), 77))
        && writeSeed(dir, QStringLiteral("image-gradient.mmpe"),
                     encode({CanvasCommand::imageAt({0, 0}, samples::gradientImage(24, 16, true))}, 3))
        && writeSeed(dir, QStringLiteral("image-opaque-rows.mmpe"),
                     encode({CanvasCommand::imageAt({0, 64}, samples::gradientImage(64, 2, false))}, 4))
        && writeSeed(dir, QStringLiteral("image-noise.mmpe"), encode({CanvasCommand::imageAt({5, 5}, samples::noiseImage(8, 8, 3))}, 5))
        && writeSeed(dir, QStringLiteral("text.mmpe"), encode(text, 6))
        && writeSeed(dir, QStringLiteral("replay-start.mmpe"), encode(replayStart, 0xFFFFFFFF))
        && writeSeed(dir, QStringLiteral("tile.mmpe"), encode(tile, 8))
        && writeSeed(dir, QStringLiteral("empty-frame.mmpe"), encode({}, 9));
    return fuzz::corpusStatus(ok, dir);
}
