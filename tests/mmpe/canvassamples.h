// Sample MMPE commands shared by the codec and scene tests: one of every
// primitive and state change, with values away from the defaults so a field
// that is dropped or swapped shows.
#pragma once

#include <mmpi/mmpe/canvascommand.h>

#include <QRandomGenerator>

namespace samples {

using mmpi::CanvasCommand;
using mmpi::CanvasState;

inline CanvasState::Pen redPen()
{
    return {0xFFCC2211, 3, mmpi::CanvasPenStyle::Solid};
}

inline CanvasState::Brush blueBrush()
{
    return {mmpi::CanvasBrushStyle::Solid, 0xC01040E0};
}

inline CanvasState::Font bigFont()
{
    return {QString(), 20};
}

// A gradient compresses well, noise does not: both paths of the encoder.
inline QImage gradientImage(int w, int h, bool alpha)
{
    QImage img(w, h, alpha ? QImage::Format_ARGB32 : QImage::Format_RGB32);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            img.setPixel(x, y, qRgba(x * 255 / qMax(1, w - 1), y * 255 / qMax(1, h - 1), 128,
                                     alpha ? 64 + (x % 4) * 60 : 255));
    return img;
}

inline QImage noiseImage(int w, int h, quint32 seed)
{
    QRandomGenerator rng(seed);
    QImage img(w, h, QImage::Format_ARGB32);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            img.setPixel(x, y, rng.generate());
    return img;
}

inline QList<CanvasCommand> everyCommand()
{
    return {
        CanvasCommand::setPen(redPen()),
        CanvasCommand::setBrush(blueBrush()),
        CanvasCommand::setFont({QStringLiteral("DejaVu Sans"), 14}),
        CanvasCommand::line({5, 6}, {120, 80}),
        CanvasCommand::polyline({{10, 10}, {40, 70}, {90, 20}, {-5, 300}}),
        CanvasCommand::outlineRect({20, 30, 60, 40}),
        CanvasCommand::filledRect({100, 20, 50, 25}),
        CanvasCommand::ellipse({30, 90, 80, 50}),
        CanvasCommand::polygon({{150, 150}, {190, 120}, {200, 180}, {160, 190}}),
        CanvasCommand::textAt({12, 180}, QStringLiteral("MMPE ÄÖ ✓")),
        CanvasCommand::imageAt({140, 60}, gradientImage(32, 8, false)),
        CanvasCommand::imageAt({10, 200}, noiseImage(6, 5, 7)),
        CanvasCommand::clear(0x80FFFF00),
    };
}

} // namespace samples
