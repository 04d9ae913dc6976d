// Keeps a CanvasScene drawn into an image of a given size, drawing only the
// frames that came since the last update: a game that clears every frame
// costs one frame's primitives, not the whole history. Pixel for pixel the
// same as CanvasScene::toImage(size).
#pragma once

#include <mmpi/mmpe/canvasscene.h>
#include <mmpi/mmpe/canvasstate.h>

#include <QImage>

#include <optional>

namespace mmpi {

class SceneRasterizer
{
public:
    // Brings the image up to date with `scene` at `size`; true if it changed.
    bool update(const CanvasScene &scene, QSize size);
    // Forget what was drawn: the next update() draws from scratch (the
    // scene was replaced, e.g. by a replay).
    void invalidate();
    const QImage &image() const { return m_image; }
    // Frames drawn by the last update(), and whether it started afresh.
    int lastFramesDrawn() const { return m_lastFramesDrawn; }
    bool lastWasFull() const { return m_lastWasFull; }

private:
    void drawFull(const CanvasScene &scene, QSize size);
    // The batches after the last one drawn, or nullopt when they do not
    // follow on (a replay, older frames gone).
    std::optional<qsizetype> firstNewBatch(const CanvasScene &scene) const;

    QImage m_image;
    std::optional<quint32> m_drawnFrame;
    CanvasState m_state; // the renderer's state after the last frame drawn
    int m_lastFramesDrawn = 0;
    bool m_lastWasFull = false;
};

} // namespace mmpi
