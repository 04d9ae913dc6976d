#include <mmpi/mmpe/canvascommand.h>

namespace mmpi {

namespace {

CanvasCommand make(CanvasOpcode opcode)
{
    CanvasCommand c;
    c.opcode = opcode;
    return c;
}

CanvasCommand withPoints(CanvasOpcode opcode, const QList<QPoint> &points)
{
    CanvasCommand c = make(opcode);
    c.points = points;
    return c;
}

CanvasCommand withRect(CanvasOpcode opcode, const QRect &rect)
{
    CanvasCommand c = make(opcode);
    c.rect = rect;
    return c;
}

} // namespace

CanvasCommand CanvasCommand::setPen(const CanvasState::Pen &pen)
{
    CanvasCommand c = make(CanvasOpcode::SetPen);
    c.pen = pen;
    return c;
}

CanvasCommand CanvasCommand::setBrush(const CanvasState::Brush &brush)
{
    CanvasCommand c = make(CanvasOpcode::SetBrush);
    c.brush = brush;
    return c;
}

CanvasCommand CanvasCommand::setFont(const CanvasState::Font &font)
{
    CanvasCommand c = make(CanvasOpcode::SetFont);
    c.font = font;
    return c;
}

CanvasCommand CanvasCommand::line(QPoint from, QPoint to)
{
    return withPoints(CanvasOpcode::Line, {from, to});
}

CanvasCommand CanvasCommand::polyline(const QList<QPoint> &points)
{
    return withPoints(CanvasOpcode::Polyline, points);
}

CanvasCommand CanvasCommand::outlineRect(const QRect &rect)
{
    return withRect(CanvasOpcode::Rect, rect);
}

CanvasCommand CanvasCommand::filledRect(const QRect &rect)
{
    return withRect(CanvasOpcode::FilledRect, rect);
}

CanvasCommand CanvasCommand::ellipse(const QRect &bounds)
{
    return withRect(CanvasOpcode::Ellipse, bounds);
}

CanvasCommand CanvasCommand::polygon(const QList<QPoint> &points)
{
    return withPoints(CanvasOpcode::Polygon, points);
}

CanvasCommand CanvasCommand::textAt(QPoint baseline, const QString &text)
{
    CanvasCommand c = make(CanvasOpcode::Text);
    c.position = baseline;
    c.text = text;
    return c;
}

CanvasCommand CanvasCommand::imageAt(QPoint topLeft, const QImage &image)
{
    CanvasCommand c = make(CanvasOpcode::Image);
    c.position = topLeft;
    if (!image.isNull())
        c.image = image.convertToFormat(image.hasAlphaChannel() ? QImage::Format_ARGB32
                                                                : QImage::Format_RGB32);
    return c;
}

CanvasCommand CanvasCommand::clear(QRgb color)
{
    CanvasCommand c = make(CanvasOpcode::Clear);
    c.color = color;
    return c;
}

CanvasCommand CanvasCommand::endFrame()
{
    return make(CanvasOpcode::EndFrame);
}

bool CanvasCommand::isStateChange() const
{
    return opcode == CanvasOpcode::SetPen || opcode == CanvasOpcode::SetBrush
        || opcode == CanvasOpcode::SetFont;
}

} // namespace mmpi
