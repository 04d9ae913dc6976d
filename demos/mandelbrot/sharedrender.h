// SharedRender: the Mandelbrot picture every device of a world shows as it
// fills in. The root renders a view through the fault-tolerant work pool (one
// pool per view), draws each band that comes back as an MMPE image block on a
// broadcast ParallelCanvas, and tells every device the render's progress; a
// zoom, pan or tint toggle on any device goes to the root, which renders
// again. Alone (no world) it computes on a thread of its own and draws on a
// local scene: the same picture, the same API (docs/guide/demos.md, "Mandelbrot").
#pragma once

#include "bandworker.h"
#include "mandelbrot.h"

#include <mmpi/comm/messagelistener.h>
#include <mmpi/ft/workpool.h>
#include <mmpi/mmpe/parallelcanvas.h>
#include <mmpi/world/world.h>

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QSet>

#include <atomic>
#include <memory>
#include <optional>

namespace mmpi::demo {

class SharedRender : public QObject
{
    Q_OBJECT
    Q_PROPERTY(int done READ done NOTIFY progressChanged)
    Q_PROPERTY(int total READ total NOTIFY progressChanged)
    Q_PROPERTY(bool tint READ tint WRITE setTint NOTIFY tintChanged)
    Q_PROPERTY(int rank READ rank CONSTANT)
    Q_PROPERTY(int nodes READ nodes CONSTANT)
    Q_PROPERTY(QString viewText READ viewText NOTIFY viewChanged)
    Q_PROPERTY(QSize pictureSize READ pictureSize CONSTANT)
public:
    // The communicators of a world, each used by one thing only (the canvas
    // and the work pool listen to every tag of theirs): make them with dup()
    // on every rank in the same order.
    struct Network
    {
        World *world = nullptr;
        Communicator control; // views, progress, start/cancel of pools
        Communicator pool;    // the work pools
        Communicator canvas;  // the ParallelCanvas
    };
    // Tags on the control communicator.
    enum Tag {
        StartTag = 1,      // root -> member: a pool to join (generation, band rows, tag base, view)
        CancelTag = 2,     // root -> member: drop bands of generations up to this one
        StatusTag = 3,     // root -> member: generation, done, total, tint, canvas frame, view
        FinishTag = 4,     // root -> member: save the picture once canvas frame N is here, then ack
        ViewTag = 10,      // member -> root: please render this view
        TintTag = 11,      // member -> root: tint on/off
        WorkerDoneTag = 12, // member -> root: my part of pool N is over
        AckTag = 13,       // member -> root: finished (answer to FinishTag)
    };

    // `view` is the first view and fixes the picture's size and iterations;
    // later views change only the centre and the span.
    SharedRender(const View &view, int bandRows, bool tint, std::optional<Network> network,
                 QObject *parent = nullptr);
    ~SharedRender() override;

    bool isRoot() const { return rank() == 0; }
    int rank() const;
    int nodes() const;
    int done() const { return m_done; }
    int total() const { return m_total; }
    bool tint() const { return m_tint; }
    View view() const { return m_view; }
    quint32 generation() const { return m_generation; }
    QString viewText() const;
    QSize pictureSize() const { return QSize(m_view.width, m_view.height); }

    // Root: renders the first view. Members wait for the root's.
    void start();
    // The root renders `view` (its centre and span); a member asks the root.
    // Refused views (validateView) are logged and dropped.
    void requestView(const View &view);
    Q_INVOKABLE void setTint(bool on);
    // Zoom by `factor` (> 1: in) keeping the point at fractions (fx, fy) of
    // the picture where it is; pan by fractions of the picture.
    Q_INVOKABLE void zoomAt(double fx, double fy, double factor);
    Q_INVOKABLE void pan(double dx, double dy);
    // Back to the first view.
    Q_INVOKABLE void resetView() { requestView(m_home); }

    // The shared picture here: the canvas's scene, and its frame number.
    const CanvasScene &scene() const;
    quint32 frame() const;
    // The scene rendered at the picture's size (every band drawn so far).
    QImage canvasImage() const;
    // Root: the picture assembled from the bands (what --out writes).
    const QImage &picture() const { return m_picture; }
    // Root: statistics of the current render.
    double workSeconds() const { return m_workSeconds; }
    double wallSeconds() const { return m_wallSeconds; }
    QHash<int, int> bandsByNode() const { return m_byNode; }

    // Root: tells every member to finish once it has the root's current
    // frame; finishedTogether() when all acked (or were lost, or 30 s passed).
    // A member emits finishing() (save now) and then finishedTogether().
    void finishTogether();

Q_SIGNALS:
    void progressChanged();
    void tintChanged();
    void viewChanged();
    // The local scene changed (a frame or a replay).
    void pictureChanged();
    // Every band of `generation` is in the picture here.
    void renderComplete(quint32 generation);
    void workerLost(int node, qint64 reissued);
    void failed(const QString &reason);
    void finishing();
    void finishedTogether();

private:
    struct Picture; // the canvas, networked or local
    void handle(int source, int tag, const QByteArray &bytes);
    void handleAsRoot(int source, int tag, const QByteArray &bytes);
    void handleAsMember(int tag, const QByteArray &bytes);
    void sendToMembers(int tag, const QByteArray &bytes);
    void send(int tag, const QByteArray &bytes); // member -> root
    QList<int> liveMembers() const;
    void memberGone(int worldRank);

    // root
    void render(const View &view);
    void startPool();
    void maybeNextPool();
    void acceptBand(quint32 generation, int band, int node, const QByteArray &result);
    void drawBand(int band);
    void sendStatus();
    void checkAcks();
    // member
    void checkComplete();
    void checkFinish();

    View m_view;
    View m_home;
    int m_bandRows;
    bool m_tint;
    std::optional<Network> m_network;
    std::unique_ptr<Picture> m_canvas;
    std::unique_ptr<BandWorker> m_worker;
    std::unique_ptr<MessageListener> m_inbox;
    quint32 m_generation = 0;
    // m_generation for the root's pool thread (WorkPool::setLocalCompute).
    std::shared_ptr<std::atomic<quint32>> m_latestGeneration = std::make_shared<std::atomic<quint32>>(0);
    int m_done = 0;
    int m_total = 0;
    QSet<int> m_gone;

    // root
    QImage m_picture;
    QList<QByteArray> m_bands; // raw pixels, for redrawing with or without tint
    QList<int> m_bandNode;
    QHash<int, int> m_byNode;
    double m_workSeconds = 0;
    double m_wallSeconds = 0;
    QElapsedTimer m_clock;
    WorkPool *m_pool = nullptr;
    quint32 m_poolGeneration = 0;
    bool m_poolFinished = false;
    QSet<int> m_poolWaiting; // members still inside the pool
    std::optional<QSet<int>> m_acksWaiting;

    // member
    quint32 m_statusFrame = 0;
    quint32 m_completeReported = 0;
    std::optional<quint32> m_finishFrame;
};

} // namespace mmpi::demo
