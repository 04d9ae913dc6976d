// Draws MMPE commands with a QPainter, keeping the drawing state the stream
// implies. Headless use paints into a QImage, so tests and CI compare pixels
// without a display; a QQuickItem can reuse it with its own painter.
#pragma once

#include <mmpi/mmpe/canvascommand.h>

#include <QPainter>

namespace mmpi {

class CanvasRenderer
{
public:
    // Maps the logical canvas onto the painter's whole device and applies the
    // default state. The painter must stay active while the renderer is used.
    CanvasRenderer(QPainter &painter, QSize logicalSize);

    void draw(const CanvasCommand &command);
    void draw(const QList<CanvasCommand> &commands);

    const CanvasState &state() const;

    // The render hints every MMPE picture is drawn with; a reference drawing
    // that wants the same pixels sets the same hints.
    static QPainter::RenderHints renderHints();

private:
    QPainter &m_painter;
    CanvasState m_state;
};

} // namespace mmpi
