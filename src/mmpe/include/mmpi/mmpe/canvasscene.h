// The retained picture of an MMPE canvas: every batch received, the current
// frame and state, what a late joiner needs (the state at the last clear and
// everything after it), and headless rendering into a QImage.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/mmpe/canvasbatch.h>
#include <mmpi/mmpe/canvaslimits.h>

#include <QImage>
#include <QSize>

#include <optional>

namespace mmpi {

class CanvasScene
{
public:
    // The logical canvas all coordinates refer to; rendering scales it to the
    // target image.
    explicit CanvasScene(QSize logicalSize = QSize(1024, 768));

    QSize logicalSize() const;

    // Appends a whole frame. Refused (ProtocolViolation) if its frame number
    // does not increase or it does not end with its only EndFrame; the scene
    // is then unchanged.
    Result<void> appendBatch(const CanvasBatch &batch);
    // Decodes and appends.
    Result<void> appendBytes(QByteArrayView bytes, const CanvasLimits &limits = {});

    // The number of the last frame appended; nullopt before the first.
    std::optional<quint32> currentFrame() const;
    qsizetype frameCount() const;
    const QList<CanvasBatch> &batches() const;
    // The state after the last command.
    const CanvasState &state() const;

    // From the last Clear on (everything if there was none), as batches with
    // their frame numbers: the first starts with the pen, brush and font in
    // effect at that point. Appending these to an empty scene reproduces the
    // picture.
    QList<CanvasBatch> replay() const;

    // Drops what precedes the last Clear (it can no longer be seen), keeping
    // memory bounded by what is on screen. Cheap when there is nothing to
    // drop, so it can be called after every frame.
    void discardBeforeLastClear();

    // Paints every command onto the image (which is not cleared first).
    void render(QImage &image) const;
    // A transparent image of the given size (the logical size if invalid)
    // with the scene painted on it.
    QImage toImage(QSize size = QSize()) const;
    // A region of the logical canvas (a viewport) at `size` (the region's
    // own size if invalid): exactly the pixels of that region of the whole
    // canvas drawn at the same scale, which is how it is made. Drawing only
    // the region would not do: the raster engine clips lines at the image's
    // edges with rounding, so a line across a tile's edge would differ by a
    // shade. Exact when the scale maps the canvas and the region to whole
    // pixels (1:1, 2:1, ...).
    QImage toImage(const QRect &logicalRegion, QSize size) const;

private:
    QSize m_logicalSize;
    QList<CanvasBatch> m_batches;
    CanvasState m_state;
    // Where the last Clear is, and the state just before it.
    qsizetype m_clearBatch = -1;
    qsizetype m_clearCommand = -1;
    CanvasState m_stateAtClear;
    // Nothing but the replay's state commands precede the last Clear.
    bool m_clearIsFirst = false;
};

} // namespace mmpi
