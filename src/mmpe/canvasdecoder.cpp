#include <mmpi/mmpe/canvasdecoder.h>

#include "canvasformat.h"
#include "mmpelogging.h"

#include <QStringDecoder>
#include <QtEndian>

namespace mmpi {

namespace {

// Reads big-endian fields from the batch, and says where it was when the
// input ran out: "truncated Polyline (command 3) at byte 41: its points need
// 48 bytes, 12 remain".
class Reader
{
public:
    explicit Reader(QByteArrayView bytes) : m_bytes(bytes) {}

    qsizetype position() const { return m_pos; }
    qsizetype remaining() const { return m_bytes.size() - m_pos; }
    const char *current() const { return m_bytes.data() + m_pos; }

    // The context named by truncation errors, e.g. "Polyline (command 3)".
    void setContext(QString context) { m_context = std::move(context); }

    Result<void> need(qsizetype n, const char *what) const
    {
        if (n <= remaining())
            return success();
        return Error(ErrorCode::TruncatedPayload,
                     QStringLiteral("truncated %1 at byte %2: %3 needs %4 bytes, %5 remain")
                         .arg(m_context).arg(m_pos).arg(QLatin1String(what)).arg(n).arg(remaining()));
    }

    // Callers check need() first; these only advance.
    template<typename T>
    T take()
    {
        const T value = qFromBigEndian<T>(current());
        m_pos += sizeof(T);
        return value;
    }

