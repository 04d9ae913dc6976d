#include "quickcanvas.h"

#include "qmllogging.h"
#include "qmlresult.h"
#include "qmlworld.h"

#include <QQuickWindow>
#include <QSGSimpleTextureNode>

#include <cmath>

namespace mmpi {

namespace {

// The node owns the texture it shows; a new picture replaces both.
class CanvasNode : public QSGSimpleTextureNode
{
public:
    void replaceTexture(QSGTexture *texture)
    {
        setTexture(texture);
        m_texture.reset(texture);
    }

private:
    std::unique_ptr<QSGTexture> m_texture;
};

// QML numbers are doubles: anything an int cannot hold is refused here, the
// 16-bit wire range by the encoder.
bool fitsInt(qreal v)
{
    return std::isfinite(v) && std::abs(v) < 1e9;
}

QCoro::Task<QVariant> resolved(QVariant value)
{
    co_return value;
}

} // namespace

QuickCanvas::QuickCanvas(QQuickItem *parent) : QQuickItem(parent)
{
    setFlag(ItemHasContents, true);
}

QuickCanvas::~QuickCanvas()
{
    detach();
}

// ---------------------------------------------------------------- settings

void QuickCanvas::setWorld(QmlWorld *world)
{
    if (m_world == world)
        return;
    detach();
    m_world = world;
    if (world) {
        connect(world, &QmlWorld::stateChanged, this, &QuickCanvas::tryAttach);
        connect(world, &QmlWorld::detaching, this, &QuickCanvas::detach);
    }
    Q_EMIT worldChanged();
    if (isComponentComplete())
        tryAttach();
}

void QuickCanvas::setMode(Mode mode) { if (m_mode != mode) { m_mode = mode; Q_EMIT settingsChanged(); } }
void QuickCanvas::setRoot(int root) { if (m_root != root) { m_root = root; Q_EMIT settingsChanged(); } }
void QuickCanvas::setChannel(int channel) { if (m_channel != channel) { m_channel = channel; Q_EMIT settingsChanged(); } }

void QuickCanvas::setLogicalSize(QSize size)
{
    if (m_logicalSize == size)
        return;
    m_logicalSize = size;
    Q_EMIT settingsChanged();
}

void QuickCanvas::componentComplete()
{
    QQuickItem::componentComplete();
    tryAttach();
}

void QuickCanvas::geometryChange(const QRectF &newGeometry, const QRectF &oldGeometry)
{
    QQuickItem::geometryChange(newGeometry, oldGeometry);
    if (newGeometry.size() != oldGeometry.size())
        update();
}

// ---------------------------------------------------------------- attaching

void QuickCanvas::tryAttach()
{
    if (attached() || !isComponentComplete())
        return;
    if (m_logicalSize.isEmpty() || m_logicalSize.width() > 32767 || m_logicalSize.height() > 32767) {
        refuse(Error(ErrorCode::BadConfiguration, QStringLiteral("logicalSize %1x%2 is out of range 1..32767")
                                                      .arg(m_logicalSize.width()).arg(m_logicalSize.height())));
        return;
    }
    if (!m_world) {
        m_local = std::make_unique<Local>(Local{CanvasEncoder(), CanvasScene(m_logicalSize)});
        m_local->encoder.setFrameNumber(1); // frame 0 would read as "nothing yet"
    } else {
        if (m_world->state() != QmlWorld::State::Formed)
            return;
        auto comm = m_world->channel(m_channel, this);
        if (!comm) {
            refuse(comm.error());
            return;
        }
        if (m_root < 0 || m_root >= comm->size()) {
            m_world->releaseChannel(m_channel, this);
            refuse(Error(ErrorCode::InvalidRank, QStringLiteral("root %1 is not a rank of this world of %2")
                                                     .arg(m_root).arg(comm->size())));
            return;
        }
        m_canvas = std::make_shared<ParallelCanvas>(*comm, ParallelCanvas::Mode(int(m_mode)), m_root, m_logicalSize);
        connect(m_canvas.get(), &ParallelCanvas::frameReady, this, &QuickCanvas::frameArrived);
        connect(m_canvas.get(), &ParallelCanvas::replayed, this, [this](quint32 frame) {
            m_invalidated = true;
            frameArrived(frame);
        });
        connect(m_canvas.get(), &ParallelCanvas::messageRefused, this, [this](int source, const Error &reason) {
            qCWarning(lcQml).noquote() << "ParallelCanvas: refused a message from rank" << source << ":"
                                       << reason.toString();
        });
    }
    m_invalidated = true;
    Q_EMIT attachedChanged();
    update();
}

void QuickCanvas::detach()
{
    if (!attached())
        return;
    if (m_canvas && m_world)
        m_world->releaseChannel(m_channel, this);
    if (m_canvas)
        disconnect(m_canvas.get(), nullptr, this, nullptr);
    m_canvas.reset();
    m_local.reset();
    if (!QCoreApplication::closingDown())
        Q_EMIT attachedChanged();
}

void QuickCanvas::frameArrived(quint32 frame)
{
    Q_EMIT frameChanged();
    Q_EMIT frameReady(int(frame));
    update();
}

const CanvasScene *QuickCanvas::scene() const
{
    if (m_canvas)
        return &m_canvas->scene();
    if (m_local)
        return &m_local->scene;
    return nullptr;
}

int QuickCanvas::frame() const
{
    const CanvasScene *s = scene();
    return s ? int(s->currentFrame().value_or(0)) : 0;
}

// ---------------------------------------------------------------- drawing

bool QuickCanvas::refuse(const Error &error)
{
    qCWarning(lcQml).noquote() << "ParallelCanvas:" << error.toString();
    m_error = error.message;
    Q_EMIT errorStringChanged();
    Q_EMIT errorOccurred(error.message);
    return false;
}

bool QuickCanvas::add(const Result<void> &added)
{
    if (!added)
        return refuse(added.error());
    return true;
}

bool QuickCanvas::add(const CanvasCommand &command)
{
    if (m_canvas)
        return add(m_canvas->append(command));
    if (m_local)
        return add(m_local->encoder.append(command));
    if (m_world)
        return refuse(Error(ErrorCode::NotFormed, QStringLiteral("the canvas is not attached: its world is not formed")));
    return refuse(Error(ErrorCode::BadConfiguration, QStringLiteral("the canvas is not attached (see errorString)")));
}

bool QuickCanvas::toPoint(qreal x, qreal y, QPoint *point)
{
    if (!fitsInt(x) || !fitsInt(y))
        return refuse(Error(ErrorCode::BadConfiguration, QStringLiteral("the point (%1, %2) is not a usable coordinate")
                                                             .arg(x).arg(y)));
    *point = QPoint(qRound(x), qRound(y));
    return true;
}

bool QuickCanvas::toRect(qreal x, qreal y, qreal w, qreal h, QRect *rect)
{
    if (!fitsInt(x) || !fitsInt(y) || !fitsInt(w) || !fitsInt(h) || w < 0 || h < 0)
        return refuse(Error(ErrorCode::BadConfiguration,
                            QStringLiteral("the rectangle (%1, %2, %3 x %4) is not usable").arg(x).arg(y).arg(w).arg(h)));
    *rect = QRect(qRound(x), qRound(y), qRound(w), qRound(h));
    return true;
}

bool QuickCanvas::toPoints(const QVariantList &list, QList<QPoint> *points)
{
    for (const QVariant &v : list) {
        QPoint p;
        if (v.canConvert<QPointF>() && v.metaType() != QMetaType::fromType<QVariantList>()) {
            const QPointF f = v.toPointF();
            if (!toPoint(f.x(), f.y(), &p))
                return false;
        } else if (const QVariantList pair = v.toList(); pair.size() == 2) {
            bool okX = false, okY = false;
            const qreal x = pair.at(0).toDouble(&okX);
            const qreal y = pair.at(1).toDouble(&okY);
            if (!okX || !okY || !toPoint(x, y, &p))
                return refuse(Error(ErrorCode::BadConfiguration, QStringLiteral("point %1 is not a number pair")
                                                                     .arg(points->size())));
        } else {
            return refuse(Error(ErrorCode::BadConfiguration,
                                QStringLiteral("point %1 is neither Qt.point(x, y) nor [x, y]").arg(points->size())));
        }
        points->append(p);
    }
    return true;
}

bool QuickCanvas::setPen(const QColor &color, int width, PenStyle style)
{
    if (!color.isValid())
        return refuse(Error(ErrorCode::BadConfiguration, QStringLiteral("setPen: not a colour")));
    if (width < 0 || width > 65535)
        return refuse(Error(ErrorCode::BadConfiguration, QStringLiteral("setPen: width %1 is out of range").arg(width)));
    if (int(style) < 0 || int(style) > int(PenStyle::DashDotLine))
        return refuse(Error(ErrorCode::BadConfiguration, QStringLiteral("setPen: unknown style %1").arg(int(style))));
    return add(CanvasCommand::setPen({color.rgba(), quint16(width), CanvasPenStyle(int(style))}));
}

bool QuickCanvas::setBrush(const QColor &color)
{
    if (!color.isValid())
        return refuse(Error(ErrorCode::BadConfiguration, QStringLiteral("setBrush: not a colour")));
    if (color.alpha() == 0)
        return add(CanvasCommand::setBrush({CanvasBrushStyle::NoBrush, 0xFF000000}));
    return add(CanvasCommand::setBrush({CanvasBrushStyle::Solid, color.rgba()}));
}

bool QuickCanvas::setFont(const QString &family, int pointSize)
{
    if (pointSize < 1 || pointSize > 65535)
        return refuse(Error(ErrorCode::BadConfiguration, QStringLiteral("setFont: point size %1 is out of range")
                                                             .arg(pointSize)));
    return add(CanvasCommand::setFont({family, quint16(pointSize)}));
}

bool QuickCanvas::line(qreal x1, qreal y1, qreal x2, qreal y2)
{
    QPoint a, b;
    return toPoint(x1, y1, &a) && toPoint(x2, y2, &b) && add(CanvasCommand::line(a, b));
}

bool QuickCanvas::rect(qreal x, qreal y, qreal width, qreal height)
{
    QRect r;
    return toRect(x, y, width, height, &r) && add(CanvasCommand::outlineRect(r));
}

bool QuickCanvas::fillRect(qreal x, qreal y, qreal width, qreal height)
{
    QRect r;
    return toRect(x, y, width, height, &r) && add(CanvasCommand::filledRect(r));
}

bool QuickCanvas::ellipse(qreal x, qreal y, qreal width, qreal height)
{
    QRect r;
    return toRect(x, y, width, height, &r) && add(CanvasCommand::ellipse(r));
}

bool QuickCanvas::polyline(const QVariantList &points)
{
    QList<QPoint> p;
    return toPoints(points, &p) && add(CanvasCommand::polyline(p));
}

bool QuickCanvas::polygon(const QVariantList &points)
{
    QList<QPoint> p;
    return toPoints(points, &p) && add(CanvasCommand::polygon(p));
}

bool QuickCanvas::text(qreal x, qreal y, const QString &string)
{
    QPoint p;
    return toPoint(x, y, &p) && add(CanvasCommand::textAt(p, string));
}

bool QuickCanvas::clear(const QColor &color)
{
    if (!color.isValid())
        return refuse(Error(ErrorCode::BadConfiguration, QStringLiteral("clear: not a colour")));
    return add(CanvasCommand::clear(color.rgba()));
}

bool QuickCanvas::endFrame()
{
    if (m_canvas)
        return add(m_canvas->endFrame());
    if (!m_local)
        return add(CanvasCommand::endFrame()); // refused with the reason
    const QByteArray batch = m_local->encoder.endFrame();
    if (!add(m_local->scene.appendBytes(batch)))
        return false;
    // Nothing before the last clear can be seen: memory stays bounded.
    m_local->scene.discardBeforeLastClear();
    frameArrived(m_local->scene.currentFrame().value_or(0));
    return true;
}

QCoro::QmlTask QuickCanvas::flipTogether()
{
    if (m_canvas)
        return flipTask(m_canvas);
    if (m_local)
        return resolved(qmlresult::ok({{QStringLiteral("frame"), frame()}}));
    return resolved(qmlresult::failed(Error(ErrorCode::NotFormed, QStringLiteral("the canvas is not attached"))));
}

QCoro::Task<QVariant> QuickCanvas::flipTask(std::shared_ptr<ParallelCanvas> canvas)
{
    // `canvas` keeps the ParallelCanvas alive until the barrier is over.
    const ParallelCanvas::Flip flip = co_await canvas->flipTogether();
    if (flip.error.isError())
        co_return QVariant(qmlresult::failed(flip.error));
    co_return QVariant(qmlresult::ok({{QStringLiteral("frame"), int(flip.frame)}}));
}

void QuickCanvas::requestReplay()
{
    if (m_canvas)
        m_canvas->requestReplay();
}

bool QuickCanvas::saveImage(const QString &path, int width, int height)
{
    const CanvasScene *s = scene();
    if (!s)
        return refuse(Error(ErrorCode::NotFormed, QStringLiteral("saveImage: the canvas is not attached")));
    QSize size = width > 0 && height > 0 ? QSize(width, height) : s->logicalSize();
    if (size.width() > 16384 || size.height() > 16384)
        return refuse(Error(ErrorCode::BadConfiguration, QStringLiteral("saveImage: %1x%2 is too large")
                                                             .arg(size.width()).arg(size.height())));
    SceneRasterizer rasterizer;
    rasterizer.update(*s, size);
    if (!rasterizer.image().save(path))
        return refuse(Error(ErrorCode::BadConfiguration, QStringLiteral("saveImage: cannot write '%1'").arg(path)));
    return true;
}

// ---------------------------------------------------------------- painting

QSGNode *QuickCanvas::updatePaintNode(QSGNode *oldNode, UpdatePaintNodeData *)
{
    auto *node = static_cast<CanvasNode *>(oldNode);
    const CanvasScene *s = scene();
    const QSize pixels = (size() * window()->effectiveDevicePixelRatio()).toSize();
    if (!s || pixels.isEmpty()) {
        delete node;
        return nullptr;
    }
    if (m_invalidated) {
        m_rasterizer.invalidate();
        m_invalidated = false;
    }
    const bool changed = m_rasterizer.update(*s, pixels);
    if (!node) {
        node = new CanvasNode;
        node->setFiltering(QSGTexture::Linear);
    }
    if (changed || !node->texture()) {
        node->replaceTexture(window()->createTextureFromImage(m_rasterizer.image()));
        ++m_framesShown;
        // This may run on the render thread.
        QMetaObject::invokeMethod(this, &QuickCanvas::framesShownChanged, Qt::QueuedConnection);
    }
    node->setRect(boundingRect());
    return node;
}

} // namespace mmpi
