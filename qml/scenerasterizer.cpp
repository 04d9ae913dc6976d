#include "scenerasterizer.h"

#include <mmpi/mmpe/canvasrenderer.h>

namespace mmpi {

namespace {

bool hasClear(const CanvasBatch &batch)
{
    for (const CanvasCommand &c : batch.commands)
        if (c.opcode == CanvasOpcode::Clear)
            return true;
    return false;
}

} // namespace

void SceneRasterizer::invalidate()
{
    m_drawnFrame.reset();
}

std::optional<qsizetype> SceneRasterizer::firstNewBatch(const CanvasScene &scene) const
{
    const QList<CanvasBatch> &batches = scene.batches();
    if (!m_drawnFrame)
        return std::nullopt;
    // Searching from the end: new frames are few.
    for (qsizetype i = batches.size() - 1; i >= 0; --i) {
        if (batches.at(i).frame == *m_drawnFrame)
            return i + 1;
        if (batches.at(i).frame < *m_drawnFrame)
            break;
    }
    return std::nullopt;
}

bool SceneRasterizer::update(const CanvasScene &scene, QSize size)
{
    m_lastFramesDrawn = 0;
    m_lastWasFull = false;
    if (size.isEmpty())
        return false;
    if (m_image.size() != size)
        invalidate();
    const std::optional<qsizetype> from = firstNewBatch(scene);
    if (!from) {
        drawFull(scene, size);
        return true;
    }
    const QList<CanvasBatch> &batches = scene.batches();
    if (*from >= batches.size())
        return false;
    for (qsizetype i = *from; i < batches.size(); ++i) {
        // A clear wipes everything: starting at the last one is cheaper.
        if (hasClear(batches.at(i))) {
            drawFull(scene, size);
            return true;
        }
    }
    QPainter painter(&m_image);
    CanvasRenderer renderer(painter, scene.logicalSize());
    renderer.draw(CanvasCommand::setPen(m_state.pen));
    renderer.draw(CanvasCommand::setBrush(m_state.brush));
    renderer.draw(CanvasCommand::setFont(m_state.font));
    for (qsizetype i = *from; i < batches.size(); ++i)
        renderer.draw(batches.at(i).commands);
    m_state = renderer.state();
    m_drawnFrame = batches.last().frame;
    m_lastFramesDrawn = int(batches.size() - *from);
    return true;
}

void SceneRasterizer::drawFull(const CanvasScene &scene, QSize size)
{
    if (m_image.size() != size)
        m_image = QImage(size, QImage::Format_ARGB32_Premultiplied);
    m_image.fill(Qt::transparent);
    // The replay starts at the last clear with the state of that moment: the
    // same picture as every batch drawn, for a fraction of the work.
    const QList<CanvasBatch> replay = scene.replay();
    QPainter painter(&m_image);
    CanvasRenderer renderer(painter, scene.logicalSize());
    for (const CanvasBatch &batch : replay)
        renderer.draw(batch.commands);
    m_state = renderer.state();
    m_drawnFrame = scene.currentFrame();
    m_lastFramesDrawn = int(replay.size());
    m_lastWasFull = true;
}

} // namespace mmpi
