// Writes the seed corpus of fuzz_canvasdecoder: real batches from the MMPE
// encoder (one of every command, the benchmark's frame of lines and rects,
// images compressed and raw, opaque and not, text in several scripts, a
// replay's opening, a frame cut to a viewport). Run: fuzz_make_canvas_corpus <dir>.
#include <mmpi/mmpe/canvasencoder.h>
#include <mmpi/mmpe/canvasviewport.h>

#include <QFile>
#include <QImage>

#include <cstdio>

using namespace mmpi;

namespace {

QImage gradient(int w, int h, bool alpha)
{
    QImage img(w, h, alpha ? QImage::Format_ARGB32 : QImage::Format_RGB32);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            img.setPixel(x, y, qRgba(x * 255 / qMax(1, w - 1), y * 255 / qMax(1, h - 1), 90, alpha ? 40 + x % 200 : 255));
    return img;
}

QImage noise(int w, int h)
{
    QImage img(w, h, QImage::Format_ARGB32);
    quint32 s = 2463534242u;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            img.setPixel(x, y, s);
        }
    return img;
}

QList<CanvasCommand> everyCommand()
{
    return {CanvasCommand::setPen({0xFFCC2211, 3, CanvasPenStyle::DashDot}),
            CanvasCommand::setBrush({CanvasBrushStyle::Solid, 0xC01040E0}),
            CanvasCommand::setFont({QStringLiteral("DejaVu Sans"), 14}),
            CanvasCommand::line({5, 6}, {120, 80}),
            CanvasCommand::polyline({{10, 10}, {40, 70}, {90, 20}, {-5, 300}}),
            CanvasCommand::outlineRect({20, 30, 60, 40}),
            CanvasCommand::filledRect({100, 20, 50, 25}),
            CanvasCommand::ellipse({30, 90, 80, 50}),
            CanvasCommand::polygon({{150, 150}, {190, 120}, {200, 180}, {160, 190}}),
            CanvasCommand::textAt({12, 180}, QStringLiteral("MMPE ÄÖ ✓")),
            CanvasCommand::imageAt({140, 60}, gradient(16, 4, false)),
            CanvasCommand::imageAt({10, 200}, noise(3, 2)),
            CanvasCommand::clear(0x80FFFF00)};
}

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
    if (!batch)
        return false;
    QFile file(dir + u'/' + name);
    return file.open(QIODevice::WriteOnly) && file.write(*batch) == batch->size();
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
        return 2;
    }
    const QString dir = QString::fromLocal8Bit(argv[1]);
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
    QList<CanvasCommand> tile = CanvasViewport(QRect(0, 0, 512, 384)).filter(everyCommand() + benchFrame(), state);

    const bool ok = writeSeed(dir, QStringLiteral("every-command.mmpe"), encode(everyCommand(), 1))
        && writeSeed(dir, QStringLiteral("every-command-raw.mmpe"), encode(everyCommand(), 2, false))
        && writeSeed(dir, QStringLiteral("bench-frame.mmpe"), encode(benchFrame(), 77))
        && writeSeed(dir, QStringLiteral("image-gradient.mmpe"),
                     encode({CanvasCommand::imageAt({0, 0}, gradient(24, 16, true))}, 3))
        && writeSeed(dir, QStringLiteral("image-opaque-rows.mmpe"),
                     encode({CanvasCommand::imageAt({0, 64}, gradient(64, 2, false))}, 4))
        && writeSeed(dir, QStringLiteral("image-noise.mmpe"), encode({CanvasCommand::imageAt({5, 5}, noise(8, 8))}, 5))
        && writeSeed(dir, QStringLiteral("text.mmpe"), encode(text, 6))
        && writeSeed(dir, QStringLiteral("replay-start.mmpe"), encode(replayStart, 0xFFFFFFFF))
        && writeSeed(dir, QStringLiteral("tile.mmpe"), encode(tile, 8))
        && writeSeed(dir, QStringLiteral("empty-frame.mmpe"), encode({}, 9));
    if (!ok) {
        fprintf(stderr, "cannot write the corpus into %s\n", argv[1]);
        return 1;
    }
    return 0;
}
