#include "canvasformat.h"

#include <limits>

namespace mmpi::canvasformat {

namespace {

bool fitsInt16(int v)
{
    return v >= std::numeric_limits<qint16>::min() && v <= std::numeric_limits<qint16>::max();
}

bool fitsUInt16(int v)
{
    return v >= 0 && v <= std::numeric_limits<quint16>::max();
}

Error invalid(const CanvasCommand &c, const QString &why)
{
    return Error(ErrorCode::ProtocolViolation,
                 QStringLiteral("%1: %2").arg(canvasOpcodeName(c.opcode), why));
}

Error tooLarge(const CanvasCommand &c, const QString &why)
{
    return Error(ErrorCode::FrameTooLarge,
                 QStringLiteral("%1: %2").arg(canvasOpcodeName(c.opcode), why));
}

Result<void> checkPoint(const CanvasCommand &c, QPoint p)
{
    if (!fitsInt16(p.x()) || !fitsInt16(p.y()))
        return invalid(c, QStringLiteral("point (%1, %2) is outside the 16-bit coordinate range")
                              .arg(p.x()).arg(p.y()));
    return success();
}

Result<void> checkPoints(const CanvasCommand &c, const CanvasLimits &limits, qsizetype min,
                         qsizetype max)
{
    const qsizetype n = c.points.size();
    if (n < min || n > max) {
        const QString range = min == max ? QString::number(min)
                                         : QStringLiteral("%1 to %2").arg(min).arg(max);
        auto error = Error(n > limits.maxPoints ? ErrorCode::FrameTooLarge : ErrorCode::CountMismatch,
                           QStringLiteral("%1: %2 points, expected %3")
                               .arg(canvasOpcodeName(c.opcode)).arg(n).arg(range));
        return error;
    }
    for (QPoint p : c.points)
        if (auto ok = checkPoint(c, p); !ok)
            return ok;
    return success();
}

Result<void> checkRect(const CanvasCommand &c)
{
    const QRect &r = c.rect;
    if (!fitsInt16(r.x()) || !fitsInt16(r.y()) || !fitsUInt16(r.width()) || !fitsUInt16(r.height()))
        return invalid(c, QStringLiteral("rect (%1, %2) %3x%4 does not fit 16-bit origin and size")
                              .arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height()));
    return success();
}

} // namespace

bool isKnownOpcode(quint8 code)
{
    switch (CanvasOpcode(code)) {
    case CanvasOpcode::SetPen:
    case CanvasOpcode::SetBrush:
    case CanvasOpcode::SetFont:
    case CanvasOpcode::Line:
    case CanvasOpcode::Polyline:
    case CanvasOpcode::Rect:
    case CanvasOpcode::FilledRect:
    case CanvasOpcode::Ellipse:
    case CanvasOpcode::Polygon:
    case CanvasOpcode::Text:
    case CanvasOpcode::Image:
    case CanvasOpcode::Clear:
    case CanvasOpcode::EndFrame:
        return true;
    }
    return false;
}

int bytesPerPixel(bool opaque)
{
    return opaque ? 3 : 4;
}

Result<void> validate(const CanvasCommand &c, const CanvasLimits &limits)
{
    switch (c.opcode) {
    case CanvasOpcode::SetPen:
        if (quint8(c.pen.style) > quint8(CanvasPenStyle::DashDot))
            return invalid(c, QStringLiteral("unknown pen style %1").arg(quint8(c.pen.style)));
        if (c.pen.width > limits.maxPenWidth)
            return invalid(c, QStringLiteral("pen width %1 exceeds the limit of %2")
                                  .arg(c.pen.width).arg(limits.maxPenWidth));
        return success();
    case CanvasOpcode::SetBrush:
        if (quint8(c.brush.style) > quint8(CanvasBrushStyle::Solid))
            return invalid(c, QStringLiteral("unknown brush style %1").arg(quint8(c.brush.style)));
        return success();
    case CanvasOpcode::SetFont: {
        const qsizetype bytes = c.font.family.toUtf8().size();
        if (bytes > limits.maxFamilyBytes)
            return tooLarge(c, QStringLiteral("font family of %1 UTF-8 bytes exceeds the limit of %2")
                                   .arg(bytes).arg(limits.maxFamilyBytes));
        if (c.font.pointSize < 1 || c.font.pointSize > limits.maxPointSize)
            return invalid(c, QStringLiteral("point size %1 is outside 1 to %2")
                                  .arg(c.font.pointSize).arg(limits.maxPointSize));
        return success();
    }
    case CanvasOpcode::Line:
        return checkPoints(c, limits, 2, 2);
    case CanvasOpcode::Polyline:
        return checkPoints(c, limits, 2, limits.maxPoints);
    case CanvasOpcode::Polygon:
        return checkPoints(c, limits, 3, limits.maxPoints);
    case CanvasOpcode::Rect:
    case CanvasOpcode::FilledRect:
    case CanvasOpcode::Ellipse:
        return checkRect(c);
    case CanvasOpcode::Text: {
        if (auto ok = checkPoint(c, c.position); !ok)
            return ok;
        const qsizetype bytes = c.text.toUtf8().size();
        if (bytes > limits.maxTextBytes)
            return tooLarge(c, QStringLiteral("text of %1 UTF-8 bytes exceeds the limit of %2")
                                   .arg(bytes).arg(limits.maxTextBytes));
        return success();
    }
    case CanvasOpcode::Image: {
        if (auto ok = checkPoint(c, c.position); !ok)
            return ok;
        const QImage &img = c.image;
        if (img.isNull() || img.width() < 1 || img.height() < 1)
            return invalid(c, QStringLiteral("an image needs at least one pixel"));
        if (img.width() > limits.maxImageSide || img.height() > limits.maxImageSide)
            return tooLarge(c, QStringLiteral("image of %1x%2 exceeds the limit of %3x%3")
                                   .arg(img.width()).arg(img.height()).arg(limits.maxImageSide));
        const qint64 bytes = qint64(img.width()) * img.height() * 4;
        if (bytes > limits.maxImageBytes)
            return tooLarge(c, QStringLiteral("image of %1x%2 needs %3 bytes, above the limit of %4")
                                   .arg(img.width()).arg(img.height()).arg(bytes)
                                   .arg(limits.maxImageBytes));
        if (img.format() != QImage::Format_ARGB32 && img.format() != QImage::Format_RGB32)
            return invalid(c, QStringLiteral("image format %1 (build it with CanvasCommand::imageAt)")
                                  .arg(int(img.format())));
        return success();
    }
    case CanvasOpcode::Clear:
    case CanvasOpcode::EndFrame:
        return success();
    }
    return Error(ErrorCode::ProtocolViolation,
                 QStringLiteral("unknown opcode 0x%1").arg(quint8(c.opcode), 2, 16, QLatin1Char('0')));
}

} // namespace mmpi::canvasformat
