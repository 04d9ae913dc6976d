// mmpi::ParallelCanvas: one shared MMPE picture drawn by every member of a
// communicator, either on the root only (drawOnRoot) or on every device
// (broadcast), through the root, which numbers the frames and sends a device
// with a viewport only its tile's part (docs/reference/parallelcanvas.md).
#pragma once

#include <mmpi/comm/communicator.h>
#include <mmpi/comm/messagelistener.h>
#include <mmpi/mmpe/canvasdecoder.h>
#include <mmpi/mmpe/canvasencoder.h>
#include <mmpi/mmpe/canvasscene.h>
#include <mmpi/mmpe/canvasviewport.h>

#include <QCoroTask>
#include <QHash>
#include <QObject>

#include <memory>

namespace mmpi {

class ParallelCanvas : public QObject
{
    Q_OBJECT
public:
    enum class Mode {
        DrawOnRoot, // every member's frames go to the root, which alone draws them
        Broadcast,  // the root numbers every frame and relays it to all: every scene is the same
    };
    Q_ENUM(Mode)

    // The tags the canvas uses on its communicator.
    enum Tag {
        SubmitTag = 1,        // member -> root: one frame (a batch from its own encoder)
        FrameTag = 2,         // root -> members: a numbered frame to apply (Broadcast)
        ReplayRequestTag = 3, // member -> root: empty; "send me the picture"
        ReplayTag = 4,        // root -> member: the replay's batches, then an empty message
        ViewportTag = 5,      // member -> root: its viewport (CanvasViewport::encode)
    };

    // Construct it on every member of `comm`, with the same mode, root and
    // logical size. Give it a communicator of its own (`co_await comm.dup()`):
    // it listens to every source and tag of it. A non-root member in
    // Broadcast mode asks the root for the replay at once, so a member
    // created after frames were drawn catches up.
    ParallelCanvas(const Communicator &comm, Mode mode, int root = 0, QSize logicalSize = QSize(1024, 768),
                   QObject *parent = nullptr);
    // Carries a picture on over a new communicator, e.g. the survivors' after
    // SHRINK when the root was lost: every member passes the scene its old
    // canvas had (scene()). The new root goes on from its picture, numbering
    // frames after its last one; in Broadcast mode each other member asks it
    // for the replay and takes it whatever frame its own picture had reached,
    // so every device shows the new root's picture, then its frames.
    ParallelCanvas(const Communicator &comm, Mode mode, int root, const CanvasScene &picture,
                   QObject *parent = nullptr);
    ~ParallelCanvas() override;

    Mode mode() const { return m_mode; }
    int root() const { return m_root; }
    bool isRoot() const { return m_comm.rank() == m_root; }
    const Communicator &communicator() const { return m_comm; }

    // ---- drawing (any member). Commands collect in the current frame; an
    // error means the command is out of range and was not added.
    Result<void> setPen(const CanvasState::Pen &pen);
    Result<void> setBrush(const CanvasState::Brush &brush);
    Result<void> setFont(const CanvasState::Font &font);
    Result<void> drawLine(QPoint from, QPoint to);
    Result<void> drawPolyline(const QList<QPoint> &points);
    Result<void> drawRect(const QRect &rect);
    Result<void> fillRect(const QRect &rect);
    Result<void> drawEllipse(const QRect &bounds);
    Result<void> drawPolygon(const QList<QPoint> &points);
    Result<void> drawText(QPoint baseline, const QString &text);
    Result<void> drawImage(QPoint topLeft, const QImage &image);
    Result<void> clear(QRgb color);
    Result<void> append(const CanvasCommand &command);
    // Sends the frame to the root (the root hands its own to itself). In
    // Broadcast mode a member sees its frame when the root relays it back.
    Result<void> endFrame();
    // Frames this member has ended.
    quint32 framesSubmitted() const { return m_submitted; }

    // ---- the picture here
    const CanvasScene &scene() const { return m_scene; }
    // The local scene rendered headlessly (the logical size if invalid).
    QImage image(QSize size = QSize()) const;
    // Asks the root for the replay since its last clear; the local scene is
    // replaced by it (replayed() then). The root's own call does nothing.
    void requestReplay();

    // ---- tiled wall: per-device viewports
    // This device shows only `area` of the logical canvas (a null rect: all
    // of it). A member tells the root, which from then on sends it only the
    // primitives that can touch the area (state changes, clears and frame
    // ends still all) and, in Broadcast mode, at once a replay cut to the
    // area, so the tile is complete. Rendered at the area's size
    // (viewportImage()), the tile has the pixels of the same region of the
    // whole picture. On the root it only sets what viewportImage() shows:
    // the root keeps the whole picture, which replays are made from.
    // ProtocolViolation if the area does not fit 16-bit coordinates.
    Result<void> setViewport(const QRect &area);
    QRect viewport() const { return m_viewport.area(); }
    // The local scene's part in the viewport (the whole canvas without one),
    // at `size` (the viewport's logical size if invalid).
    QImage viewportImage(QSize size = QSize()) const;
    // Root: the viewport a member announced (null: the whole canvas).
    QRect memberViewport(int member) const { return m_viewports.value(member).area(); }