    QByteArrayView takeBytes(qsizetype n)
    {
        const QByteArrayView view = m_bytes.sliced(m_pos, n);
        m_pos += n;
        return view;
    }

private:
    QByteArrayView m_bytes;
    qsizetype m_pos = 0;
    QString m_context = QStringLiteral("batch header");
};

Error malformed(ErrorCode code, qsizetype at, const QString &context, const QString &why)
{
    return Error(code, QStringLiteral("%1 at byte %2: %3").arg(context).arg(at).arg(why));
}

Result<QString> takeUtf8(Reader &r, qsizetype n, const char *what, const QString &context)
{
    const qsizetype at = r.position();
    if (auto ok = r.need(n, what); !ok)
        return ok.error();
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    QString text = decoder.decode(r.takeBytes(n));
    if (decoder.hasError())
        return malformed(ErrorCode::ProtocolViolation, at, context,
                         QStringLiteral("%1 is not valid UTF-8").arg(QLatin1String(what)));
    return text;
}

QPoint takePoint(Reader &r)
{
    const qint16 x = r.take<qint16>();
    const qint16 y = r.take<qint16>();
    return QPoint(x, y);
}

Result<QImage> takeImage(Reader &r, const CanvasLimits &limits, qint64 &imageBytes,
                         const QString &context, CanvasCommand &c)
{
    if (auto ok = r.need(13, "the image header"); !ok)
        return ok.error();
    const qsizetype at = r.position();
    c.position = takePoint(r);
    const int width = r.take<quint16>();
    const int height = r.take<quint16>();
    const quint8 flags = r.take<quint8>();
    const quint32 length = r.take<quint32>();

    if (flags & ~canvasformat::ImageFlagsMask)
        return malformed(ErrorCode::BadHeader, at, context,
                         QStringLiteral("reserved image flags 0x%1 are set")
                             .arg(flags & ~canvasformat::ImageFlagsMask, 2, 16, QLatin1Char('0')));
    if (width < 1 || height < 1)
        return malformed(ErrorCode::ProtocolViolation, at, context,
                         QStringLiteral("image of %1x%2 has no pixels").arg(width).arg(height));
    if (width > limits.maxImageSide || height > limits.maxImageSide)
        return malformed(ErrorCode::FrameTooLarge, at, context,
                         QStringLiteral("image of %1x%2 exceeds the limit of %3x%3")
                             .arg(width).arg(height).arg(limits.maxImageSide));
    const qint64 decodedBytes = qint64(width) * height * 4;
    if (decodedBytes > limits.maxImageBytes)
        return malformed(ErrorCode::FrameTooLarge, at, context,
                         QStringLiteral("image of %1x%2 needs %3 bytes, above the limit of %4")
                             .arg(width).arg(height).arg(decodedBytes).arg(limits.maxImageBytes));
    if (imageBytes + decodedBytes > limits.maxImageBytesPerBatch)
        return malformed(ErrorCode::FrameTooLarge, at, context,
                         QStringLiteral("the batch's images would need %1 bytes, above the limit "
                                        "of %2")
                             .arg(imageBytes + decodedBytes).arg(limits.maxImageBytesPerBatch));

    const bool opaque = flags & canvasformat::Opaque;
    const qint64 rawSize = qint64(width) * height * canvasformat::bytesPerPixel(opaque);
    const bool compressed = flags & canvasformat::Compressed;
    // Uncompressed data has one possible length; compressed data is accepted
    // only if it is smaller, as the encoder only compresses when it helps.
    if (!compressed && length != rawSize)
        return malformed(ErrorCode::CountMismatch, at, context,
                         QStringLiteral("%1x%2 pixels need %3 bytes, the image declares %4")
                             .arg(width).arg(height).arg(rawSize).arg(length));
    if (compressed && (length < 4 || length >= rawSize))
        return malformed(ErrorCode::CountMismatch, at, context,
                         QStringLiteral("compressed data of %1 bytes for %2 raw bytes (must be 4 "
                                        "to %3)")
                             .arg(length).arg(rawSize).arg(rawSize - 1));
    if (auto ok = r.need(length, "the image data"); !ok)
        return ok.error();
    const QByteArrayView data = r.takeBytes(length);

    QByteArray raw;
    if (compressed) {
        // qCompress's own prefix says how much qUncompress will allocate: it
        // must be the size the dimensions imply, already bounded above.
        const quint32 declared = qFromBigEndian<quint32>(data.data());
        if (declared != rawSize)
            return malformed(ErrorCode::CountMismatch, at, context,
                             QStringLiteral("compressed data declares %1 raw bytes, %2x%3 pixels "
                                            "need %4")
                                 .arg(declared).arg(width).arg(height).arg(rawSize));
        raw = qUncompress(reinterpret_cast<const uchar *>(data.data()), data.size());
        if (raw.size() != rawSize)
            return malformed(ErrorCode::ProtocolViolation, at, context,
                             QStringLiteral("compressed image data is corrupt"));
    }
    const char *in = compressed ? raw.constData() : data.data();

    QImage image(width, height, opaque ? QImage::Format_RGB32 : QImage::Format_ARGB32);
    if (image.isNull())
        return malformed(ErrorCode::BufferLimitExceeded, at, context,
                         QStringLiteral("cannot allocate an image of %1x%2").arg(width).arg(height));
    for (int y = 0; y < height; ++y) {
        auto *line = reinterpret_cast<QRgb *>(image.scanLine(y));
        for (int x = 0; x < width; ++x) {
            const uchar a = opaque ? 0xFF : uchar(*in++);
            const uchar red = uchar(*in++);
            const uchar green = uchar(*in++);
            const uchar blue = uchar(*in++);
            line[x] = qRgba(red, green, blue, a);
        }
    }
    imageBytes += decodedBytes;
    return image;
}

} // namespace

CanvasDecoder::CanvasDecoder(CanvasLimits limits)
    : m_limits(limits)
{
}

const CanvasLimits &CanvasDecoder::limits() const
{
    return m_limits;
}

Result<CanvasBatch> CanvasDecoder::decode(QByteArrayView bytes) const
{
    auto refuse = [](Error error) {
        qCDebug(lcMmpe).noquote() << "refusing batch:" << error.toString();
        return error;
    };
    if (bytes.size() > m_limits.maxBatchBytes)
        return refuse(Error(ErrorCode::FrameTooLarge,
                            QStringLiteral("batch of %1 bytes exceeds the limit of %2")
                                .arg(bytes.size()).arg(m_limits.maxBatchBytes)));
    Reader r(bytes);
    // Field by field, so that a stream that is not MMPE is named as such
    // even when it is short.
    if (auto ok = r.need(4, "the magic"); !ok)
        return refuse(ok.error());
    if (const quint32 magic = r.take<quint32>(); magic != canvasformat::Magic)
        return refuse(Error(ErrorCode::BadMagic,
                            QStringLiteral("bad batch magic 0x%1 (expected 0x%2)")
                                .arg(magic, 8, 16, QLatin1Char('0'))
                                .arg(canvasformat::Magic, 8, 16, QLatin1Char('0'))));
    if (auto ok = r.need(2, "version and flags"); !ok)
        return refuse(ok.error());
    if (const quint8 version = r.take<quint8>(); version != canvasformat::Version)
        return refuse(Error(ErrorCode::BadVersion,
                            QStringLiteral("unsupported MMPE version %1 (expected %2)")
                                .arg(version).arg(canvasformat::Version)));
    if (const quint8 flags = r.take<quint8>(); flags != 0)
        return refuse(Error(ErrorCode::BadHeader,
                            QStringLiteral("reserved batch flags 0x%1 are set")
                                .arg(flags, 2, 16, QLatin1Char('0'))));
    if (auto ok = r.need(8, "frame number and command count"); !ok)
        return refuse(ok.error());
    CanvasBatch batch;
    batch.frame = r.take<quint32>();
    const quint32 count = r.take<quint32>();
    if (count < 1 || count > m_limits.maxCommands)
        return refuse(Error(ErrorCode::CountMismatch,
                            QStringLiteral("batch declares %1 commands (must be 1 to %2)")
                                .arg(count).arg(m_limits.maxCommands)));
    // Every command takes at least its opcode byte.
    if (count > r.remaining())
        return refuse(Error(ErrorCode::TruncatedPayload,
                            QStringLiteral("batch declares %1 commands but only %2 bytes follow the "
                                           "header")
                                .arg(count).arg(r.remaining())));
    batch.commands.reserve(count);

    qint64 imageBytes = 0;
    for (quint32 i = 0; i < count; ++i) {
        const qsizetype at = r.position();
        r.setContext(QStringLiteral("command %1").arg(i));
        if (auto ok = r.need(1, "the opcode"); !ok)
            return refuse(ok.error());
        const quint8 code = r.take<quint8>();
        if (!canvasformat::isKnownOpcode(code))
            return refuse(malformed(ErrorCode::ProtocolViolation, at, QStringLiteral("command %1").arg(i),
                                    QStringLiteral("unknown opcode 0x%1")
                                        .arg(code, 2, 16, QLatin1Char('0'))));
        CanvasCommand c;
        c.opcode = CanvasOpcode(code);
        const QString context = QStringLiteral("%1 (command %2)").arg(canvasOpcodeName(c.opcode)).arg(i);
        r.setContext(context);
        const bool last = i + 1 == count;
        if ((c.opcode == CanvasOpcode::EndFrame) != last)
            return refuse(malformed(ErrorCode::ProtocolViolation, at, context,
                                    last ? QStringLiteral("the last command of a batch must be EndFrame")
                                         : QStringLiteral("EndFrame before the last of %1 commands")
                                               .arg(count)));

        switch (c.opcode) {
        case CanvasOpcode::SetPen:
            if (auto ok = r.need(7, "the pen"); !ok)
                return refuse(ok.error());
            c.pen.color = r.take<quint32>();
            c.pen.width = r.take<quint16>();
            c.pen.style = CanvasPenStyle(r.take<quint8>());
            break;
        case CanvasOpcode::SetBrush:
            if (auto ok = r.need(5, "the brush"); !ok)
                return refuse(ok.error());
            c.brush.style = CanvasBrushStyle(r.take<quint8>());
            c.brush.color = r.take<quint32>();
            break;
        case CanvasOpcode::SetFont: {
            if (auto ok = r.need(3, "point size and family length"); !ok)
                return refuse(ok.error());
            c.font.pointSize = r.take<quint16>();
            const quint8 length = r.take<quint8>();
            if (length > m_limits.maxFamilyBytes)
                return refuse(malformed(ErrorCode::FrameTooLarge, at, context,
                                        QStringLiteral("font family of %1 bytes exceeds the limit "
                                                       "of %2")
                                            .arg(length).arg(m_limits.maxFamilyBytes)));
            auto family = takeUtf8(r, length, "the font family", context);
            if (!family)
                return refuse(family.error());
            c.font.family = *family;
            break;
        }
        case CanvasOpcode::Line:
            if (auto ok = r.need(8, "two points"); !ok)
                return refuse(ok.error());
            c.points = {takePoint(r), takePoint(r)};
            break;
        case CanvasOpcode::Polyline:
        case CanvasOpcode::Polygon: {
            if (auto ok = r.need(2, "the point count"); !ok)
                return refuse(ok.error());
            const quint16 n = r.take<quint16>();
            const quint16 min = c.opcode == CanvasOpcode::Polygon ? 3 : 2;
            if (n < min || n > m_limits.maxPoints)
                return refuse(malformed(n > m_limits.maxPoints ? ErrorCode::FrameTooLarge
                                                               : ErrorCode::CountMismatch,
                                        at, context,
                                        QStringLiteral("%1 points (must be %2 to %3)")
                                            .arg(n).arg(min).arg(m_limits.maxPoints)));
            if (auto ok = r.need(qsizetype(n) * 4, "its points"); !ok)
                return refuse(ok.error());
            c.points.reserve(n);
            for (int k = 0; k < n; ++k)
                c.points.append(takePoint(r));
            break;
        }
        case CanvasOpcode::Rect:
        case CanvasOpcode::FilledRect:
        case CanvasOpcode::Ellipse: {
            if (auto ok = r.need(8, "the rect"); !ok)
                return refuse(ok.error());
            const QPoint origin = takePoint(r);
            const int w = r.take<quint16>();
            const int h = r.take<quint16>();
            c.rect = QRect(origin.x(), origin.y(), w, h);
            break;
        }
        case CanvasOpcode::Text: {
            if (auto ok = r.need(6, "position and text length"); !ok)
                return refuse(ok.error());
            c.position = takePoint(r);
            const quint16 length = r.take<quint16>();
            if (length > m_limits.maxTextBytes)
                return refuse(malformed(ErrorCode::FrameTooLarge, at, context,
                                        QStringLiteral("text of %1 bytes exceeds the limit of %2")
                                            .arg(length).arg(m_limits.maxTextBytes)));
            auto text = takeUtf8(r, length, "the text", context);
            if (!text)
                return refuse(text.error());
            c.text = *text;
            break;
        }
        case CanvasOpcode::Image: {
            auto image = takeImage(r, m_limits, imageBytes, context, c);
            if (!image)
                return refuse(image.error());
            c.image = std::move(*image);
            break;
        }
        case CanvasOpcode::Clear:
            if (auto ok = r.need(4, "the colour"); !ok)
                return refuse(ok.error());
            c.color = r.take<quint32>();
            break;
        case CanvasOpcode::EndFrame:
            break;
        }
        // Ranges the field widths alone do not bound (styles, sizes).
        if (auto ok = canvasformat::validate(c, m_limits); !ok)
            return refuse(malformed(ok.error().code, at, QStringLiteral("command %1").arg(i),
                                    ok.error().message));
        batch.commands.append(std::move(c));
    }
    if (r.remaining() != 0)
        return refuse(Error(ErrorCode::CountMismatch,
                            QStringLiteral("%1 bytes follow the last of %2 commands at byte %3")
                                .arg(r.remaining()).arg(count).arg(r.position())));
    return batch;
}

} // namespace mmpi
