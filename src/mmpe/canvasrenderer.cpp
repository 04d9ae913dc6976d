#include <mmpi/mmpe/canvasrenderer.h>

#include <QPaintDevice>

namespace mmpi {

CanvasRenderer::CanvasRenderer(QPainter &painter, QSize logicalSize)
    : m_painter(painter)
{
    m_painter.setRenderHints(renderHints());
    const QPaintDevice *device = m_painter.device();
    if (device && logicalSize.isValid() && !logicalSize.isEmpty()
        && QSize(device->width(), device->height()) != logicalSize) {
        m_painter.scale(qreal(device->width()) / logicalSize.width(),
                        qreal(device->height()) / logicalSize.height());
    }
    m_painter.setPen(m_state.pen.toQPen());
    m_painter.setBrush(m_state.brush.toQBrush());
    m_painter.setFont(m_state.font.toQFont());
}

QPainter::RenderHints CanvasRenderer::renderHints()
{
    return QPainter::Antialiasing | QPainter::TextAntialiasing;
}

const CanvasState &CanvasRenderer::state() const
{
    return m_state;
}

void CanvasRenderer::draw(const QList<CanvasCommand> &commands)
{
    for (const CanvasCommand &c : commands)
        draw(c);
}

void CanvasRenderer::draw(const CanvasCommand &c)
{
    QPainter &p = m_painter;
    switch (c.opcode) {
    case CanvasOpcode::SetPen:
        m_state.pen = c.pen;
        p.setPen(c.pen.toQPen());
        break;
    case CanvasOpcode::SetBrush:
        m_state.brush = c.brush;
        p.setBrush(c.brush.toQBrush());
        break;
    case CanvasOpcode::SetFont:
        m_state.font = c.font;
        p.setFont(c.font.toQFont());
        break;
    case CanvasOpcode::Line:
        if (c.points.size() == 2)
            p.drawLine(c.points[0], c.points[1]);
        break;
    case CanvasOpcode::Polyline:
        p.drawPolyline(c.points.constData(), int(c.points.size()));
        break;
    case CanvasOpcode::Polygon:
        p.drawPolygon(c.points.constData(), int(c.points.size()));
        break;
    case CanvasOpcode::Rect: {
        // An outline only: the brush stays for the primitives that fill.
        const QBrush brush = p.brush();
        p.setBrush(Qt::NoBrush);
        p.drawRect(c.rect);
        p.setBrush(brush);
        break;
    }
    case CanvasOpcode::FilledRect:
        p.fillRect(c.rect, p.brush());
        break;
    case CanvasOpcode::Ellipse:
        p.drawEllipse(c.rect);
        break;
    case CanvasOpcode::Text:
        p.drawText(c.position, c.text);
        break;
    case CanvasOpcode::Image:
        p.drawImage(c.position, c.image);
        break;
    case CanvasOpcode::Clear: {
        // The whole device, whatever the scale, and replacing rather than
        // blending: after a Clear nothing earlier can show through, which is
        // what lets a late joiner start here.
        const QPaintDevice *device = p.device();
        if (!device)
            break;
        p.save();
        p.resetTransform();
        p.setCompositionMode(QPainter::CompositionMode_Source);
        p.fillRect(QRect(0, 0, device->width(), device->height()), QColor::fromRgba(c.color));
        p.restore();
        break;
    }
    case CanvasOpcode::EndFrame:
        break;
    }
}

} // namespace mmpi