    // Frames and replay batches this member accepted from the root: their
    // bytes and commands (state changes and EndFrame included). The root
    // counts nothing here: its frames never travel.
    quint64 bytesReceived() const { return m_bytesReceived; }
    quint64 commandsReceived() const { return m_commandsReceived; }

    // ---- slow devices (root, Broadcast mode). A member whose link has more
    // than maxRelayBacklog() bytes of frames not yet sent (a slow radio, a
    // device that stopped reading) falls behind: the root stops relaying it
    // frames and, once what it queued has gone out, sends it a replay (the
    // picture since the last clear) instead of what it skipped; then frames
    // flow again. So the root's memory for a member stays bounded, and a
    // slow device shows the latest picture rather than an ever older one
    // (frames are dropped for it, as a game wants). Default 256 KiB.
    void setMaxRelayBacklog(qint64 bytes) { m_maxBacklog = qMax<qint64>(bytes, 0); }
    qint64 maxRelayBacklog() const { return m_maxBacklog; }
    // Bytes of frames and replays queued for a member and not yet sent.
    qint64 relayBacklog(int member) const { return m_backlog.value(member).bytes; }
    // Frames not relayed to some member because it was behind (one per member and frame).
    quint64 framesSkipped() const { return m_framesSkipped; }

    // Frame barrier, collective (every member calls it, in the same order as
    // the other collectives on the communicator): returns the root's frame
    // number F once every frame ended on any member before the call has
    // been applied at the root and (Broadcast) here: every device may then
    // show frame F. In DrawOnRoot mode the others return F at once. The
    // canvas must outlive the task. (A struct, not a Result: QCoro::waitFor
    // needs a default-constructible value.)
    struct Flip
    {
        quint32 frame = 0;
        Error error; // NoError, or why the barrier failed (a lost node...)
    };
    QCoro::Task<Flip> flipTogether();

Q_SIGNALS:
    // A frame was applied to the local scene: scene().batches().last() while
    // the handlers run. Then what precedes the last clear is dropped, so the
    // scene holds only what is on screen.
    void frameReady(quint32 frame);
    // The local scene was replaced by the root's replay (up to `frame`).
    void replayed(quint32 frame);
    // Bytes that are not a valid frame, or a message that has no business
    // here, were refused; the scene is unchanged.
    void messageRefused(int source, const mmpi::Error &reason);
    // Root: a submission (valid or not) arrived; for flipTogether().
    void submissionArrived(int source);
    // Root: a member announced its viewport (null: the whole canvas).
    void viewportAnnounced(int member, const QRect &area);
    // Root: a member fell behind (frames are skipped for it) or caught up.
    void memberLaggingChanged(int member, bool lagging);

private:
    ParallelCanvas(const Communicator &comm, Mode mode, int root, const CanvasScene &picture, bool carriedOn,
                   QObject *parent);
    void handle(int source, int tag, const QByteArray &bytes);
    void refuse(int source, const Error &reason);
    void acceptSubmission(int source, const QByteArray &bytes);
    bool applyFrame(const QByteArray &bytes);
    void receiveReplay(int source, const QByteArray &bytes);
    void acceptViewport(int source, const QByteArray &bytes);
    void relay(const QByteArray &frame, const QList<CanvasCommand> &commands, const CanvasEncoder &before);
    void sendReplay(int member);
    // Root: every frame and replay batch to a member goes through here, so
    // its backlog is known.
    void sendToMember(int member, int tag, const QByteArray &bytes);
    bool admitFrame(int member);
    void drained(int member, qint64 bytes);

    Communicator m_comm;
    Mode m_mode;
    int m_root;
    CanvasScene m_scene;
    CanvasEncoder m_encoder; // this member's own frames
    CanvasDecoder m_decoder;
    quint32 m_submitted = 0;
    CanvasViewport m_viewport;
    quint64 m_bytesReceived = 0;
    quint64 m_commandsReceived = 0;
    std::unique_ptr<MessageListener> m_inbox; // made once the rest is in place

    // root
    CanvasEncoder m_relay; // the one numbered stream
    QHash<int, CanvasState> m_senderState;
    QHash<int, quint32> m_received; // submissions by source
    QHash<int, CanvasViewport> m_viewports; // members without one get the whole stream
    struct Backlog
    {
        qint64 bytes = 0;    // queued for the member, not yet sent
        bool lagging = false; // frames are skipped until a replay is out
        bool missed = false;  // a frame was skipped since the last replay
    };
    QHash<int, Backlog> m_backlog;
    qint64 m_maxBacklog = 256 * 1024;
    quint64 m_framesSkipped = 0;

    // member receiving a replay
    std::optional<CanvasScene> m_replaying;
    bool m_replayFailed = false;
    bool m_adoptReplay = false; // carried on: the new root's picture wins even if older
};

} // namespace mmpi
