// The small enumerations of MMPE: opcodes of the drawing stream and the pen and
// brush styles it can carry. Their numeric values are the wire values
// (docs/design/protocol.md, "MMPE drawing commands"), so they never change.
#pragma once

#include <mmpi/core/error.h> // first: see the comment in mmpi/wire/itemtype.h

#include <QObject>

namespace mmpi {

// Own meta-object, for the reason given in mmpi/wire/itemtype.h: mmpi already
// has its Q_NAMESPACE in core/error.h.
inline namespace mmpeenums {
Q_NAMESPACE

enum class CanvasOpcode : quint8 {
    // State: sent only when it changes, in effect until changed again.
    SetPen = 0x01,
    SetBrush = 0x02,
    SetFont = 0x03,
    // Primitives: drawn with the current state.
    Line = 0x10,
    Polyline = 0x11,
    Rect = 0x12,       // outline with the pen, never filled
    FilledRect = 0x13, // filled with the brush, no outline
    Ellipse = 0x14,    // pen outline, brush fill
    Polygon = 0x15,    // pen outline, brush fill (odd-even)
    Text = 0x16,       // baseline starts at the point, pen colour
    Image = 0x17,      // a block of pixels at a position
    Clear = 0x20,      // the whole canvas to one colour; a late joiner starts here
    EndFrame = 0x21,   // the last command of every batch, and only there
};
Q_ENUM_NS(CanvasOpcode)

enum class CanvasPenStyle : quint8 {
    NoPen = 0,
    Solid = 1,
    Dash = 2,
    Dot = 3,
    DashDot = 4,
};
Q_ENUM_NS(CanvasPenStyle)

enum class CanvasBrushStyle : quint8 {
    NoBrush = 0,
    Solid = 1,
};
Q_ENUM_NS(CanvasBrushStyle)

} // inline namespace mmpeenums

QString canvasOpcodeName(CanvasOpcode opcode);

} // namespace mmpi
