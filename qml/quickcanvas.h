// ParallelCanvas (QML): a Qt Quick item that shows an MMPE picture — the
// scene of an mmpi::ParallelCanvas on a World's channel, or a local scene
// when no world is set — and lets QML draw into it. Only the frames that
// arrived since the last paint are rasterised (SceneRasterizer), then shown
// as one texture.
#pragma once

#include "scenerasterizer.h"

#include <mmpi/mmpe/canvasencoder.h>
#include <mmpi/mmpe/parallelcanvas.h>

#include <QCoroQmlTask>
#include "qmlworld.h"

#include <QPointer>
#include <QQuickItem>
#include <QtQml/qqmlregistration.h>

#include <memory>

namespace mmpi {


class QuickCanvas : public QQuickItem
{
    Q_OBJECT
    QML_NAMED_ELEMENT(ParallelCanvas)
    // The world to share the picture with; null: a local canvas. The other
    // settings are read when the canvas attaches (the world is formed).
    Q_PROPERTY(mmpi::QmlWorld *world READ world WRITE setWorld NOTIFY worldChanged)
    Q_PROPERTY(Mode mode READ mode WRITE setMode NOTIFY settingsChanged)
    Q_PROPERTY(int root READ root WRITE setRoot NOTIFY settingsChanged)
    Q_PROPERTY(int channel READ channel WRITE setChannel NOTIFY settingsChanged)
    Q_PROPERTY(QSize logicalSize READ logicalSize WRITE setLogicalSize NOTIFY settingsChanged)
    // Drawing is possible (local, or the world is formed and the channel ours).
    Q_PROPERTY(bool attached READ attached NOTIFY attachedChanged)
    // The number of the last frame in the picture here (0: none).
    Q_PROPERTY(int frame READ frame NOTIFY frameChanged)
    // Pictures handed to the scene graph (each a new texture).
    Q_PROPERTY(int framesShown READ framesShown NOTIFY framesShownChanged)
    Q_PROPERTY(QString errorString READ errorString NOTIFY errorStringChanged)

public:
    enum class Mode { DrawOnRoot, Broadcast }; // as mmpi::ParallelCanvas::Mode
    Q_ENUM(Mode)
    enum class PenStyle { NoPen, SolidLine, DashLine, DotLine, DashDotLine }; // as CanvasPenStyle
    Q_ENUM(PenStyle)

    explicit QuickCanvas(QQuickItem *parent = nullptr);
    ~QuickCanvas() override;

    QmlWorld *world() const { return m_world; }
    void setWorld(QmlWorld *world);
    Mode mode() const { return m_mode; }
    void setMode(Mode mode);
    int root() const { return m_root; }
    void setRoot(int root);
    int channel() const { return m_channel; }
    void setChannel(int channel);
    QSize logicalSize() const { return m_logicalSize; }
    void setLogicalSize(QSize size);
    bool attached() const { return m_canvas || m_local; }
    int frame() const;
    int framesShown() const { return m_framesShown; }
    QString errorString() const { return m_error; }

    // ---- drawing: each adds to the current frame; false (errorString says
    // why) when the value is out of range or the canvas is not attached.
    Q_INVOKABLE bool setPen(const QColor &color, int width = 1, mmpi::QuickCanvas::PenStyle style = PenStyle::SolidLine);
    // A fully transparent colour means no brush.
    Q_INVOKABLE bool setBrush(const QColor &color);
    Q_INVOKABLE bool setFont(const QString &family, int pointSize);
    Q_INVOKABLE bool line(qreal x1, qreal y1, qreal x2, qreal y2);
    Q_INVOKABLE bool rect(qreal x, qreal y, qreal width, qreal height);
    Q_INVOKABLE bool fillRect(qreal x, qreal y, qreal width, qreal height);
    Q_INVOKABLE bool ellipse(qreal x, qreal y, qreal width, qreal height);
    // Points as Qt.point(x, y) values or [x, y] pairs.
    Q_INVOKABLE bool polyline(const QVariantList &points);
    Q_INVOKABLE bool polygon(const QVariantList &points);
    Q_INVOKABLE bool text(qreal x, qreal y, const QString &text);
    Q_INVOKABLE bool clear(const QColor &color);
    // Closes the frame: local, it is shown; with a world, it goes to the root.
    Q_INVOKABLE bool endFrame();
    // Collective on the canvas's world: resolves {ok, frame, error, code}
    // once frame `frame` is shown here (mmpi::ParallelCanvas::flipTogether).
    Q_INVOKABLE QCoro::QmlTask flipTogether();
    // Asks the root for the whole picture again.
    Q_INVOKABLE void requestReplay();
    // Writes the picture (the logical size unless given) to an image file.
    Q_INVOKABLE bool saveImage(const QString &path, int width = 0, int height = 0);

    // The picture here (nullptr before attaching).
    const CanvasScene *scene() const;

Q_SIGNALS:
    void worldChanged();
    void settingsChanged();
    void attachedChanged();
    void frameChanged();
    void framesShownChanged();
    void errorStringChanged();
    void frameReady(int frame);
    void errorOccurred(const QString &message);

protected:
    QSGNode *updatePaintNode(QSGNode *node, UpdatePaintNodeData *data) override;
    void componentComplete() override;
    void geometryChange(const QRectF &newGeometry, const QRectF &oldGeometry) override;

private:
    struct Local
    {
        CanvasEncoder encoder;
        CanvasScene scene;
    };
    void tryAttach();
    void detach();
    void frameArrived(quint32 frame);
    bool add(const Result<void> &added);
    bool add(const CanvasCommand &command);
    bool refuse(const Error &error);
    bool toPoint(qreal x, qreal y, QPoint *point);
    bool toRect(qreal x, qreal y, qreal w, qreal h, QRect *rect);
    bool toPoints(const QVariantList &list, QList<QPoint> *points);
    QCoro::Task<QVariant> flipTask(std::shared_ptr<ParallelCanvas> canvas);

    QPointer<QmlWorld> m_world;
    Mode m_mode = Mode::Broadcast;
    int m_root = 0;
    int m_channel = 0;
    QSize m_logicalSize{640, 480};
    std::shared_ptr<ParallelCanvas> m_canvas; // shared with a pending flip
    std::unique_ptr<Local> m_local;
    SceneRasterizer m_rasterizer; // used on the render thread while the GUI thread waits
    bool m_invalidated = false;
    int m_framesShown = 0;
    QString m_error;
};

} // namespace mmpi
