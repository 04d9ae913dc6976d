// The drawing state of an MMPE canvas: the pen, brush and font that the next
// primitives use. Both ends start from the same defaults, so the stream only
// needs to carry a state when it differs from what was sent before.
#pragma once

#include <mmpi/mmpe/canvasenums.h>

#include <QBrush>
#include <QFont>
#include <QPen>
#include <QString>

namespace mmpi {

struct CanvasState
{
    struct Pen
    {
        QRgb color = 0xFF000000; // ARGB, not premultiplied
        quint16 width = 1;       // logical pixels; 0 is a one-device-pixel hairline
        CanvasPenStyle style = CanvasPenStyle::Solid;

        QPen toQPen() const;
        bool operator==(const Pen &) const = default;
    };

    struct Brush
    {
        CanvasBrushStyle style = CanvasBrushStyle::NoBrush;
        QRgb color = 0xFF000000;

        QBrush toQBrush() const;
        bool operator==(const Brush &) const = default;
    };

    struct Font
    {
        QString family;          // empty: the platform's default family
        quint16 pointSize = 12;

        QFont toQFont() const;
        bool operator==(const Font &) const = default;
    };

    Pen pen;
    Brush brush;
    Font font;

    bool operator==(const CanvasState &) const = default;
};

} // namespace mmpi
