#include <mmpi/mmpe/canvasstate.h>

namespace mmpi {

namespace {

Qt::PenStyle qtPenStyle(CanvasPenStyle style)
{
    switch (style) {
    case CanvasPenStyle::NoPen: return Qt::NoPen;
    case CanvasPenStyle::Solid: return Qt::SolidLine;
    case CanvasPenStyle::Dash: return Qt::DashLine;
    case CanvasPenStyle::Dot: return Qt::DotLine;
    case CanvasPenStyle::DashDot: return Qt::DashDotLine;
    }
    return Qt::SolidLine;
}

} // namespace

QPen CanvasState::Pen::toQPen() const
{
    if (style == CanvasPenStyle::NoPen)
        return QPen(Qt::NoPen);
    return QPen(QBrush(QColor::fromRgba(color)), width, qtPenStyle(style));
}

QBrush CanvasState::Brush::toQBrush() const
{
    if (style == CanvasBrushStyle::NoBrush)
        return QBrush(Qt::NoBrush);
    return QBrush(QColor::fromRgba(color));
}

QFont CanvasState::Font::toQFont() const
{
    QFont font;
    if (!family.isEmpty())
        font.setFamily(family);
    font.setPointSize(pointSize);
    return font;
}

} // namespace mmpi
