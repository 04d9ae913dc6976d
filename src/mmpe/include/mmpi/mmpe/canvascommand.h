// One MMPE drawing command: a state change, a primitive, a clear or the end of
// a frame. A plain value (one struct for all opcodes, fields unused by an opcode
// stay default) so commands can be compared, stored and replayed cheaply.
#pragma once

#include <mmpi/mmpe/canvasstate.h>

#include <QImage>
#include <QList>
#include <QPoint>
#include <QRect>

namespace mmpi {

// Coordinates are logical pixels of the scene's fixed canvas (CanvasScene::
// logicalSize), signed 16-bit on the wire: -32768..32767 for points and rect
// origins, 0..65535 for rect sizes. Shapes may extend beyond the canvas and
// are clipped when drawn.
struct CanvasCommand
{
    CanvasOpcode opcode = CanvasOpcode::EndFrame;
    CanvasState::Pen pen;      // SetPen
    CanvasState::Brush brush;  // SetBrush
    CanvasState::Font font;    // SetFont
    QList<QPoint> points;      // Line (2), Polyline (2+), Polygon (3+)
    QRect rect;                // Rect, FilledRect, Ellipse
    QPoint position;           // Text (baseline start), Image (top-left)
    QString text;              // Text
    QImage image;              // Image: Format_ARGB32, or Format_RGB32 if opaque
    QRgb color = 0;            // Clear (ARGB)

    static CanvasCommand setPen(const CanvasState::Pen &pen);
    static CanvasCommand setBrush(const CanvasState::Brush &brush);
    static CanvasCommand setFont(const CanvasState::Font &font);
    static CanvasCommand line(QPoint from, QPoint to);
    static CanvasCommand polyline(const QList<QPoint> &points);
    static CanvasCommand outlineRect(const QRect &rect);
    static CanvasCommand filledRect(const QRect &rect);
    static CanvasCommand ellipse(const QRect &bounds);
    static CanvasCommand polygon(const QList<QPoint> &points);
    static CanvasCommand textAt(QPoint baseline, const QString &text);
    // The image is converted to the one of the two formats the wire carries,
    // so what is decoded compares equal to what was built here.
    static CanvasCommand imageAt(QPoint topLeft, const QImage &image);
    static CanvasCommand clear(QRgb color);
    static CanvasCommand endFrame();

    bool isStateChange() const;
    bool operator==(const CanvasCommand &) const = default;
};

} // namespace mmpi
