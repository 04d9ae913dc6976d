#include <mmpi/mmpe/canvasscene.h>

#include <mmpi/mmpe/canvasdecoder.h>
#include <mmpi/mmpe/canvasrenderer.h>

namespace mmpi {

CanvasScene::CanvasScene(QSize logicalSize)
    : m_logicalSize(logicalSize)
{
}

QSize CanvasScene::logicalSize() const
{
    return m_logicalSize;
}

Result<void> CanvasScene::appendBatch(const CanvasBatch &batch)
{
    if (!m_batches.isEmpty() && batch.frame <= m_batches.constLast().frame)
        return Error(ErrorCode::ProtocolViolation,
                     QStringLiteral("frame %1 arrived after frame %2")
                         .arg(batch.frame).arg(m_batches.constLast().frame));
    const qsizetype n = batch.commands.size();
    for (qsizetype i = 0; i < n; ++i) {
        if ((batch.commands[i].opcode == CanvasOpcode::EndFrame) != (i + 1 == n))
            return Error(ErrorCode::ProtocolViolation,
                         QStringLiteral("frame %1 must end with its only EndFrame").arg(batch.frame));
    }
    if (n == 0)
        return Error(ErrorCode::ProtocolViolation,
                     QStringLiteral("frame %1 has no commands, not even EndFrame").arg(batch.frame));

    // The state is tracked as it goes so the one before the last Clear is known.
    for (qsizetype i = 0; i < n; ++i) {
        const CanvasCommand &c = batch.commands[i];
        switch (c.opcode) {
        case CanvasOpcode::SetPen: m_state.pen = c.pen; break;
        case CanvasOpcode::SetBrush: m_state.brush = c.brush; break;
        case CanvasOpcode::SetFont: m_state.font = c.font; break;
        case CanvasOpcode::Clear:
            m_clearBatch = m_batches.size();
            m_clearCommand = i;
            m_stateAtClear = m_state;
            m_clearIsFirst = false;
            break;
        default: break;
        }
    }
    m_batches.append(batch);
    return success();
}

Result<void> CanvasScene::appendBytes(QByteArrayView bytes, const CanvasLimits &limits)
{
    auto batch = CanvasDecoder(limits).decode(bytes);
    if (!batch)
        return batch.error();
    return appendBatch(*batch);
}

std::optional<quint32> CanvasScene::currentFrame() const
{
    if (m_batches.isEmpty())
        return std::nullopt;
    return m_batches.constLast().frame;
}

qsizetype CanvasScene::frameCount() const
{
    return m_batches.size();
}

const QList<CanvasBatch> &CanvasScene::batches() const
{
    return m_batches;
}

const CanvasState &CanvasScene::state() const
{
    return m_state;
}

QList<CanvasBatch> CanvasScene::replay() const
{
    if (m_batches.isEmpty())
        return {};
    const qsizetype firstBatch = m_clearBatch < 0 ? 0 : m_clearBatch;
    const qsizetype firstCommand = m_clearBatch < 0 ? 0 : m_clearCommand;
    const CanvasState &start = m_clearBatch < 0 ? CanvasState() : m_stateAtClear;

    QList<CanvasBatch> out = m_batches.mid(firstBatch);
    CanvasBatch &first = out.first();
    first.commands = first.commands.mid(firstCommand);
    first.commands.prepend(CanvasCommand::setFont(start.font));
    first.commands.prepend(CanvasCommand::setBrush(start.brush));
    first.commands.prepend(CanvasCommand::setPen(start.pen));
    return out;
}

void CanvasScene::discardBeforeLastClear()
{
    if (m_clearBatch < 0 || m_clearIsFirst)
        return;
    m_batches = replay();
    // The replay starts with three state commands, then the Clear.
    m_clearBatch = 0;
    m_clearCommand = 3;
    m_clearIsFirst = true;
}

void CanvasScene::render(QImage &image) const
{
    if (image.isNull())
        return;
    QPainter painter(&image);
    CanvasRenderer renderer(painter, m_logicalSize);
    for (const CanvasBatch &batch : m_batches)
        renderer.draw(batch.commands);
}

QImage CanvasScene::toImage(QSize size) const
{
    QImage image(size.isValid() ? size : m_logicalSize, QImage::Format_ARGB32_Premultiplied);
    if (image.isNull())
        return image;
    image.fill(Qt::transparent);
    render(image);
    return image;
}

QImage CanvasScene::toImage(const QRect &logicalRegion, QSize size) const
{
    if (!logicalRegion.isValid() || m_logicalSize.isEmpty())
        return QImage();
    if (!size.isValid())
        size = logicalRegion.size();
    const qreal sx = qreal(size.width()) / logicalRegion.width();
    const qreal sy = qreal(size.height()) / logicalRegion.height();
    const QSize whole(qRound(m_logicalSize.width() * sx), qRound(m_logicalSize.height() * sy));
    const QRect region(qRound(logicalRegion.x() * sx), qRound(logicalRegion.y() * sy), size.width(), size.height());
    return toImage(whole).copy(region);
}

} // namespace mmpi
