// A device's part of the logical canvas on a tiled wall: which commands of a
// frame it needs (the primitives whose conservative bounds meet its area, and
// every state change, clear and frame end), so the root can send each device
// its own, smaller stream that still draws its tile exactly as the full one.
#pragma once

#include <mmpi/core/result.h>
#include <mmpi/mmpe/canvascommand.h>

#include <QByteArray>
#include <QRect>

#include <optional>

namespace mmpi {

class CanvasViewport
{
public:
    // The whole canvas: every command passes.
    CanvasViewport() = default;
    // A part of the logical canvas; a null rect means the whole canvas.
    explicit CanvasViewport(const QRect &area);

    QRect area() const { return m_area; }
    bool isWhole() const { return m_area.isNull(); }

    // Where a primitive can change pixels, drawn with `state`, in logical
    // pixels: the pen's whole width and an antialiasing margin included, text
    // estimated generously from the point size. nullopt for commands that
    // are not bounded to a region (state changes, Clear, EndFrame).
    static std::optional<QRect> bounds(const CanvasCommand &command, const CanvasState &state);

    // Whether the device needs this command, drawn with `state`.
    bool needs(const CanvasCommand &command, const CanvasState &state) const;

    // The part of one frame's commands this viewport needs. `state` is the
    // full stream's state before them and is advanced to the state after
    // them. A state change is put in only before a primitive that is kept,
    // or at the end if it differs from what went before, so the receiver's
    // state after the frame is the full stream's. EndFrame is not added.
    QList<CanvasCommand> filter(const QList<CanvasCommand> &commands, CanvasState &state) const;

    // The wire form of a viewport announcement (ParallelCanvas::ViewportTag):
    // empty for the whole canvas, else i16 x, i16 y, u16 width, u16 height.
    QByteArray encode() const;
    // Refuses anything but those two forms, and empty or out-of-range areas.
    static Result<CanvasViewport> decode(QByteArrayView bytes);
    // Checks that an area fits the wire form (null: the whole canvas).
    static Result<void> validate(const QRect &area);

    bool operator==(const CanvasViewport &) const = default;

private:
    QRect m_area;
};

} // namespace mmpi
