// PictureItem (QML `MandelbrotPicture`): shows a SharedRender's picture — the
// scene of its canvas, rasterised frame by frame as bands come in — scaled
// to fit the item, and maps item positions to fractions of the picture for
// zoom and pan.
#pragma once

#include "sharedrender.h"

#include <QPointer>
#include <QQuickPaintedItem>

#include <optional>

namespace mmpi::demo {

class PictureItem : public QQuickPaintedItem
{
    Q_OBJECT
    Q_PROPERTY(mmpi::demo::SharedRender *session READ session WRITE setSession NOTIFY sessionChanged)
    // Where the picture is drawn in the item (aspect ratio kept).
    Q_PROPERTY(QRectF pictureRect READ pictureRect NOTIFY pictureRectChanged)
    // Moves the picture while a drag is under way, before the new view comes.
    Q_PROPERTY(QPointF shift READ shift WRITE setShift NOTIFY shiftChanged)
public:
    explicit PictureItem(QQuickItem *parent = nullptr);

    SharedRender *session() const { return m_session; }
    void setSession(SharedRender *session);
    QRectF pictureRect() const;
    QPointF shift() const { return m_shift; }
    void setShift(QPointF shift);

    // An item position as fractions of the picture (0..1 inside it).
    Q_INVOKABLE QPointF toPicture(qreal x, qreal y) const;
    // The picture as rasterised here (its logical size).
    const QImage &image() const { return m_image; }

    void paint(QPainter *painter) override;

Q_SIGNALS:
    void sessionChanged();
    void pictureRectChanged();
    void shiftChanged();

protected:
    void geometryChange(const QRectF &newGeometry, const QRectF &oldGeometry) override;

private:
    void refresh();
    void redrawFromReplay(const CanvasScene &scene);
    void drawBatches(const QList<CanvasBatch> &batches, qsizetype from);

    QPointer<SharedRender> m_session;
    QImage m_image;
    CanvasState m_state; // the renderer's state after the last batch drawn
    std::optional<quint32> m_drawnFrame;
    QPointF m_shift;
};

} // namespace mmpi::demo
