#include <mmpi/mmpe/canvasviewport.h>

#include <QtEndian>

#include <limits>

namespace mmpi {

namespace {

// Antialiasing touches at most one pixel beyond a shape's edge; two leave
// room for rounding when a tile is drawn scaled.
constexpr int AntialiasMargin = 2;
// Text is not measured (the root may not have the receiver's fonts): one
// em is taken as 2 logical pixels a point (144 dpi; a headless image has
// 96, where an em is 1.33 pixels a point), each UTF-16 unit at most one em
// wide, with an em of slack on the left and below and two above the
// baseline.
constexpr int PixelsPerPoint = 2;

int penExtent(const CanvasState::Pen &pen)
{
    // Square caps reach w/sqrt(2) past an end in x or y, bevel joins stay
    // inside: the full width covers both. A hairline (0) is one pixel.
    return pen.style == CanvasPenStyle::NoPen ? 0 : qMax<int>(pen.width, 1);
}

QRect pointsBounds(const QList<QPoint> &points)
{
    int left = std::numeric_limits<int>::max(), top = left;
    int right = std::numeric_limits<int>::min(), bottom = right;
    for (QPoint p : points) {
        left = qMin(left, p.x());
        right = qMax(right, p.x());
        top = qMin(top, p.y());
        bottom = qMax(bottom, p.y());
    }
    return QRect(QPoint(left, top), QPoint(right, bottom));
}

// A rect grown by `by` on every side; also for rects of zero width or
// height, which QRect would call empty.
QRect grown(const QRect &r, int by)
{
    return QRect(QPoint(r.left() - by, r.top() - by), QPoint(r.left() + r.width() + by, r.top() + r.height() + by));
}

bool fitsInt16(int v)
{
    return v >= std::numeric_limits<qint16>::min() && v <= std::numeric_limits<qint16>::max();
}

} // namespace

CanvasViewport::CanvasViewport(const QRect &area)
    : m_area(area)
{
}

std::optional<QRect> CanvasViewport::bounds(const CanvasCommand &c, const CanvasState &state)
{
    const int pen = penExtent(state.pen) + AntialiasMargin;
    switch (c.opcode) {
    case CanvasOpcode::Line:
    case CanvasOpcode::Polyline:
    case CanvasOpcode::Polygon: {
        if (c.points.isEmpty())
            return std::nullopt;
        const QRect r = pointsBounds(c.points);
        return QRect(QPoint(r.left() - pen, r.top() - pen), QPoint(r.right() + pen, r.bottom() + pen));
    }
    case CanvasOpcode::Rect:
    case CanvasOpcode::Ellipse:
        return grown(c.rect, pen);
    case CanvasOpcode::FilledRect:
        return grown(c.rect, AntialiasMargin);
    case CanvasOpcode::Image:
        return grown(QRect(c.position, c.image.size()), AntialiasMargin);
    case CanvasOpcode::Text: {
        const int em = PixelsPerPoint * qMax<int>(state.font.pointSize, 1);
        const qint64 width = qint64(em) * (c.text.size() + 1);
        const int right = int(qMin<qint64>(c.position.x() + width, std::numeric_limits<int>::max() / 2));
        return QRect(QPoint(c.position.x() - em, c.position.y() - 2 * em), QPoint(right, c.position.y() + em));
    }
    case CanvasOpcode::SetPen:
    case CanvasOpcode::SetBrush:
    case CanvasOpcode::SetFont:
    case CanvasOpcode::Clear:
    case CanvasOpcode::EndFrame:
        return std::nullopt;
    }
    return std::nullopt;
}

bool CanvasViewport::needs(const CanvasCommand &c, const CanvasState &state) const
{
    if (isWhole())
        return true;
    const auto box = bounds(c, state);
    return !box || box->intersects(m_area);
}

QList<CanvasCommand> CanvasViewport::filter(const QList<CanvasCommand> &commands, CanvasState &state) const
{
    QList<CanvasCommand> out;
    CanvasState sent = state; // what the receiver has
    auto flush = [&] {
        if (state.pen != sent.pen)
            out << CanvasCommand::setPen(state.pen);
        if (state.brush != sent.brush)
            out << CanvasCommand::setBrush(state.brush);
        if (state.font != sent.font)
            out << CanvasCommand::setFont(state.font);
        sent = state;
    };
    for (const CanvasCommand &c : commands) {
        switch (c.opcode) {
        case CanvasOpcode::SetPen: state.pen = c.pen; break;
        case CanvasOpcode::SetBrush: state.brush = c.brush; break;
        case CanvasOpcode::SetFont: state.font = c.font; break;
        case CanvasOpcode::EndFrame: break;
        case CanvasOpcode::Clear: out << c; break;
        default:
            if (needs(c, state)) {
                flush();
                out << c;
            }
            break;
        }
    }
    flush();
    return out;
}

QByteArray CanvasViewport::encode() const
{
    if (isWhole())
        return {};
    QByteArray bytes(8, Qt::Uninitialized);
    qToBigEndian<qint16>(qint16(m_area.x()), bytes.data());
    qToBigEndian<qint16>(qint16(m_area.y()), bytes.data() + 2);
    qToBigEndian<quint16>(quint16(m_area.width()), bytes.data() + 4);
    qToBigEndian<quint16>(quint16(m_area.height()), bytes.data() + 6);
    return bytes;
}

Result<void> CanvasViewport::validate(const QRect &area)
{
    if (area.isNull())
        return success();
    if (area.width() < 1 || area.height() < 1 || area.width() > 65535 || area.height() > 65535
        || !fitsInt16(area.x()) || !fitsInt16(area.y()))
        return Error(ErrorCode::ProtocolViolation,
                     QStringLiteral("viewport (%1, %2) %3x%4 must be 1 to 65535 wide and high at a 16-bit "
                                    "origin")
                         .arg(area.x()).arg(area.y()).arg(area.width()).arg(area.height()));
    return success();
}

Result<CanvasViewport> CanvasViewport::decode(QByteArrayView bytes)
{
    if (bytes.isEmpty())
        return CanvasViewport();
    if (bytes.size() != 8)
        return Error(ErrorCode::CountMismatch,
                     QStringLiteral("a viewport is 0 or 8 bytes, not %1").arg(bytes.size()));
    const QRect area(qFromBigEndian<qint16>(bytes.data()), qFromBigEndian<qint16>(bytes.data() + 2),
                     qFromBigEndian<quint16>(bytes.data() + 4), qFromBigEndian<quint16>(bytes.data() + 6));
    if (area.width() < 1 || area.height() < 1)
        return Error(ErrorCode::ProtocolViolation,
                     QStringLiteral("viewport of %1x%2 has no pixels").arg(area.width()).arg(area.height()));
    return CanvasViewport(area);
}

} // namespace mmpi
