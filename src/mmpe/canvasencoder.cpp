#include <mmpi/mmpe/canvasencoder.h>

#include "canvasformat.h"

#include <QtEndian>

namespace mmpi {

namespace {

template<typename T>
void put(QByteArray &out, T value)
{
    char bytes[sizeof(T)];
    qToBigEndian<T>(value, bytes);
    out.append(bytes, sizeof(T));
}

void putPoint(QByteArray &out, QPoint p)
{
    put<qint16>(out, qint16(p.x()));
    put<qint16>(out, qint16(p.y()));
}

void putRect(QByteArray &out, const QRect &r)
{
    put<qint16>(out, qint16(r.x()));
    put<qint16>(out, qint16(r.y()));
    put<quint16>(out, quint16(r.width()));
    put<quint16>(out, quint16(r.height()));
}

QByteArray rawPixels(const QImage &image, bool opaque)
{
    const int bpp = canvasformat::bytesPerPixel(opaque);
    QByteArray raw(qsizetype(image.width()) * image.height() * bpp, Qt::Uninitialized);
    char *out = raw.data();
    for (int y = 0; y < image.height(); ++y) {
        const auto *line = reinterpret_cast<const QRgb *>(image.constScanLine(y));
        for (int x = 0; x < image.width(); ++x) {
            const QRgb px = line[x];
            if (!opaque)
                *out++ = char(qAlpha(px));
            *out++ = char(qRed(px));
            *out++ = char(qGreen(px));
            *out++ = char(qBlue(px));
        }
    }
    return raw;
}

// A command's encoded size before encoding it, so a batch that would pass
// maxBatchBytes is refused without growing the buffer first. Images are
// counted uncompressed: an upper bound.
qint64 encodedSizeBound(const CanvasCommand &c)
{
    switch (c.opcode) {
    case CanvasOpcode::SetFont: return 4 + c.font.family.toUtf8().size();
    case CanvasOpcode::Polyline:
    case CanvasOpcode::Polygon: return 3 + 4 * qint64(c.points.size());
    case CanvasOpcode::Text: return 7 + c.text.toUtf8().size();
    case CanvasOpcode::Image:
        return 14 + 4 + qint64(c.image.width()) * c.image.height()
                            * canvasformat::bytesPerPixel(c.image.format() == QImage::Format_RGB32);
    default: return 16;
    }
}

} // namespace

CanvasEncoder::CanvasEncoder(CanvasLimits limits)
    : m_limits(limits)
{
}

Result<void> CanvasEncoder::append(const CanvasCommand &c)
{
    if (c.opcode == CanvasOpcode::EndFrame)
        return Error(ErrorCode::ProtocolViolation,
                     QStringLiteral("EndFrame is not appended: endFrame() closes the frame"));
    if (auto ok = canvasformat::validate(c, m_limits); !ok)
        return ok;
    switch (c.opcode) {
    case CanvasOpcode::SetPen:
        if (c.pen == m_sent.pen)
            return success();
        break;
    case CanvasOpcode::SetBrush:
        if (c.brush == m_sent.brush)
            return success();
        break;
    case CanvasOpcode::SetFont:
        if (c.font == m_sent.font)
            return success();
        break;
    default:
        break;
    }
    // The count leaves room for EndFrame, the bytes for EndFrame and header.
    if (m_count + 2 > m_limits.maxCommands)
        return Error(ErrorCode::FrameTooLarge,
                     QStringLiteral("frame %1 already holds %2 commands, the most a batch can")
                         .arg(m_frame).arg(m_count));
    const qint64 size = canvasformat::HeaderSize + m_body.size() + encodedSizeBound(c) + 1;
    if (size > m_limits.maxBatchBytes)
        return Error(ErrorCode::FrameTooLarge,
                     QStringLiteral("adding %1 to frame %2 could make its batch %3 bytes, above the "
                                    "limit of %4; end the frame first")
                         .arg(canvasOpcodeName(c.opcode)).arg(m_frame).arg(size)
                         .arg(m_limits.maxBatchBytes));
    if (c.opcode == CanvasOpcode::Image) {
        const qint64 bytes = qint64(c.image.width()) * c.image.height() * 4;
        if (m_imageBytes + bytes > m_limits.maxImageBytesPerBatch)
            return Error(ErrorCode::FrameTooLarge,
                         QStringLiteral("frame %1 would carry %2 bytes of image, above the limit "
                                        "of %3; end the frame first")
                             .arg(m_frame).arg(m_imageBytes + bytes)
                             .arg(m_limits.maxImageBytesPerBatch));
        m_imageBytes += bytes;
    }
    encodeCommand(c);
    return success();
}

void CanvasEncoder::encodeCommand(const CanvasCommand &c)
{
    QByteArray &out = m_body;
    out.append(char(c.opcode));
    ++m_count;
    switch (c.opcode) {
    case CanvasOpcode::SetPen:
        put<quint32>(out, c.pen.color);
        put<quint16>(out, c.pen.width);
        out.append(char(c.pen.style));
        m_sent.pen = c.pen;
        break;
    case CanvasOpcode::SetBrush:
        out.append(char(c.brush.style));
        put<quint32>(out, c.brush.color);
        m_sent.brush = c.brush;
        break;
    case CanvasOpcode::SetFont: {
        const QByteArray family = c.font.family.toUtf8();
        put<quint16>(out, c.font.pointSize);
        out.append(char(quint8(family.size())));
        out.append(family);
        m_sent.font = c.font;
        break;
    }
    case CanvasOpcode::Line:
        putPoint(out, c.points[0]);
        putPoint(out, c.points[1]);
        break;
    case CanvasOpcode::Polyline:
    case CanvasOpcode::Polygon:
        put<quint16>(out, quint16(c.points.size()));
        for (QPoint p : c.points)
            putPoint(out, p);
        break;
    case CanvasOpcode::Rect:
    case CanvasOpcode::FilledRect:
    case CanvasOpcode::Ellipse:
        putRect(out, c.rect);
        break;
    case CanvasOpcode::Text: {
        const QByteArray text = c.text.toUtf8();
        putPoint(out, c.position);
        put<quint16>(out, quint16(text.size()));
        out.append(text);
        break;
    }
    case CanvasOpcode::Image: {
        const bool opaque = c.image.format() == QImage::Format_RGB32;
        QByteArray data = rawPixels(c.image, opaque);
        quint8 flags = opaque ? canvasformat::Opaque : 0;
        if (m_compress) {
            QByteArray packed = qCompress(data);
            if (!packed.isEmpty() && packed.size() < data.size()) {
                data = std::move(packed);
                flags |= canvasformat::Compressed;
            }
        }
        putPoint(out, c.position);
        put<quint16>(out, quint16(c.image.width()));
        put<quint16>(out, quint16(c.image.height()));
        out.append(char(flags));
        put<quint32>(out, quint32(data.size()));
        out.append(data);
        break;
    }
    case CanvasOpcode::Clear:
        put<quint32>(out, c.color);
        break;
    case CanvasOpcode::EndFrame:
        break;
    }
}

QByteArray CanvasEncoder::endFrame()
{
    QByteArray batch;
    batch.reserve(canvasformat::HeaderSize + m_body.size() + 1);
    put<quint32>(batch, canvasformat::Magic);
    batch.append(char(canvasformat::Version));
    batch.append(char(0)); // flags, reserved
    put<quint32>(batch, m_frame);
    put<quint32>(batch, m_count + 1);
    batch.append(m_body);
    batch.append(char(CanvasOpcode::EndFrame));
    m_body.clear();
    m_count = 0;
    m_imageBytes = 0;
    ++m_frame;
    return batch;
}

Result<QByteArray> CanvasEncoder::encode(const CanvasBatch &batch)
{
    if (batch.commands.isEmpty() || batch.commands.constLast().opcode != CanvasOpcode::EndFrame)
        return Error(ErrorCode::ProtocolViolation,
                     QStringLiteral("batch of frame %1 does not end with EndFrame").arg(batch.frame));
    if (m_count != 0)
        return Error(ErrorCode::ProtocolViolation,
                     QStringLiteral("cannot encode frame %1 while frame %2 has %3 pending commands")
                         .arg(batch.frame).arg(m_frame).arg(m_count));
    // Restore on failure, so a refused batch leaves the encoder as it was.
    const QByteArray body = m_body;
    const quint32 count = m_count;
    const qint64 imageBytes = m_imageBytes;
    const CanvasState sent = m_sent;
    for (qsizetype i = 0; i + 1 < batch.commands.size(); ++i) {
        if (auto ok = append(batch.commands[i]); !ok) {
            m_body = body;
            m_count = count;
            m_imageBytes = imageBytes;
            m_sent = sent;
            return Error(ok.error().code, QStringLiteral("command %1 of frame %2: %3")
                                              .arg(i).arg(batch.frame).arg(ok.error().message));
        }
    }
    m_frame = batch.frame;
    return endFrame();
}

Result<void> CanvasEncoder::resendState()
{
    if (m_count + 4 > m_limits.maxCommands
        || canvasformat::HeaderSize + m_body.size() + encodedSizeBound(CanvasCommand::setFont(m_sent.font))
                + 16 + 1 > m_limits.maxBatchBytes)
        return Error(ErrorCode::FrameTooLarge,
                     QStringLiteral("frame %1 has no room left for the state; end the frame first")
                         .arg(m_frame));
    encodeCommand(CanvasCommand::setPen(m_sent.pen));
    encodeCommand(CanvasCommand::setBrush(m_sent.brush));
    encodeCommand(CanvasCommand::setFont(m_sent.font));
    return success();
}

void CanvasEncoder::resetState()
{
    m_sent = CanvasState();
}

void CanvasEncoder::assumeState(const CanvasState &state)
{
    m_sent = state;
}

const CanvasState &CanvasEncoder::sentState() const
{
    return m_sent;
}

quint32 CanvasEncoder::frameNumber() const
{
    return m_frame;
}

void CanvasEncoder::setFrameNumber(quint32 frame)
{
    m_frame = frame;
}

void CanvasEncoder::setImageCompression(bool enabled)
{
    m_compress = enabled;
}

bool CanvasEncoder::imageCompression() const
{
    return m_compress;
}

quint32 CanvasEncoder::pendingCommands() const
{
    return m_count;
}

qsizetype CanvasEncoder::pendingBytes() const
{
    return m_body.size();
}

} // namespace mmpi
