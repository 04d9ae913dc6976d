#include "pictureitem.h"

#include <mmpi/mmpe/canvasrenderer.h>

#include <QPainter>

namespace mmpi::demo {

PictureItem::PictureItem(QQuickItem *parent) : QQuickPaintedItem(parent)
{
    setFillColor(Qt::black);
}

void PictureItem::setSession(SharedRender *session)
{
    if (m_session == session)
        return;
    if (m_session)
        disconnect(m_session, nullptr, this, nullptr);
    m_session = session;
    m_drawnFrame.reset();
    if (m_session)
        connect(m_session, &SharedRender::pictureChanged, this, &PictureItem::refresh);
    refresh();
    Q_EMIT sessionChanged();
    Q_EMIT pictureRectChanged();
}

QRectF PictureItem::pictureRect() const
{
    if (!m_session || m_session->pictureSize().isEmpty())
        return QRectF(0, 0, width(), height());
    const QSizeF picture = QSizeF(m_session->pictureSize()).scaled(size(), Qt::KeepAspectRatio);
    return QRectF(QPointF((width() - picture.width()) / 2, (height() - picture.height()) / 2), picture);
}

void PictureItem::setShift(QPointF shift)
{
    if (m_shift == shift)
        return;
    m_shift = shift;
    update();
    Q_EMIT shiftChanged();
}

QPointF PictureItem::toPicture(qreal x, qreal y) const
{
    const QRectF r = pictureRect();
    if (r.isEmpty())
        return {0.5, 0.5};
    return {(x - r.x()) / r.width(), (y - r.y()) / r.height()};
}

void PictureItem::paint(QPainter *painter)
{
    if (m_image.isNull())
        return;
    painter->setRenderHint(QPainter::SmoothPixmapTransform);
    painter->drawImage(pictureRect().translated(m_shift), m_image);
}

void PictureItem::geometryChange(const QRectF &newGeometry, const QRectF &oldGeometry)
{
    QQuickPaintedItem::geometryChange(newGeometry, oldGeometry);
    Q_EMIT pictureRectChanged();
}

// Only the frames that came since the last refresh are drawn; a frame with a
// clear (a new view, the tint toggled) restarts from the scene's replay, so
// the cost is the new bands, never the history of every view.
void PictureItem::refresh()
{
    if (!m_session)
        return;
    const CanvasScene &scene = m_session->scene();
    const QList<CanvasBatch> &batches = scene.batches();
    if (m_image.size() != m_session->pictureSize())
        m_drawnFrame.reset();
    qsizetype from = -1;
    if (m_drawnFrame) {
        for (qsizetype i = batches.size() - 1; i >= 0 && batches.at(i).frame >= *m_drawnFrame; --i)
            if (batches.at(i).frame == *m_drawnFrame)
                from = i + 1;
    }
    bool cleared = from < 0;
    for (qsizetype i = std::max<qsizetype>(from, 0); i < batches.size() && !cleared; ++i)
        for (const CanvasCommand &command : batches.at(i).commands)
            cleared = cleared || command.opcode == CanvasOpcode::Clear;
    if (cleared)
        redrawFromReplay(scene);
    else if (from < batches.size())
        drawBatches(batches, from);
    else
        return;
    update();
}

void PictureItem::redrawFromReplay(const CanvasScene &scene)
{
    m_image = QImage(m_session->pictureSize(), QImage::Format_ARGB32_Premultiplied);
    m_image.fill(Qt::transparent);
    m_state = CanvasState();
    drawBatches(scene.replay(), 0);
}

void PictureItem::drawBatches(const QList<CanvasBatch> &batches, qsizetype from)
{
    if (from >= batches.size())
        return;
    QPainter painter(&m_image);
    CanvasRenderer renderer(painter, m_image.size());
    // The renderer starts from the default state: put back the one in effect.
    renderer.draw(CanvasCommand::setPen(m_state.pen));
    renderer.draw(CanvasCommand::setBrush(m_state.brush));
    renderer.draw(CanvasCommand::setFont(m_state.font));
    for (qsizetype i = from; i < batches.size(); ++i)
        renderer.draw(batches.at(i).commands);
    m_state = renderer.state();
    m_drawnFrame = batches.last().frame;
}

} // namespace mmpi::demo
