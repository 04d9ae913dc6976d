// The scene the multi-process canvas test draws (canvasnode under mmpirun,
// checked by tst_canvasnode): every rank in turn draws one frame with every
// primitive kind, and the single-process reference of the same frames.
#pragma once

#include "canvassamples.h"

#include <mmpi/mmpe/canvasencoder.h>
#include <mmpi/mmpe/canvasscene.h>

namespace canvasnode {

using mmpi::CanvasCommand;

inline const QSize Logical(320, 240);

// Rank r's frame. It sets pen, brush and font first, so it draws the same
// whatever the stream's state before it; rank 0 starts with a clear.
inline QList<CanvasCommand> rankFrame(int rank)
{
    const int d = 9 * rank;
    QList<CanvasCommand> c;
    if (rank == 0)
        c << CanvasCommand::clear(0xFFF4F0E8);
    c << CanvasCommand::setPen({qRgba(200 - 40 * rank % 200, 40 * rank % 256, 90, 255), quint16(1 + rank % 3),
                                rank % 2 ? mmpi::CanvasPenStyle::Dash : mmpi::CanvasPenStyle::Solid});
    c << CanvasCommand::setBrush({mmpi::CanvasBrushStyle::Solid, qRgba(30, 120 + 30 * rank % 120, 200, 170)});
    c << CanvasCommand::setFont({QString(), quint16(10 + 2 * rank)});
    c << CanvasCommand::line({5 + d, 4}, {310 - d, 236});
    c << CanvasCommand::polyline({{0, 60 + d}, {60, 90}, {120, 50 + d}, {200, 100}, {330, 70 - d}});
    c << CanvasCommand::outlineRect(QRect(10 + 70 * rank, 150, 55, 30));
    c << CanvasCommand::filledRect(QRect(240 - 60 * rank, 20 + d, 40, 25));
    c << CanvasCommand::ellipse(QRect(120 + d, 110 + d, 70, 44));
    c << CanvasCommand::polygon({{160 + d, 10}, {230, 60 + d}, {140, 95}, {100 + d, 40}});
    c << CanvasCommand::textAt({8 + 40 * rank, 228 - 12 * rank}, QStringLiteral("rank %1 ✓").arg(rank));
    c << CanvasCommand::imageAt({270 - 30 * rank, 190 - 40 * rank}, samples::gradientImage(24, 16, rank % 2 == 0));
    c << CanvasCommand::imageAt({5 + 20 * rank, 5}, samples::noiseImage(6, 6, quint32(rank + 1)));
    return c;
}

// What one process draws from the frames of `ranks` ranks in rank order.
inline mmpi::CanvasScene referenceScene(int ranks)
{
    mmpi::CanvasScene scene(Logical);
    mmpi::CanvasEncoder encoder;
    encoder.setFrameNumber(1);
    for (int r = 0; r < ranks; ++r) {
        for (const CanvasCommand &c : rankFrame(r))
            if (!encoder.append(c))
                return mmpi::CanvasScene(Logical);
        if (!scene.appendBytes(encoder.endFrame()))
            return mmpi::CanvasScene(Logical);
    }
    return scene;
}

// Rank r's tile on a wall of `ranks` devices: columns of equal width (the
// last takes what is left), so every rank has one whatever the world size.
inline QRect tile(int rank, int ranks)
{
    const int width = Logical.width() / ranks;
    const int x = rank * width;
    return QRect(x, 0, rank == ranks - 1 ? Logical.width() - x : width, Logical.height());
}

} // namespace canvasnode
